//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod cases;
pub mod iteration;
pub mod kernels;
pub mod language;
pub mod methods;
pub mod nested_arrays;
pub mod struct_operators;
pub mod views_and_closures;

use cudajit::codegen::toolchain::Toolchain;

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

/// A GPU context, or `None` after printing why the test is skipped.
pub fn gpu_or_skip() -> Option<std::sync::Arc<cudajit::CudaContext>> {
    match cudajit::default_context() {
        Ok(context) => Some(context),
        Err(error) => {
            eprintln!("skipped: {error}");
            None
        }
    }
}
