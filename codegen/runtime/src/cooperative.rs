//! What a cooperative launch needs of the device: support for `cuLaunchCooperativeKernel`
//! and the SM count, queried once when a kernel is loaded, and the occupancy query that
//! says how many blocks of a configuration fit on one SM. The driver refuses a cooperative
//! grid that does not fit with a bare `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`; checking
//! first lets the error name the largest grid that does.

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction, DriverError};

use crate::{LaunchConfig, LaunchConfigError};

/// The device's side of the co-residency check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CooperativeDevice {
    pub multiprocessors: u32,
    supported: bool,
}

impl CooperativeDevice {
    pub fn query(context: &CudaContext) -> Result<Self, DriverError> {
        let multiprocessors =
            context.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let supported =
            context.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)?;
        Ok(CooperativeDevice {
            multiprocessors: multiprocessors.max(0) as u32,
            supported: supported != 0,
        })
    }

    /// How many blocks of `config` fit on one SM at once (the driver's occupancy query,
    /// which counts the kernel's registers and static shared memory and the launch's
    /// dynamic shared memory), or why no cooperative launch can run.
    pub fn blocks_per_sm(
        &self,
        function: &CudaFunction,
        config: &LaunchConfig,
    ) -> Result<Result<u32, LaunchConfigError>, DriverError> {
        if !self.supported {
            return Ok(Err(LaunchConfigError::CooperativeUnsupported));
        }
        let threads = config.block.x * config.block.y * config.block.z;
        let per_sm = function.occupancy_max_active_blocks_per_multiprocessor(
            threads,
            config.shared_mem_bytes as usize,
            None,
        )?;
        Ok(Ok(per_sm))
    }
}
