//! The macros work when `cudajit` is renamed in `Cargo.toml` or re-exported: the crate in
//! `tests/renamed_dependency/` depends on it as `gpu`, names it with `crate = gpu` and
//! `crate = crate::engine::cudajit`, and runs its kernels on the CPU simulator. A path the
//! macros generated without the argument (`::cudajit::..`) would not resolve there.

use std::path::Path;
use std::process::Command;

#[test]
fn kernels_compile_and_run_with_cudajit_renamed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = root.join("tests/renamed_dependency/Cargo.toml");
    if !manifest.exists() {
        // Cargo never packages a nested crate: from the published `cudajit` package this
        // test has nothing to build (in the repository the crate is always there).
        eprintln!("SKIPPED: {} is not in this package", manifest.display());
        return;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    // Beside trybuild's projects, apart from the build directory this test runs from.
    let target = root.join("target/tests/renamed_dependency");
    let output = Command::new(cargo)
        .args(["run", "--quiet", "--offline", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the renamed-dependency crate failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("renamed dependency: ok"), "{stdout}");
}
