//! cudajit's CPU back end: the validated IR run with CUDA's semantics, no GPU needed.
//!
//! The simulator is the NVVM writer's peer: it takes the same `(Module, KernelInfo)` that
//! `cudajit_core` lowers and validates a captured kernel into
//! ([`cudajit_core::CapturedKernel::lower`]), so it is an independent second
//! implementation of the IR's meaning: kernels can be tested on any machine, and the GPU's
//! results checked against it (`tests/differential.rs`).
//!
//! - [`Program::new`] prepares a kernel once per specialisation (`program`: flat
//!   register code).
//! - [`launch`] runs it over a grid: blocks on host threads, warps of 32 threads,
//!   `sync_threads()` as a real barrier, warp-synchronous shuffles and votes
//!   (`scheduler`), one interpreter per thread (`thread`).
//! - Memory ([`memory`]): every index is bounds-checked, and shared-memory data races
//!   between barriers are reported.
//! - Math ([`math`]): libdevice's functions from the host's math library, within the ulp
//!   bounds of [`ulp_bound`].
//!
//! What a kernel does wrong is an error naming the kernel, the block, the thread and the
//! source position ([`SimError`]), never a hang or a crash of the host.
//!
//! Beyond one launch: `#[extern_device]` calls run host implementations
//! ([`SimExterns`], in [`SimOptions::externs`]), which may lend global memory that kernels
//! reach through simulated device addresses ([`extern_address`], read with
//! `slice_at`/`slice_at_mut`), and [`launch_group`] runs several launches together with
//! barriers across them: what `cudajit-nccl-sim` builds NCCL's device API on, with
//! several ranks in one process.
//!
//! The random valid kernels of the differential tests (`tests/random_kernels.rs`) come
//! from the dev-only crate `cudajit-kernel-generator` (`tests/kernel-generator/`).

pub mod build_notice;
mod error;
mod externs;
mod format;
pub mod global_races;
mod int_methods;
mod isa;
pub mod math;
pub mod memory;
mod program;
mod ptx;
mod scheduler;
pub mod tensor_map;
mod thread;
mod thread_state;
mod timer;
mod value;
pub mod watchdog;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use error::{SimError, SimSite};
pub use externs::{ExternCall, ExternOutcome, SimExterns};
pub use math::{ulp_bound, ulp_distance_f32, ulp_distance_f64};
pub use memory::{
    extern_address, extern_region_of, DeviceMemory, GlobalRegion, MAX_EXTERN_REGIONS,
};
pub use program::{Program, ProgramOptions, SimParameter};
pub use value::{canonical as canonical_bits, widen as widen_bits, RegisterValue};

use cudajit_core::device::Dim3;
use cudajit_core::{EnvVar, EnvVarError, Scalar};
use memory::{pointer, MAX_GLOBAL_REGIONS};

/// Most threads per block, as on every CUDA GPU.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Most shared memory per block (static and dynamic), as on an H100/H200 (227 KiB).
pub const MAX_SHARED_BYTES_PER_BLOCK: u32 = 232_448;

/// Grid and block dimensions and dynamic shared memory of a simulated launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimLaunch {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: u32,
    /// A cooperative launch (`cuLaunchCooperativeKernel`): every block runs at once, so
    /// `grid_sync()` works; the grid must fit [`MAX_COOPERATIVE_THREADS`].
    pub cooperative: bool,
    /// Thread-block clusters (sm_90): blocks per cluster along each axis, run together
    /// (`None`: each block is a cluster of one, as on the GPU). Each grid dimension is a
    /// multiple of the cluster's, and a cluster holds at most [`MAX_CLUSTER_BLOCKS`].
    pub cluster: Option<Dim3>,
}

/// The most blocks of a cluster: CUDA's portable cluster size.
pub const MAX_CLUSTER_BLOCKS: u32 = 8;

/// Most threads of a cooperative launch: as many as an H200 holds at once (132 SMs of
/// 2048 threads), so that a grid the simulator runs cooperatively is one a GPU could run.
pub const MAX_COOPERATIVE_THREADS: u64 = 132 * 2048;

