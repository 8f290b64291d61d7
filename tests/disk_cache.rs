//! The disk cache across processes: a second process reuses the cubin without calling
//! libNVVM or nvJitLink (not even loading them), and a damaged entry is recompiled.

mod common;

use std::path::Path;
use std::process::Command;

use common::kernels::saxpy;
use cudajit::codegen::toolchain::invocation_counts;
use cudajit::Arch;

const CHILD_DIR: &str = "CUDAJIT_TEST_CHILD_CACHE_DIR";

/// Run in a child process by `second_process_reuses_the_cubin`: compiles saxpy for sm_90
/// and prints where the cubin came from and how often the compilers ran.
#[test]
#[ignore = "run as a child process by second_process_reuses_the_cubin"]
fn child_compile() {
    assert!(
        std::env::var_os(CHILD_DIR).is_some(),
        "run by the parent test only"
    );
    let compiled = saxpy::KERNEL
        .compile_for_arch(Arch::SM_90)
        .expect("compiling saxpy");
    let counts = invocation_counts();
    println!(
        "RESULT origin={:?} nvvm={} link={} loaded={} file={}",
        compiled.report.origin,
        counts.nvvm_compiles,
        counts.nvjitlink_links,
        counts.libraries_loaded,
        compiled
            .report
            .cache_file
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    );
}

fn run_child(cache_dir: &Path) -> String {
    let output = Command::new(std::env::current_exe().expect("test binary path"))
        .args([
            "--ignored",
            "--exact",
            "child_compile",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, cache_dir)
        .env("CUDAJIT_CACHE_DIR", cache_dir)
        .env_remove("CUDAJIT_CACHE")
        .output()
        .expect("running the child test");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .find_map(|line| line.split_once("RESULT ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no RESULT line in:\n{stdout}"))
        .to_owned()
}

fn field<'a>(result: &'a str, name: &str) -> &'a str {
    result
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {result}"))
}

#[test]
fn second_process_reuses_the_cubin() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("cudajit-disk-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    let first = run_child(&dir);
    assert_eq!(field(&first, "origin"), "Compiled", "{first}");
    assert_eq!(field(&first, "nvvm"), "1", "{first}");
    assert_eq!(field(&first, "link"), "1", "{first}");

    let second = run_child(&dir);
    assert_eq!(field(&second, "origin"), "Disk", "{second}");
    assert_eq!(field(&second, "nvvm"), "0", "{second}");
    assert_eq!(field(&second, "link"), "0", "{second}");
    assert_eq!(
        field(&second, "loaded"),
        "0",
        "no compiler library loaded: {second}"
    );

    // A damaged entry is detected, removed and recompiled, never loaded.
    let entry = field(&second, "file").to_owned();
    let mut bytes = std::fs::read(&entry).expect("the cache entry");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&entry, &bytes).expect("damaging the entry");
    let third = run_child(&dir);
    assert_eq!(field(&third, "origin"), "Compiled", "{third}");

    let _ = std::fs::remove_dir_all(&dir);
}
