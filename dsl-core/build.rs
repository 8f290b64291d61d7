//! Fingerprints the language front end's sources (`SOURCE_FINGERPRINT`): lowering changes
//! the IR, and so the generated code, without changing the version number, and the code
//! generator's JIT cache key must tell such builds apart. Only this package's files are
//! read, so the published crate builds on its own.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src");
    let mut files = Vec::new();
    collect(Path::new("src"), &mut files);
    files.sort();
    println!(
        "cargo:rustc-env=CUDAJIT_CORE_SOURCE_FINGERPRINT={:016x}",
        fnv1a(&files)
    );
}

/// FNV-1a over each file's path and contents: no dependencies, stable, enough to tell
/// builds apart. (A build script cannot share code with another package's build script
/// without a crate of its own, hence the copy in `codegen/build.rs`.)
fn fnv1a(files: &[PathBuf]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in files {
        let bytes = std::fs::read(file).unwrap_or_default();
        for byte in file.to_string_lossy().bytes().chain(bytes) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x100_0000_01b3);
        }
    }
    hash
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
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