/// Where `print!` output of simulated kernels goes.
#[derive(Clone, Debug, Default)]
pub enum PrintTarget {
    /// The process's standard output, one `print!` at a time.
    #[default]
    Stdout,
    /// A buffer, read back with [`PrintTarget::take`] (kept even when a launch fails).
    Capture(Arc<Mutex<String>>),
}

impl PrintTarget {
    /// A new, empty capture buffer.
    pub fn capture() -> Self {
        PrintTarget::Capture(Arc::default())
    }

    /// The output captured so far, emptying the buffer (empty for [`PrintTarget::Stdout`]).
    pub fn take(&self) -> String {
        match self {
            PrintTarget::Stdout => String::new(),
            PrintTarget::Capture(buffer) => {
                std::mem::take(&mut *buffer.lock().unwrap_or_else(|p| p.into_inner()))
            }
        }
    }

    pub(crate) fn print(&self, text: &str) {
        match self {
            PrintTarget::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
            PrintTarget::Capture(buffer) => buffer
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_str(text),
        }
    }
}

/// The variable that sets the number of host threads running blocks.
pub const THREADS_VARIABLE: &str = "CUDAJIT_SIM_THREADS";

/// How a launch runs.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Host threads running blocks; 0 takes `CUDAJIT_SIM_THREADS` or every core.
    pub workers: usize,
    /// Where `print!` output goes.
    pub print: PrintTarget,
    /// Report data races on shared memory (on by default; costs a record per access).
    pub race_detection: bool,
    /// Report data races on global memory too: plain accesses of writable slice arguments
    /// by different threads that nothing orders (no barrier of their block, no
    /// `grid_sync()`, no fence and atomic between blocks), at least one a write. Off by
    /// default (it costs time, and 72 bytes of records per element of each writable
    /// slice the kernel touches); `None` takes `CUDAJIT_SIM_RACES` (`global` turns it on,
    /// `shared` leaves it off).
    pub global_race_detection: Option<bool>,
    /// Host implementations of the kernel's `#[extern_device]` functions, and the global
    /// memory they hand out (none by default: calling an extern function is then an
    /// error of the calling thread).
    pub externs: Option<Arc<dyn SimExterns>>,
    /// How long one thread may run without stopping (exiting, or waiting at a barrier or
    /// warp operation) before the launch fails with [`SimError::Hang`]: `None` takes
    /// `CUDAJIT_SIM_WATCHDOG_S` or [`watchdog::DEFAULT_LIMIT`] (120 s); `Some(Duration::MAX)`
    /// never stops a thread.
    pub watchdog: Option<std::time::Duration>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            workers: 0,
            print: PrintTarget::Stdout,
            race_detection: true,
            global_race_detection: None,
            externs: None,
            watchdog: None,
        }
    }
}

impl SimOptions {
    /// The watchdog's limit for a launch (`None`: none); an error when
    /// `CUDAJIT_SIM_WATCHDOG_S` is consulted and is not a number of seconds.
    pub fn resolved_watchdog(&self) -> Result<Option<std::time::Duration>, EnvVarError> {
        match self.watchdog {
            Some(limit) => Ok((limit != std::time::Duration::MAX).then_some(limit)),
            None => watchdog::limit_from_environment(),
        }
    }

    /// Whether a launch tracks races on global memory: [`SimOptions::global_race_detection`],
    /// or `CUDAJIT_SIM_RACES`; an error naming the variable if its value is neither `global`
    /// nor `shared`.
    pub fn resolved_global_race_detection(&self) -> Result<bool, EnvVarError> {
        match self.global_race_detection {
            Some(on) => Ok(on),
            None => global_races::enabled_by_environment(),
        }
    }

    /// The number of host threads a launch uses: `workers`, else `CUDAJIT_SIM_THREADS`
    /// (an error when it is not a whole number above 0), else every core.
    pub fn resolved_workers(&self) -> Result<usize, EnvVarError> {
        if self.workers > 0 {
            return Ok(self.workers);
        }
        let configured = EnvVar::process(THREADS_VARIABLE).count()?;
        Ok(configured.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }))
    }
}

