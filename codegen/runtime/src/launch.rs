//! Launch configurations and their checks, made before the driver sees them.

use cudajit_core::device::Dim3;

/// Grid and block dimensions and dynamic shared memory of a launch.
///
/// A launch checks its configuration against CUDA's limits and the kernel's before the
/// driver sees it ([`LaunchConfig::check`]); cudarc's `LaunchConfig` converts into this one,
/// so launchers take either.
///
/// ```
/// use cudajit::LaunchConfig;
///
/// // A 1024 × 1024 image in 16 × 16 tiles, with a tile of f32 in dynamic shared memory.
/// let config = LaunchConfig::new((64, 64), (16, 16)).with_shared_mem(16 * 16 * 4);
/// assert_eq!((config.grid.x, config.grid.y, config.grid.z), (64, 64, 1));
/// assert_eq!(config.shared_mem_bytes, 1024);
///
/// let cudarc_config = cudajit::cudarc::driver::LaunchConfig::for_num_elems(1000);
/// let from_cudarc = LaunchConfig::from(cudarc_config);
/// assert_eq!(from_cudarc.block.x * from_cudarc.grid.x, 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads per block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
    /// A cooperative launch (`cuLaunchCooperativeKernel`), which kernels calling
    /// `grid_sync()` need: see [`LaunchConfig::cooperative`].
    pub cooperative: bool,
    /// Thread-block clusters (sm_90): blocks per cluster along each axis, see
    /// [`LaunchConfig::with_cluster`]. `None` launches without clusters.
    pub cluster: Option<Dim3>,
}

/// The most blocks of a cluster CUDA guarantees to launch (the portable cluster size).
pub const MAX_CLUSTER_BLOCKS: u32 = 8;

/// Threads per block [`LaunchConfig::for_elements`] uses.
pub const DEFAULT_BLOCK_SIZE: u32 = 256;

