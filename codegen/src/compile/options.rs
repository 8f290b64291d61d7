//! The options that change the generated code, and how each compiler is told them.

use cudajit_core::{EnvVar, EnvVarError};

use crate::nvvm;
use crate::target::Arch;

/// Turns bounds checks on (`1`) or off (`0`) whatever the build.
pub const BOUNDS_CHECKS_VARIABLE: &str = "CUDAJIT_BOUNDS_CHECKS";
/// `0` turns off FMA contraction.
pub const FMA_VARIABLE: &str = "CUDAJIT_FMA";

/// Options that change the generated code; all of them are part of the cache key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// libNVVM optimisation level, 0 to 3.
    pub opt_level: u8,
    /// Contract `a * b + c` into fused multiply-adds, as nvcc does by default (`-fmad=true`).
    pub fma: bool,
    /// Check every index against its slice's or array's length (on by default in debug
    /// builds of the kernel's crate; `CUDAJIT_BOUNDS_CHECKS=0|1` overrides).
    pub bounds_checks: bool,
    /// Check `debug_assert!`s (on in debug builds of the kernel's crate).
    pub debug_assertions: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            opt_level: 3,
            fma: true,
            bounds_checks: false,
            debug_assertions: false,
        }
    }
}

impl CompileOptions {
    /// The options of a kernel whose crate was built with `debug_assertions` as given:
    /// checks follow the build, unless `CUDAJIT_BOUNDS_CHECKS` says otherwise;
    /// `CUDAJIT_FMA=0` turns off the contraction of `a * b + c` into FMAs (so float
    /// results are bit-identical to the CPU simulator's, which never contracts). Either
    /// variable set to something other than an on/off word is an error.
    pub fn for_build(debug_assertions: bool) -> Result<Self, EnvVarError> {
        Ok(CompileOptions {
            bounds_checks: EnvVar::process(BOUNDS_CHECKS_VARIABLE)
                .flag()?
                .unwrap_or(debug_assertions),
            debug_assertions,
            fma: EnvVar::process(FMA_VARIABLE).flag()?.unwrap_or(true),
            ..CompileOptions::default()
        })
    }

    /// The options of the NVVM IR writer.
    pub fn write_options(&self, file: &str) -> nvvm::WriteOptions {
        nvvm::WriteOptions {
            bounds_checks: self.bounds_checks,
            debug_assertions: self.debug_assertions,
            file: file.to_owned(),
        }
    }

    /// libNVVM's options for `arch`.
    pub fn nvvm_options(&self, arch: Arch) -> Vec<String> {
        vec![
            format!("-arch={}", arch.compute_name()),
            format!("-opt={}", self.opt_level.min(3)),
            format!("-fma={}", u8::from(self.fma)),
            "-gen-lto".to_owned(),
        ]
    }

    /// nvJitLink's options for `arch`.
    pub fn link_options(&self, arch: Arch) -> Vec<String> {
        let mut options = vec![format!("-arch={}", arch.sm_name()), "-lto".to_owned()];
        // With `-lto`, nvJitLink generates the code and contracts `a * b + c` on its own
        // unless told not to: libNVVM's `-fma=0` alone does not stop it.
        if !self.fma {
            options.push("-fma=0".to_owned());
        }
        options
    }
}
