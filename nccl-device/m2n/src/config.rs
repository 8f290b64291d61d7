//! The grid the reshard kernels run on, and what the device communicator needs for it.

use super::error::M2nError;
use cudajit::LaunchConfig;

/// The most threads per CTA.
pub const MAX_THREADS: u32 = 1024;

/// The grid of both reshard kernels: `ctas` CTAs (each with an LSA barrier) of `threads`
/// threads; every warp moves one run at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct M2nConfig {
    /// CTAs, each with an LSA barrier (barrier index = CTA): the device communicator needs
    /// this many ([`M2nConfig::requirements`]).
    pub ctas: u32,
    /// Threads per CTA: a multiple of 32, at most 1024.
    pub threads: u32,
}

impl Default for M2nConfig {
    /// 132 CTAs (an H200's SMs) of 512 threads.
    fn default() -> Self {
        M2nConfig {
            ctas: 132,
            threads: 512,
        }
    }
}

impl M2nConfig {
    /// The grid of every kernel.
    pub fn launch_config(&self) -> LaunchConfig {
        LaunchConfig::new(self.ctas, self.threads)
    }

    /// What the device communicator needs: an LSA barrier per CTA.
    pub fn requirements(&self) -> cudajit_nccl::DevCommRequirements {
        cudajit_nccl_device::requirements_for(&self.launch_config())
    }

    pub(crate) fn check(&self) -> Result<(), M2nError> {
        if self.ctas == 0 {
            return Err(M2nError::mismatch("ctas", 0, "it must be at least 1"));
        }
        if self.threads == 0 || !self.threads.is_multiple_of(32) || self.threads > MAX_THREADS {
            return Err(M2nError::mismatch(
                "threads",
                self.threads as usize,
                format!("it must be a multiple of 32 from 32 to {MAX_THREADS} (the kernels work in whole warps)"),
            ));
        }
        Ok(())
    }
}
