//! Fingerprints the sources of the code generator and of the language front end
//! (`../dsl-core`), so JIT cache entries made by one build are never served to another (a
//! development build changes the generated code without changing the version number).

use std::path::Path;

fn main() {
    let mut files = Vec::new();
    for dir in ["src", "../dsl-core/src"] {
        println!("cargo:rerun-if-changed={dir}");
        collect(Path::new(dir), &mut files);
    }
    files.sort();
    // FNV-1a: no dependencies, stable, enough to tell builds apart.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_default();
        for byte in file.to_string_lossy().bytes().chain(bytes) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=CUDAJIT_SOURCE_FINGERPRINT={hash:016x}");
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
