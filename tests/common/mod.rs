//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod bridge_2_28;
pub mod cases;
#[cfg(feature = "nccl")]
pub mod gpus;
pub mod iteration;
pub mod kernels;
pub mod language;
pub mod ltoir_2_32;
pub mod methods;
pub mod nested_arrays;
#[cfg(feature = "nccl")]
pub mod sim;
pub mod struct_operators;
pub mod views_and_closures;

use std::path::PathBuf;

use cudajit::codegen::toolchain::Toolchain;

/// The folder of the NCCL wheels nccl-device/scripts/fetch-wheels.sh caches:
/// `CUDAJIT_NCCL_HEADERS_CACHE`, else `~/.cache/cudajit-tools/nccl`.
pub fn nccl_wheels() -> PathBuf {
    std::env::var_os("CUDAJIT_NCCL_HEADERS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/cudajit-tools/nccl")
        })
}

/// `None` after printing that the test is skipped for want of `missing`; with
/// `CUDAJIT_REQUIRE_TOOLCHAIN=1` (set by `scripts/test.sh`) a panic instead.
pub fn skipped_without<T>(missing: &str) -> Option<T> {
    if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") {
        panic!("CUDAJIT_REQUIRE_TOOLCHAIN=1 but {missing}");
    }
    eprintln!("skipped: {missing}");
    None
}

/// The NVIDIA toolchain, or `None` after printing why the test is skipped. With
/// `CUDAJIT_REQUIRE_TOOLCHAIN=1` (set by `scripts/test.sh`) a missing toolchain fails.
pub fn toolchain_or_skip() -> Option<&'static Toolchain> {
    match Toolchain::global() {
        Ok(toolchain) => Some(toolchain),
        Err(error) if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") => {
            panic!("the NVIDIA toolchain is required (CUDAJIT_REQUIRE_TOOLCHAIN=1): {error}")
        }
        Err(error) => {
            eprintln!("skipped: no NVIDIA toolchain ({error}); run scripts/test.sh to install it");
            None
        }
    }
}

/// The linked PTX of `kernel` for sm_90 (bounds checks off, as a release launch), or
/// `None` after printing why the test is skipped: the PTX shape tests (no local memory, no
/// calls left) need only the NVIDIA toolchain, not a GPU.
pub fn sm90_ptx_or_skip(kernel: &'static cudajit::core::CapturedKernel) -> Option<String> {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    toolchain_or_skip()?;
    let options = CompileOptions {
        bounds_checks: false,
        ..CompileOptions::default()
    };
    let ptx = linked_ptx(
        kernel,
        &cudajit::Specialization::default(),
        cudajit::Arch::SM_90,
        &options,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
    Some(ptx)
}

/// A GPU context, or `None` after printing why the test is skipped.
/// Asserts that `kernel`'s sm_90 PTX has no local memory and no call left (its device
/// functions inlined); skips where the toolchain is missing, as [`sm90_ptx_or_skip`] does.
#[allow(dead_code)]
pub fn assert_inlined_without_local_memory(kernel: &'static cudajit::core::CapturedKernel) {
    let Some(ptx) = sm90_ptx_or_skip(kernel) else {
        return;
    };
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call.uni"), "a call left:\n{ptx}");
}

/// Runs `check` on the default stream of the GPU, with FMA contraction off (so results
/// compare bit for bit with the host's), or skips where there is no GPU.
#[allow(dead_code)]
pub fn on_gpu_without_fma(check: impl FnOnce(&cudajit::Stream)) {
    let Some(context) = gpu_or_skip() else {
        return;
    };
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&cudajit::Stream::from_cuda(context.default_stream()));
}

pub fn gpu_or_skip() -> Option<std::sync::Arc<cudajit::CudaContext>> {
    match cudajit::default_context() {
        Ok(context) => Some(context),
        Err(error) => {
            eprintln!("skipped: {error}");
            None
        }
    }
}