impl LaunchConfig {
    /// A configuration of `grid` blocks of `block` threads, without dynamic shared memory.
    ///
    /// ```
    /// # use cudajit::LaunchConfig;
    /// let config = LaunchConfig::new((64, 64), (16, 16));
    /// assert_eq!(config.block.y, 16);
    /// ```
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
            cooperative: false,
            cluster: None,
        }
    }

    /// One thread per element in blocks of 256: the configuration of a kernel that handles
    /// element `global_index()`.
    ///
    /// ```
    /// # use cudajit::LaunchConfig;
    /// let config = LaunchConfig::for_elements(1000);
    /// assert_eq!((config.grid.x, config.block.x), (4, 256));
    /// ```
    pub fn for_elements(elements: usize) -> Self {
        let blocks = elements.div_ceil(DEFAULT_BLOCK_SIZE as usize).max(1);
        LaunchConfig::new(
            u32::try_from(blocks).unwrap_or(u32::MAX),
            DEFAULT_BLOCK_SIZE,
        )
    }

    /// The same configuration with `bytes` of dynamic shared memory per block (what a
    /// kernel's `dynamic_shared::<T>()` sees).
    pub fn with_shared_mem(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }

    /// The same configuration launched cooperatively (`cuLaunchCooperativeKernel`): the
    /// driver runs every block of the grid at once, so the kernel may call `grid_sync()`.
    /// The launch first checks that the whole grid fits on the GPU at once (the kernel's
    /// occupancy at this block size and shared memory, times the SMs) and otherwise fails
    /// with [`LaunchConfigError::NotCoResident`], naming the largest grid that fits.
    ///
    /// ```
    /// # use cudajit::LaunchConfig;
    /// let config = LaunchConfig::new(132, 256).cooperative();
    /// assert!(config.cooperative);
    /// ```
    pub fn cooperative(mut self) -> Self {
        self.cooperative = true;
        self
    }

    /// The same configuration launched in thread-block clusters of `cluster` blocks
    /// (sm_90, `cuLaunchKernelEx` with the cluster-dimension attribute): the blocks of a
    /// cluster run at once on neighbouring SMs and share `barrier.cluster`, each other's
    /// shared memory and TMA multicasts (`cudajit::tensor::cluster`). Each grid dimension
    /// must be a multiple of the cluster's, and a cluster holds at most 8 blocks (the
    /// portable size), which the launch checks. The CPU simulator runs cluster launches
    /// too, a cluster's blocks together (docs/simulator.md).
    ///
    /// ```
    /// # use cudajit::{LaunchConfig, LaunchConfigError};
    /// let config = LaunchConfig::new((64, 32), 384).with_cluster((2, 1, 1));
    /// assert_eq!(config.check(1024, 0), Ok(()));
    /// let uneven = LaunchConfig::new((63, 32), 384).with_cluster((2, 1, 1));
    /// assert!(matches!(uneven.check(1024, 0), Err(LaunchConfigError::ClusterDoesNotDivideGrid { .. })));
    /// ```
    pub fn with_cluster(mut self, cluster: impl Into<Dim3>) -> Self {
        self.cluster = Some(cluster.into());
        self
    }

    /// Checks the configuration against CUDA's limits and the kernel's: at most
    /// `max_threads` threads per block and `max_shared` bytes of dynamic shared memory.
    /// Launches call it with the loaded kernel's limits; the error says which limit broke.
    ///
    /// ```
    /// use cudajit::{LaunchConfig, LaunchConfigError};
    ///
    /// assert_eq!(LaunchConfig::new(8, 256).check(1024, 48 * 1024), Ok(()));
    /// let too_many = LaunchConfig::new(1, (32, 64)).check(1024, 0);
    /// assert_eq!(too_many, Err(LaunchConfigError::TooManyThreads { threads: 2048, limit: 1024 }));
    /// // "2048 threads per block, over this kernel's limit of 1024"
    /// println!("{}", too_many.unwrap_err());
    /// ```
    pub fn check(&self, max_threads: u32, max_shared: u32) -> Result<(), LaunchConfigError> {
        let axes = [
            ("x", self.grid.x, self.block.x, i32::MAX as u32, 1024),
            ("y", self.grid.y, self.block.y, 65535, 1024),
            ("z", self.grid.z, self.block.z, 65535, 64),
        ];
        for (axis, grid, block, grid_limit, block_limit) in axes {
            if grid == 0 || block == 0 {
                return Err(LaunchConfigError::ZeroDimension {
                    what: if grid == 0 { "grid" } else { "block" },
                    axis,
                });
            }
            if grid > grid_limit {
                return Err(LaunchConfigError::GridTooLarge {
                    axis,
                    value: grid,
                    limit: grid_limit,
                });
            }
            if block > block_limit {
                return Err(LaunchConfigError::BlockDimensionTooLarge {
                    axis,
                    value: block,
                    limit: block_limit,
                });
            }
        }
        let threads = u64::from(self.block.x) * u64::from(self.block.y) * u64::from(self.block.z);
        if threads > u64::from(max_threads) {
            return Err(LaunchConfigError::TooManyThreads {
                threads,
                limit: max_threads,
            });
        }
        if self.shared_mem_bytes > max_shared {
            return Err(LaunchConfigError::SharedMemoryTooLarge {
                requested: self.shared_mem_bytes,
                limit: max_shared,
            });
        }
        if let Some(cluster) = self.cluster {
            self.check_cluster(cluster)?;
        }
        Ok(())
    }

    fn check_cluster(&self, cluster: Dim3) -> Result<(), LaunchConfigError> {
        if self.cooperative {
            return Err(LaunchConfigError::ClusterAndCooperative);
        }
        let axes = [
            ("x", self.grid.x, cluster.x),
            ("y", self.grid.y, cluster.y),
            ("z", self.grid.z, cluster.z),
        ];
        for (axis, grid, blocks) in axes {
            if blocks == 0 || grid % blocks != 0 {
                return Err(LaunchConfigError::ClusterDoesNotDivideGrid {
                    axis,
                    grid,
                    cluster: blocks,
                });
            }
        }
        let blocks = u64::from(cluster.x) * u64::from(cluster.y) * u64::from(cluster.z);
        if blocks > u64::from(MAX_CLUSTER_BLOCKS) {
            return Err(LaunchConfigError::ClusterTooLarge {
                blocks,
                limit: MAX_CLUSTER_BLOCKS,
            });
        }
        Ok(())
    }
}

impl From<cudarc::driver::LaunchConfig> for LaunchConfig {
    fn from(config: cudarc::driver::LaunchConfig) -> Self {
        LaunchConfig {
            grid: config.grid_dim.into(),
            block: config.block_dim.into(),
            shared_mem_bytes: config.shared_mem_bytes,
            cooperative: false,
            cluster: None,
        }
    }
}

