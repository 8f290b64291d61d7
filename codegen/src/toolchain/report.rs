//! Human-readable summaries of a [`Toolchain`]: where each component is
//! (for `cudajit doctor`) and which versions the loaded libraries report.

use std::fmt;

use super::discover::{Component, Located};
use super::error::Result;
use super::Toolchain;

/// Versions reported by the loaded libraries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolchainVersions {
    /// `nvvmVersion`: libNVVM (major, minor).
    pub nvvm: (i32, i32),
    /// `nvvmIRVersion`: (IR major, IR minor, debug major, debug minor).
    pub nvvm_ir: (i32, i32, i32, i32),
    /// `nvJitLinkVersion`: (major, minor).
    pub nvjitlink: (u32, u32),
}

impl fmt::Display for ToolchainVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b, c, d) = self.nvvm_ir;
        write!(
            f,
            "libNVVM {}.{} (NVVM IR {a}.{b}, debug info {c}.{d}), nvJitLink {}.{}",
            self.nvvm.0, self.nvvm.1, self.nvjitlink.0, self.nvjitlink.1
        )
    }
}

/// Where every component is, one per line; see [`Toolchain::report`].
/// Locates NVRTC and nvcc if not done yet, but loads nothing.
#[derive(Debug)]
pub struct ToolchainReport<'t> {
    pub(crate) toolchain: &'t Toolchain,
}

impl fmt::Display for ToolchainReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.toolchain;
        writeln!(f, "cudajit toolchain:")?;
        for component in Component::ALL {
            let located: Result<&Located> = match component {
                Component::Nvvm => Ok(t.nvvm_location()),
                Component::Libdevice => Ok(t.libdevice_location()),
                Component::NvJitLink => Ok(t.nvjitlink_location()),
                Component::Nvrtc => t.nvrtc_location(),
                Component::Nvcc => t.nvcc_location(),
            };
            match located {
                Ok(l) => writeln!(
                    f,
                    "  {:<10} {}  [{}]",
                    component.to_string(),
                    l.path.display(),
                    l.origin
                )?,
                Err(e) => {
                    writeln!(f, "  {:<10} NOT AVAILABLE", component.to_string())?;
                    for line in e.to_string().lines() {
                        writeln!(f, "      {line}")?;
                    }
                }
            }
        }
        Ok(())
    }
}
