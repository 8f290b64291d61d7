//! The first-ever toolchain identity: what a program's first compile on an installation
//! spends hashing libNVVM, libdevice and nvJitLink, in the profile this is built in.
//!
//! Times `toolchain_fields` with an empty memo directory (as on a new machine), then the
//! same call again with the memo written (as every later process), and for comparison
//! SHA-256 (`sha2`, the previous hash) and BLAKE3 over the same files. Run in both
//! profiles (see `docs/performance.md#first-ever-toolchain-identity`):
//!
//! ```sh
//! cargo run -p cudajit-codegen --example identity_bench
//! cargo run -p cudajit-codegen --example identity_bench --release
//! ```

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use cudajit_codegen::cache::compiler_identity::{toolchain_fields, DigestMemo};
use cudajit_codegen::toolchain::{SearchEnv, Toolchain};
use sha2::{Digest, Sha256};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let toolchain = Toolchain::discover(&SearchEnv::from_process())?;
    let files = [
        toolchain.nvvm_location().path.clone(),
        toolchain.libdevice_location().path.clone(),
        toolchain.nvjitlink_location().path.clone(),
    ];
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    println!(
        "identity_bench ({profile}): {} files, {:.1} MB",
        files.len(),
        bytes as f64 / 1e6
    );
    let dir = std::env::temp_dir().join(format!("cudajit-identity-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;

    // Read every file once so that the page cache holds them for every measurement.
    for file in &files {
        std::fs::read(file)?;
    }
    let started = Instant::now();
    let fields = toolchain_fields(&toolchain, Some(&dir));
    let first = started.elapsed();
    for (tag, _, label) in fields.iter() {
        println!("  {tag:<10} {label}");
    }
    println!(
        "first-ever identity (empty memo dir): {:.1} ms",
        first.as_secs_f64() * 1e3
    );
    let started = Instant::now();
    let memo = DigestMemo::in_dir(&dir);
    for file in &files {
        memo.digest(file, None)?;
    }
    println!(
        "later process (memo present, one stat per file): {:.3} ms",
        started.elapsed().as_secs_f64() * 1e3
    );

    let time = |name: &str, hash: &dyn Fn(&Path) -> std::io::Result<()>| {
        let started = Instant::now();
        for file in &files {
            hash(file).expect("hash");
        }
        let s = started.elapsed().as_secs_f64();
        println!(
            "  {name:<8} {:>8.1} ms  {:>7.0} MB/s",
            s * 1e3,
            bytes as f64 / 1e6 / s
        );
    };
    println!("hashing the three files ({profile}):");
    time("sha2", &|p| sha256_file(p).map(drop));
    time("blake3", &|p| {
        cudajit_codegen::cache::compiler_identity::hash_file(p).map(drop)
    });
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn sha256_file(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher.finalize().into())
}
