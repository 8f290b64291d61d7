//! Helpers shared by the integration tests: the header cache and skipping rules.
#![allow(dead_code)]

use std::path::PathBuf;

/// `CUDAJIT_NCCL_HEADERS_CACHE`, else `~/.cache/cudajit-tools/nccl` (fetch-wheels.sh).
pub fn cache_root() -> PathBuf {
    std::env::var_os("CUDAJIT_NCCL_HEADERS_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/cudajit-tools/nccl")
        })
}

/// The cached release directory `<root>/<version>/nvidia/nccl` if complete.
pub fn release_dir(version: &str) -> Option<PathBuf> {
    let root = cache_root().join(version);
    root.join(".complete")
        .is_file()
        .then(|| root.join("nvidia/nccl"))
}

/// Whether a missing prerequisite must fail the test instead of skipping it.
pub fn required() -> bool {
    std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").is_ok_and(|v| v == "1")
}

/// Skips (prints why and returns `true`) or, under `CUDAJIT_REQUIRE_TOOLCHAIN=1`, fails.
pub fn skip(reason: &str) -> bool {
    if required() {
        panic!("CUDAJIT_REQUIRE_TOOLCHAIN=1 but {reason}");
    }
    eprintln!("SKIPPED: {reason}. Run nccl-device/scripts/fetch-wheels.sh --cuda-headers (and scripts/test.sh for nvcc).");
    true
}

/// The compiler tools' environment: the process's, with `CUDAJIT_TOOLS_DIR` defaulting to
/// where scripts/test.sh installs NVIDIA's compiler wheels.
pub fn tools_env() -> cudajit_codegen::toolchain::SearchEnv {
    let mut vars: Vec<(String, std::ffi::OsString)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .collect();
    if !vars
        .iter()
        .any(|(k, v)| k == "CUDAJIT_TOOLS_DIR" && !v.is_empty())
    {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let default = home.join(".cache/cudajit-tools/cu13.0.88/site-packages");
        vars.push(("CUDAJIT_TOOLS_DIR".into(), default.into()));
    }
    cudajit_codegen::toolchain::SearchEnv::from_pairs(vars)
}
pub mod probe;