/// An argument of a simulated launch, one per kernel parameter.
#[derive(Clone, Debug)]
pub enum SimArg<'a> {
    /// A scalar: its type and register bits (see [`RegisterValue`]).
    Scalar { scalar: Scalar, bits: u64 },
    /// A slice: `len` elements of type `elem` of `memory`, from element `first`.
    /// `mutable` must be true for `&mut [T]` parameters.
    Slice {
        memory: &'a DeviceMemory,
        elem: Scalar,
        first: usize,
        len: usize,
        mutable: bool,
    },
    /// A slice of `#[repr(C)]` structs of `size` bytes each: `len` of them of `memory`,
    /// from element `first`. `mutable` must be true for `&mut [S]` parameters.
    StructSlice {
        memory: &'a DeviceMemory,
        size: u32,
        first: usize,
        len: usize,
        mutable: bool,
    },
    /// A `#[repr(C)]` struct passed by value: its bytes (padding zeroed), as many as the
    /// parameter's type has.
    Struct { bytes: Arc<[u8]> },
    /// A tensor map over `memory` (the whole tensor), for a `TensorMap` parameter: the
    /// launch binds `memory` (which TMA stores write) and gives the kernel the map's
    /// address.
    TensorMap {
        memory: &'a DeviceMemory,
        map: tensor_map::SimTensorMap,
    },
}

impl<'a> SimArg<'a> {
    /// A scalar argument.
    pub fn scalar<T: RegisterValue>(value: T) -> Self {
        SimArg::Scalar {
            scalar: T::SCALAR,
            bits: value.to_register(),
        }
    }

    /// All of `memory` as a slice of `elem`, for a `&[T]` or (with `mutable`) `&mut [T]`
    /// parameter.
    pub fn slice(memory: &'a DeviceMemory, elem: Scalar, mutable: bool) -> Self {
        SimArg::Slice {
            memory,
            elem,
            first: 0,
            len: memory.len() / elem.size_bytes() as usize,
            mutable,
        }
    }
}

/// What a finished launch did.
#[derive(Clone, Debug, Default)]
pub struct SimReport {
    /// Threads simulated (grid size times block size).
    pub threads: u64,
    pub blocks: u64,
    /// Barriers completed, summed over blocks.
    pub barriers: u64,
    /// Host threads used.
    pub workers: usize,
    pub elapsed: Duration,
}