/// A launch configuration that cannot run; the message says which limit it breaks.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum LaunchConfigError {
    #[error("the {what} dimension {axis} is 0; every dimension must be at least 1")]
    ZeroDimension {
        what: &'static str,
        axis: &'static str,
    },
    #[error("grid dimension {axis} is {value}, over CUDA's limit of {limit}; use fewer, larger blocks or a grid-stride loop")]
    GridTooLarge {
        axis: &'static str,
        value: u32,
        limit: u32,
    },
    #[error("block dimension {axis} is {value}, over CUDA's limit of {limit}")]
    BlockDimensionTooLarge {
        axis: &'static str,
        value: u32,
        limit: u32,
    },
    #[error("{threads} threads per block, over this kernel's limit of {limit}")]
    TooManyThreads { threads: u64, limit: u32 },
    #[error("{requested} bytes of dynamic shared memory per block, over the device's limit of {limit} for this kernel")]
    SharedMemoryTooLarge { requested: u32, limit: u32 },
    #[error("a grid of {grid} blocks along {axis} is not a multiple of the cluster's {cluster}: make the grid a whole number of clusters")]
    ClusterDoesNotDivideGrid {
        axis: &'static str,
        grid: u32,
        cluster: u32,
    },
    #[error("a cluster of {blocks} blocks, over the portable limit of {limit}")]
    ClusterTooLarge { blocks: u64, limit: u32 },
    #[error(
        "a launch is either cooperative or in clusters, not both (CUDA has no launch that is both)"
    )]
    ClusterAndCooperative,
    #[error("a cooperative launch of {blocks} blocks, but at most {max_blocks} blocks of this size fit on the GPU at once ({per_sm} per SM × {sms} SMs at this block size and shared memory); launch at most {max_blocks} blocks and loop over the data with a grid-stride loop")]
    NotCoResident {
        blocks: u64,
        max_blocks: u64,
        per_sm: u32,
        sms: u32,
    },
    #[error("the GPU does not support cooperative launches (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0), which grid_sync() needs")]
    CooperativeUnsupported,
    #[error("the kernel calls grid_sync(), which needs a cooperative launch: launch it with `LaunchConfig::new(grid, block).cooperative()` (every block resident at once)")]
    NotCooperative,
}

impl LaunchConfig {
    /// Checks that a cooperative launch's grid fits on the GPU at once: `per_sm` blocks
    /// of this configuration per SM (the occupancy query's answer) on `sms` SMs.
    ///
    /// ```
    /// use cudajit::{LaunchConfig, LaunchConfigError};
    ///
    /// let config = LaunchConfig::new(300, 256).cooperative();
    /// assert_eq!(config.check_co_resident(2, 132), Err(LaunchConfigError::NotCoResident {
    ///     blocks: 300, max_blocks: 264, per_sm: 2, sms: 132,
    /// }));
    /// assert_eq!(config.check_co_resident(3, 132), Ok(()));
    /// ```
    pub fn check_co_resident(&self, per_sm: u32, sms: u32) -> Result<(), LaunchConfigError> {
        let blocks = u64::from(self.grid.x) * u64::from(self.grid.y) * u64::from(self.grid.z);
        let max_blocks = u64::from(per_sm) * u64::from(sms);
        if blocks > max_blocks {
            return Err(LaunchConfigError::NotCoResident {
                blocks,
                max_blocks,
                per_sm,
                sms,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        let ok = LaunchConfig::new(10, 256);
        assert_eq!(ok.check(1024, 49152), Ok(()));
        assert!(matches!(
            LaunchConfig::new(10, (32, 32, 2)).check(1024, 0),
            Err(LaunchConfigError::TooManyThreads { threads: 2048, .. })
        ));
        assert!(matches!(
            LaunchConfig::new((1, 0), 32).check(1024, 0),
            Err(LaunchConfigError::ZeroDimension {
                what: "grid",
                axis: "y"
            })
        ));
        assert!(matches!(
            LaunchConfig::new((1, 70000), 32).check(1024, 0),
            Err(LaunchConfigError::GridTooLarge { axis: "y", .. })
        ));
        assert!(matches!(
            LaunchConfig::new(1, (1, 1, 65)).check(1024, 0),
            Err(LaunchConfigError::BlockDimensionTooLarge { axis: "z", .. })
        ));
        assert!(matches!(
            ok.with_shared_mem(50_000).check(1024, 49152),
            Err(LaunchConfigError::SharedMemoryTooLarge { .. })
        ));
        assert_eq!(LaunchConfig::for_elements(0).grid.x, 1);
    }
}