impl SimReport {
    /// Simulated threads per second of wall time.
    pub fn threads_per_second(&self) -> f64 {
        self.threads as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs `program` over `config` with `args` (one per [`Program::parameters`]), blocks
/// spread over host threads. Returns when every block has finished, or the first error
/// of the lowest-numbered failing block.
pub fn launch(
    program: &Program,
    config: &SimLaunch,
    args: &[SimArg<'_>],
    options: &SimOptions,
) -> Result<SimReport, SimError> {
    launch_group(
        &[GroupLaunch {
            program,
            config: *config,
            args,
            label: None,
        }],
        options,
    )
}

/// One launch of a group run by [`launch_group`].
#[derive(Clone, Debug)]
pub struct GroupLaunch<'p, 'a> {
    pub program: &'p Program,
    pub config: SimLaunch,
    pub args: &'p [SimArg<'a>],
    /// What the launch is, for messages (e.g. `rank 2`): errors raised by its threads
    /// carry it in [`SimSite::launch`].
    pub label: Option<String>,
}

/// Runs several launches together, as the ranks of a multi-GPU program run at once:
/// every launch must have the same grid; block `b` of every launch runs on one host thread,
/// and a thread whose extern call returns [`ExternOutcome::GroupBarrier`] waits until
/// every thread of block `b` of every launch waits at one (a barrier across the launches,
/// such as NCCL's LSA barrier with the CTA as its cooperative group). A launch whose
/// block finishes while the others wait at such a barrier is reported, never a hang.
/// Extern functions of every launch resolve against `options.externs`, and the calling
/// launch's index in `launches` is [`ExternCall::member`]. Returns the launches' summed
/// report, or the first error of the lowest-numbered failing block (of the
/// lowest-numbered launch in it).
pub fn launch_group(
    launches: &[GroupLaunch<'_, '_>],
    options: &SimOptions,
) -> Result<SimReport, SimError> {
    let started = Instant::now();
    build_notice::at_launch();
    let Some(first) = launches.first() else {
        return Ok(SimReport::default());
    };
    for launch in launches {
        let launch_error = |detail: String| SimError::Launch {
            kernel: launch.program.kernel.clone(),
            detail: match &launch.label {
                Some(label) => format!("{label}: {detail}"),
                None => detail,
            },
        };
        check_config(launch.program, &launch.config).map_err(launch_error)?;
        if launch.config.grid != first.config.grid {
            return Err(launch_error(format!(
                "grid {:?}, but {} of kernel `{}` has grid {:?}: launches run together need one grid",
                launch.config.grid,
                first.label.as_deref().unwrap_or("the first launch"),
                first.program.kernel,
                first.config.grid
            )));
        }
        if launch.args.len() != launch.program.parameters.len() {
            return Err(launch_error(format!(
                "{} arguments given, the kernel takes {}",
                launch.args.len(),
                launch.program.parameters.len()
            )));
        }
    }
    // Struct arguments live in read-only memory of their own for the whole run.
    let struct_memory: Vec<Vec<DeviceMemory>> = launches
        .iter()
        .map(|launch| {
            launch
                .args
                .iter()
                .filter_map(|arg| match arg {
                    SimArg::Struct { bytes } => {
                        let mut memory = DeviceMemory::zeroed(bytes.len().max(1));
                        memory.write_bytes(0, bytes);
                        Some(memory)
                    }
                    // Written in `prepare`, once the tensor's region is known.
                    SimArg::TensorMap { .. } => {
                        Some(DeviceMemory::zeroed(tensor_map::TENSOR_MAP_BYTES))
                    }
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mut prepared = Vec::with_capacity(launches.len());
    for (launch, structs) in launches.iter().zip(&struct_memory) {
        prepared.push(prepare(launch, structs)?);
    }
    // The environment's settings, read before anything runs: a bad one fails the launch.
    let environment_error = |error: EnvVarError| SimError::Launch {
        kernel: first.program.kernel.clone(),
        detail: error.to_string(),
    };
    let watchdog = options.resolved_watchdog().map_err(environment_error)?;
    let workers = options.resolved_workers().map_err(environment_error)?;
    let track_global = options
        .resolved_global_race_detection()
        .map_err(environment_error)?;
    let global_races: Vec<Option<global_races::GlobalRaces>> = prepared
        .iter()
        .map(|p| track_global.then(|| global_races::GlobalRaces::new(&p.regions.tracked)))
        .collect();
    let host = options.externs.as_deref();
    let externals = host.map(|h| h.regions()).unwrap_or_default();
    if externals.len() > MAX_EXTERN_REGIONS {
        return Err(SimError::Launch {
            kernel: first.program.kernel.clone(),
            detail: format!(
                "the extern host provides {} regions, more than {MAX_EXTERN_REGIONS}",
                externals.len()
            ),
        });
    }
    let bindings: Vec<Option<externs::ExternBinding<'_>>> = launches
        .iter()
        .enumerate()
        .map(|(member, launch)| {
            host.map(|host| externs::ExternBinding {
                host,
                ids: launch
                    .program
                    .externs
                    .iter()
                    .map(|f| host.resolve(&f.symbol))
                    .collect(),
                member,
            })
        })
        .collect();
    let grids: Vec<scheduler::Grid<'_, '_>> = launches
        .iter()
        .zip(&prepared)
        .zip(&bindings)
        .zip(&global_races)
        .map(|(((launch, prepared), binding), races)| scheduler::Grid {
            program: launch.program,
            grid: launch.config.grid,
            block: launch.config.block,
            dynamic_shared_bytes: launch.config.dynamic_shared_bytes,
            globals: &prepared.regions.globals,
            region_names: &prepared.regions.names,
            image: &prepared.image,
            output: &options.print,
            track_races: options.race_detection,
            global_races: races.as_ref(),
            externs: binding.as_ref(),
            externals: &externals,
            label: launch.label.as_deref(),
            watchdog,
            cluster: launch.config.cluster.unwrap_or(Dim3 { x: 1, y: 1, z: 1 }),
        })
        .collect();
    let stats = if first.config.cooperative {
        if launches.len() > 1 {
            return Err(SimError::Launch {
                kernel: first.program.kernel.clone(),
                detail: "a cooperative launch in a group of launches run together: the simulator runs cooperative launches alone".into(),
            });
        }
        scheduler::run_cooperative(&grids[0], workers)?
    } else if first.config.cluster.is_some()
        || program::uses::uses_clusters(&first.program.functions)
    {
        if launches.len() > 1 {
            return Err(SimError::Launch {
                kernel: first.program.kernel.clone(),
                detail: "a cluster launch (or a kernel using `barrier.cluster`, `mapa` or `.shared::cluster`) in a group of launches run together: the simulator runs cluster launches alone".into(),
            });
        }
        scheduler::run_clusters(&grids[0], workers)?
    } else {
        scheduler::run_group(&grids, workers)?
    };
    if let Some(host) = host {
        host.finish().map_err(|detail| SimError::Launch {
            kernel: first.program.kernel.clone(),
            detail,
        })?;
    }
    let grid = first.config.grid;
    let blocks = u64::from(grid.x) * u64::from(grid.y) * u64::from(grid.z);
    let threads = launches
        .iter()
        .map(|l| {
            blocks
                * u64::from(l.config.block.x)
                * u64::from(l.config.block.y)
                * u64::from(l.config.block.z)
        })
        .sum();
    Ok(SimReport {
        threads,
        blocks: blocks * launches.len() as u64,
        barriers: stats.barriers,
        workers: workers.min(blocks as usize).max(1),
        elapsed: started.elapsed(),
    })
}

/// A launch's registers at entry and global regions.
struct Prepared<'m> {
    image: Vec<u64>,
    regions: Regions<'m>,
}

fn prepare<'m>(
    launch: &GroupLaunch<'_, 'm>,
    structs: &'m [DeviceMemory],
) -> Result<Prepared<'m>, SimError> {
    let program = launch.program;
    let launch_error = |detail: String| SimError::Launch {
        kernel: program.kernel.clone(),
        detail: match &launch.label {
            Some(label) => format!("{label}: {detail}"),
            None => detail,
        },
    };
    let entry = &program.functions[program.entry as usize];
    let mut image = entry.init.clone();
    let mut regions = Regions::default();
    let mut structs = structs.iter();
    let mut reg = 0usize;
    for (index, (arg, parameter)) in launch.args.iter().zip(&program.parameters).enumerate() {
        match (arg, *parameter) {
            (SimArg::Scalar { scalar, bits }, SimParameter::Scalar(expected))
                if *scalar == expected =>
            {
                image[reg] = value::canonical(*bits, *scalar);
                reg += 1;
            }
            (SimArg::Struct { bytes }, SimParameter::Struct { size }) => {
                let memory = structs.next().expect("one memory per struct argument");
                if bytes.len() != size as usize {
                    return Err(launch_error(format!(
                        "argument {index} is a struct of {} bytes, the parameter's has {size}",
                        bytes.len()
                    )));
                }
                if regions.globals.len() >= MAX_GLOBAL_REGIONS {
                    return Err(launch_error("too many arguments in memory".into()));
                }
                let name = format!("argument {index} (a struct of {size} bytes)");
                image[reg] = regions.push(memory, false, name, None);
                reg += 1;
            }
            (SimArg::TensorMap { memory, map }, SimParameter::TensorMap) => {
                let bytes = structs.next().expect("one memory per tensor map argument");
                if regions.globals.len() + 2 > MAX_GLOBAL_REGIONS {
                    return Err(launch_error("too many arguments in memory".into()));
                }
                // Writable: TMA stores write through the map, as on the GPU (whose maps
                // borrow their buffer alike).
                let name = format!("the tensor of argument {index} (a tensor map)");
                let tensor = regions.push(memory, true, name, None);
                bytes.store_bytes(0, &map.to_bytes(tensor));
                let name = format!("argument {index} (a tensor map)");
                image[reg] = regions.push(bytes, false, name, None);
                reg += 1;
            }
            (
                &SimArg::Slice {
                    memory,
                    elem,
                    first,
                    len,
                    mutable,
                },
                SimParameter::Slice {
                    elem: expected,
                    mutable: wants_mutable,
                },
            ) if elem == expected => {
                let slice = SliceArg {
                    memory,
                    size: elem.size_bytes() as usize,
                    first,
                    len,
                    mutable,
                    wants_mutable,
                };
                let mutability = if wants_mutable { "mut " } else { "" };
                let name = format!("argument {index} (&{mutability}[{elem}])");
                let pointer = slice.bind(index, name, program, &mut regions);
                image[reg] = pointer.map_err(launch_error)?;
                image[reg + 1] = len as u64;
                reg += 2;
            }
            (
                &SimArg::StructSlice {
                    memory,
                    size,
                    first,
                    len,
                    mutable,
                },
                SimParameter::StructSlice {
                    size: expected,
                    mutable: wants_mutable,
                },
            ) if size == expected => {
                let slice = SliceArg {
                    memory,
                    size: size as usize,
                    first,
                    len,
                    mutable,
                    wants_mutable,
                };
                let mutability = if wants_mutable { "mut " } else { "" };
                let name = format!("argument {index} (&{mutability}[a struct of {size} bytes])");
                let pointer = slice.bind(index, name, program, &mut regions);
                image[reg] = pointer.map_err(launch_error)?;
                image[reg + 1] = len as u64;
                reg += 2;
            }
            (arg, parameter) => {
                return Err(launch_error(format!(
                    "argument {index} is {}, the parameter is {}",
                    describe_arg(arg),
                    describe_parameter(&parameter)
                )))
            }
        }
    }
    Ok(Prepared { image, regions })
}

/// The global regions of a launch as `prepare` adds them: each region's memory, name, and
/// (the writable slices) what its race records need.
#[derive(Default)]
struct Regions<'m> {
    globals: Vec<GlobalRegion<'m>>,
    names: Vec<String>,
    tracked: Vec<Option<global_races::TrackedSlice>>,
}

impl<'m> Regions<'m> {
    /// Adds a region and returns the pointer to its start.
    fn push(
        &mut self,
        memory: &'m DeviceMemory,
        writable: bool,
        name: String,
        tracked: Option<global_races::TrackedSlice>,
    ) -> u64 {
        let start = pointer(self.globals.len() as u64, 0);
        self.globals.push(GlobalRegion { memory, writable });
        self.names.push(name);
        self.tracked.push(tracked);
        start
    }
}

/// A slice argument, of scalars or structs, before it becomes a global region.
struct SliceArg<'m> {
    memory: &'m DeviceMemory,
    /// Bytes per element.
    size: usize,
    first: usize,
    len: usize,
    mutable: bool,
    wants_mutable: bool,
}

impl<'m> SliceArg<'m> {
    /// Checks the slice against its buffer and the parameter, adds its region and returns
    /// the pointer to its first element.
    fn bind(
        self,
        index: usize,
        name: String,
        program: &Program,
        regions: &mut Regions<'m>,
    ) -> Result<u64, String> {
        if self.wants_mutable && !self.mutable {
            return Err(format!(
                "argument {index} is a read-only slice for a `&mut` slice parameter"
            ));
        }
        let (first, len) = (self.first, self.len);
        let end = first
            .checked_add(len)
            .and_then(|e| e.checked_mul(self.size))
            .filter(|&e| e <= self.memory.len());
        if end.is_none() {
            return Err(format!(
                "argument {index}: elements {first}..{first}+{len} are outside its buffer of {} bytes",
                self.memory.len()
            ));
        }
        if regions.globals.len() >= MAX_GLOBAL_REGIONS {
            return Err("too many slice arguments".into());
        }
        // A read-only slice cannot race. A struct's fields are tracked at the largest
        // power of two (at most 8) dividing its size.
        let granule = 1u32 << (self.size as u32).trailing_zeros().min(3);
        let tracked = self.wants_mutable.then(|| global_races::TrackedSlice {
            base: (first * self.size) as u64,
            elem: self.size as u32,
            granule,
            bytes: self.memory.len() as u64,
            name: program.parameter_name(index).to_owned(),
        });
        let start = regions.push(self.memory, self.wants_mutable, name, tracked);
        Ok(start + (first * self.size) as u64)
    }
}

fn check_config(program: &Program, config: &SimLaunch) -> Result<(), String> {
    let axes = [
        ("x", config.grid.x, config.block.x, i32::MAX as u32, 1024),
        ("y", config.grid.y, config.block.y, 65535, 1024),
        ("z", config.grid.z, config.block.z, 65535, 64),
    ];
    for (axis, grid, block, grid_limit, block_limit) in axes {
        if grid == 0 || block == 0 {
            return Err(format!("a launch dimension {axis} is 0"));
        }
        if grid > grid_limit || block > block_limit {
            return Err(format!(
                "grid {grid} / block {block} along {axis} exceed CUDA's limits ({grid_limit} / {block_limit})"
            ));
        }
    }
    let threads = u64::from(config.block.x) * u64::from(config.block.y) * u64::from(config.block.z);
    if threads > u64::from(MAX_THREADS_PER_BLOCK) {
        return Err(format!(
            "{threads} threads per block, over CUDA's limit of {MAX_THREADS_PER_BLOCK}"
        ));
    }
    let shared = u64::from(program.static_shared_bytes) + u64::from(config.dynamic_shared_bytes);
    if shared > u64::from(MAX_SHARED_BYTES_PER_BLOCK) {
        return Err(format!(
            "{shared} bytes of shared memory per block, over the limit of {MAX_SHARED_BYTES_PER_BLOCK}"
        ));
    }
    if program.grid_sync && !config.cooperative {
        return Err("the kernel calls grid_sync(), which needs a cooperative launch: launch it with `LaunchConfig::new(grid, block).cooperative()` (every block resident at once)".into());
    }
    if let Some(cluster) = config.cluster {
        check_cluster(config, cluster)?;
    }
    let blocks = u64::from(config.grid.x) * u64::from(config.grid.y) * u64::from(config.grid.z);
    if config.cooperative && blocks * threads > MAX_COOPERATIVE_THREADS {
        return Err(format!(
            "a cooperative launch of {blocks} blocks of {threads} threads, more than the {MAX_COOPERATIVE_THREADS} threads a GPU (an H200) holds at once: at most {} blocks of {threads} threads; loop over the data with a grid-stride loop instead",
            MAX_COOPERATIVE_THREADS / threads
        ));
    }
    Ok(())
}

/// The cluster checks `cudajit::LaunchConfig::check` makes before the GPU's launch too.
fn check_cluster(config: &SimLaunch, cluster: Dim3) -> Result<(), String> {
    if config.cooperative {
        return Err(
            "a launch both cooperative and in clusters: CUDA launches one or the other".into(),
        );
    }
    let axes = [
        ("x", config.grid.x, cluster.x),
        ("y", config.grid.y, cluster.y),
        ("z", config.grid.z, cluster.z),
    ];
    for (axis, grid, blocks) in axes {
        if blocks == 0 || grid % blocks != 0 {
            return Err(format!(
                "grid dimension {axis} is {grid}, not a multiple of the cluster's {blocks}: each grid dimension must be a multiple of the cluster's"
            ));
        }
    }
    let blocks = u64::from(cluster.x) * u64::from(cluster.y) * u64::from(cluster.z);
    if blocks > u64::from(MAX_CLUSTER_BLOCKS) {
        return Err(format!(
            "a cluster of {blocks} blocks, more than the portable {MAX_CLUSTER_BLOCKS}"
        ));
    }
    Ok(())
}

fn describe_arg(arg: &SimArg<'_>) -> String {
    match arg {
        SimArg::Scalar { scalar, .. } => format!("a `{scalar}`"),
        SimArg::Slice { elem, mutable, .. } => {
            format!("a `&{}[{elem}]`", if *mutable { "mut " } else { "" })
        }
        SimArg::StructSlice { size, mutable, .. } => {
            let mutable = if *mutable { "mut " } else { "" };
            format!("a `&{mutable}[_]` of structs of {size} bytes")
        }
        SimArg::Struct { bytes } => format!("a struct of {} bytes", bytes.len()),
        SimArg::TensorMap { .. } => "a tensor map".to_owned(),
    }
}

fn describe_parameter(parameter: &SimParameter) -> String {
    match parameter {
        SimParameter::Scalar(scalar) => format!("`{scalar}`"),
        SimParameter::Slice { elem, mutable } => {
            format!("`&{}[{elem}]`", if *mutable { "mut " } else { "" })
        }
        SimParameter::StructSlice { size, mutable } => {
            let mutable = if *mutable { "mut " } else { "" };
            format!("`&{mutable}[_]` of structs of {size} bytes")
        }
        SimParameter::Struct { size } => format!("a struct of {size} bytes"),
        SimParameter::TensorMap => "a `TensorMap`".to_owned(),
    }
}
