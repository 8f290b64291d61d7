//! A kernel's per-process state: compiled code and one loaded module per CUDA context.
//!
//! The hot path of a launch is [`Kernel::function`]: one atomic load (`OnceLock::get`) and
//! a pointer comparison when the stream's context is the first one the kernel was loaded
//! into. Other contexts (other GPUs of the process) take a mutex once per launch.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudajit_codegen::compile::{compile_kernel, CompileOptions, CompiledKernel};
use cudajit_codegen::Arch;
use cudajit_core::intrinsics::Intrinsic;
use cudajit_core::lower::Specialization;
use cudajit_core::CapturedKernel;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::cooperative::CooperativeDevice;
use crate::launch_check::{LaunchCheck, LaunchInfo, LaunchMemo};
use crate::spec::SpecBuilder;
use crate::{Error, LaunchConfig, LaunchConfigError};

/// How many loaded specialisations a kernel finds without taking a lock.
const FAST_SLOTS: usize = 8;

/// A `#[kernel]`'s runtime state; the macro puts one in a `static` per kernel, `KERNEL` in
/// the kernel's module. Launches go through the module's `launch`; `KERNEL` is for what
/// happens around them: the kernel's name and NVVM IR, a compile for an architecture
/// without a GPU ([`Kernel::compile_for_arch`], for tests and ahead-of-time builds).
///
/// ```
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn fill(value: u32, out: &mut [u32]) {
///     let i = global_index();
///     if i < out.len() {
///         out[i] = value;
///     }
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     let kernel: &'static cudajit::Kernel = &fill::KERNEL;
///     assert_eq!(kernel.name(), "fill");
///     // Lowering and writing NVVM IR needs no GPU and no NVIDIA library.
///     let ir = kernel.nvvm_ir()?;
///     assert!(ir.contains("fill"), "{ir}");
///     Ok(())
/// }
/// ```
pub struct Kernel {
    captured: CapturedKernel,
    /// Whether the kernel's crate was built with debug assertions (bounds checks and
    /// `debug_assert!` follow it).
    debug: bool,
    /// The first specialisations loaded (in any context), searched without a lock.
    slots: [OnceLock<LoadedKernel>; FAST_SLOTS],
    /// Any further ones, behind a lock.
    others: Mutex<Vec<&'static LoadedKernel>>,
    /// Specialisations prepared for the CPU simulator.
    simulated: Mutex<Vec<SimulatedKernel>>,
}

/// A specialisation prepared for the CPU simulator.
struct SimulatedKernel {
    spec_id: u64,
    spec: Specialization,
    program: Arc<cudajit_sim::Program>,
}

/// A kernel's specialisation loaded into one CUDA context, ready to launch: what the
/// generated `compile` returns (and what a launch finds loaded after the first).
///
/// ```no_run
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn fill(value: u32, out: &mut [u32]) {
///     let i = global_index();
///     if i < out.len() {
///         out[i] = value;
///     }
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     let context = cudajit::default_context()?;
///     let loaded: &cudajit::LoadedKernel = fill::compile(&context)?;
///     let report = &loaded.compiled().report;
///     let (name, load) = (loaded.description(), loaded.load_time());
///     println!("{name}: {:?}, loaded in {load:?}", report.origin);
///     // The largest block this kernel launches with on this GPU.
///     let block = loaded.max_threads_per_block();
///     let stream = context.default_stream();
///     let mut out = stream.alloc_zeros::<u32>(1 << 20)?;
///     fill::launch(&stream, LaunchConfig::new((1u32 << 20).div_ceil(block), block), 7, &mut out)?;
///     Ok(())
/// }
/// ```
pub struct LoadedKernel {
    context: usize,
    spec_id: u64,
    spec: Specialization,
    function: CudaFunction,
    compiled: CompiledKernel,
    load_time: Duration,
    max_threads: u32,
    max_dynamic_shared: u32,
    /// What a cooperative launch's co-residency check needs of the device.
    device: CooperativeDevice,
    /// Whether the kernel reaches `grid_sync()`, which only a cooperative launch runs.
    grid_sync: bool,
    /// The kernel's captured form.
    captured: &'static CapturedKernel,
    /// [`cudajit_codegen::compile::launch_identity`] of this specialisation and
    /// `name<T=f32, N=4>`, for messages: computed at the first launch that asks (a kernel
    /// with a `LaunchArgument::LAUNCH_CHECK` argument), so other kernels' loads skip the hash.
    identity: OnceLock<([u8; 32], String)>,
    /// Launch checks of arguments that passed once (`LaunchArgument::LAUNCH_CHECK`).
    memo: LaunchMemo,
}

impl Kernel {
    /// State for a captured kernel; used by the macro, which passes
    /// `cfg!(debug_assertions)` of the kernel's crate.
    pub const fn new(captured: CapturedKernel, debug: bool) -> Self {
        Kernel {
            captured,
            debug,
            slots: [const { OnceLock::new() }; FAST_SLOTS],
            others: Mutex::new(Vec::new()),
            simulated: Mutex::new(Vec::new()),
        }
    }

    /// The compile options of this kernel: checks follow the build of its crate (see
    /// [`CompileOptions::for_build`] for the variables that override it).
    pub fn options(&self) -> Result<CompileOptions, Error> {
        Ok(CompileOptions::for_build(self.debug)?)
    }

    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.captured.name
    }

    /// The captured form (for tools and tests).
    pub fn captured(&'static self) -> &'static CapturedKernel {
        &self.captured
    }

    /// The loaded kernel for `stream`'s context, compiling and loading it on first use.
    /// For kernels without generic or `#[comptime]` parameters.
    #[inline]
    pub fn function(&'static self, stream: &CudaStream) -> Result<&'static LoadedKernel, Error> {
        self.specialized(stream, &SpecBuilder::new())
    }

    /// The loaded specialisation `spec` for `stream`'s context, compiling and loading it on
    /// first use. After that, for the first eight (context, specialisation) pairs loaded,
    /// this is a few atomic loads and comparisons: no lock, no allocation.
    #[inline]
    pub fn specialized(
        &'static self,
        stream: &CudaStream,
        spec: &SpecBuilder,
    ) -> Result<&'static LoadedKernel, Error> {
        let context = stream.context();
        let key = context.cu_ctx() as usize;
        for slot in &self.slots {
            match slot.get() {
                Some(loaded) if loaded.context == key && loaded.spec_id == spec.id() => {
                    return Ok(loaded)
                }
                Some(_) => continue,
                // Slots fill in order: the rest are empty.
                None => break,
            }
        }
        self.compile_specialized(context, spec)
    }

    /// Compiles (or fetches from the cache) and loads the kernel into `context`. Calling
    /// it again for the same context returns the same loaded kernel.
    pub fn compile(
        &'static self,
        context: &Arc<CudaContext>,
    ) -> Result<&'static LoadedKernel, Error> {
        self.compile_specialized(context, &SpecBuilder::new())
    }

    /// [`Kernel::compile`] for the specialisation `spec`.
    pub fn compile_specialized(
        &'static self,
        context: &Arc<CudaContext>,
        spec: &SpecBuilder,
    ) -> Result<&'static LoadedKernel, Error> {
        if spec.overflowed() {
            return Err(Error::TooManyParameters {
                kernel: self.name().to_owned(),
            });
        }
        let key = context.cu_ctx() as usize;
        let full = spec.build();
        let matches =
            |l: &LoadedKernel| l.context == key && l.spec_id == spec.id() && l.spec == full;
        let mut others = self.others.lock().unwrap_or_else(|p| p.into_inner());
        let loaded_already = self
            .slots
            .iter()
            .filter_map(OnceLock::get)
            .chain(others.iter().copied())
            .find(|l| matches(l));
        if let Some(loaded) = loaded_already {
            return Ok(loaded);
        }
        // A first launch may happen inside a CUDA Graph capture: load with the thread's
        // capture mode relaxed (see `relaxed_capture`).
        let mut loaded = relaxed_capture(|| self.load(context, spec.id(), full))?;
        // The first specialisations loaded get lock-free slots (filled in order, under the
        // lock); later ones join the list. They stay loaded for the life of the process,
        // like the static they hang off.
        for slot in &self.slots {
            match slot.set(loaded) {
                Ok(()) => match slot.get() {
                    Some(stored) => return Ok(stored),
                    None => unreachable!("OnceLock::get after a successful set"),
                },
                Err(back) => loaded = back,
            }
        }
        let leaked: &'static LoadedKernel = Box::leak(Box::new(loaded));
        others.push(leaked);
        Ok(leaked)
    }

    /// Compiles for `arch` without a GPU (memory and disk caches apply). For kernels
    /// without generic parameters; see [`Kernel::compile_for_arch_with`].
    pub fn compile_for_arch(&'static self, arch: Arch) -> Result<CompiledKernel, Error> {
        self.compile_for_arch_with(arch, &Specialization::default())
    }

    /// Compiles the specialisation `spec` for `arch` without a GPU.
    pub fn compile_for_arch_with(
        &'static self,
        arch: Arch,
        spec: &Specialization,
    ) -> Result<CompiledKernel, Error> {
        Ok(compile_kernel(
            &self.captured,
            spec,
            arch,
            &self.options()?,
        )?)
    }

    /// The NVVM IR the kernel lowers to (no generic parameters).
    pub fn nvvm_ir(&'static self) -> Result<String, Error> {
        self.nvvm_ir_with(&Specialization::default())
    }

    /// The NVVM IR of the specialisation `spec`.
    pub fn nvvm_ir_with(&'static self, spec: &Specialization) -> Result<String, Error> {
        Ok(cudajit_codegen::compile::nvvm_ir_with(
            &self.captured,
            spec,
            &self.options()?,
        )?)
    }

    /// The kernel's specialisation `spec` prepared for the CPU simulator (lowered and
    /// validated once; no GPU toolchain needed).
    pub fn sim_program(
        &'static self,
        spec: &SpecBuilder,
    ) -> Result<Arc<cudajit_sim::Program>, Error> {
        if spec.overflowed() {
            return Err(Error::TooManyParameters {
                kernel: self.name().to_owned(),
            });
        }
        let full = spec.build();
        let mut simulated = self.simulated.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = simulated
            .iter()
            .find(|s| s.spec_id == spec.id() && s.spec == full)
        {
            return Ok(found.program.clone());
        }
        let started = Instant::now();
        let (module, info) = self.captured.lower(&full)?;
        let options = cudajit_sim::ProgramOptions {
            debug_assertions: self.debug,
            file: self.captured.file.to_owned(),
        };
        let program = Arc::new(cudajit_sim::Program::new(&module, &info, None, &options)?);
        tracing::debug!(
            "cudajit: kernel `{}` prepared for the CPU simulator in {:.1} ms (lowered, validated, compiled to its instructions)",
            program.kernel(),
            started.elapsed().as_secs_f64() * 1e3
        );
        simulated.push(SimulatedKernel {
            spec_id: spec.id(),
            spec: full,
            program: program.clone(),
        });
        Ok(program)
    }

    /// Runs the specialisation `spec` on the CPU simulator of `stream`, to completion:
    /// what the generated `launch` does on a [`crate::SimStream`]. `args` holds one value per
    /// launched parameter (`#[comptime]` ones are compiled in).
    pub fn simulate(
        &'static self,
        stream: &crate::SimStream,
        spec: &SpecBuilder,
        config: &LaunchConfig,
        args: &[cudajit_sim::SimArg<'_>],
    ) -> Result<(), Error> {
        cudajit_codegen::log::notice_unheard_setting();
        let program = self.sim_program(spec)?;
        let limit =
            cudajit_sim::MAX_SHARED_BYTES_PER_BLOCK.saturating_sub(program.static_shared_bytes());
        config
            .check(cudajit_sim::MAX_THREADS_PER_BLOCK, limit)
            .map_err(|source| Error::LaunchConfig {
                kernel: program.kernel().to_owned(),
                source,
            })?;
        let launch = cudajit_sim::SimLaunch {
            grid: config.grid,
            block: config.block,
            dynamic_shared_bytes: config.shared_mem_bytes,
            cooperative: config.cooperative,
            cluster: config.cluster,
        };
        if let Some((group, member)) = stream.group() {
            return group.submit(stream, member, program, launch, args);
        }
        let _notice = cudajit_codegen::progress::notice(program.kernel(), "simulating on the CPU")?;
        let _span = tracing::trace_span!("simulate", kernel = program.kernel()).entered();
        tracing::trace!(
            "cudajit: kernel `{}`: simulating grid {:?}, block {:?}, {} bytes of dynamic shared memory",
            program.kernel(),
            config.grid,
            config.block,
            config.shared_mem_bytes
        );
        let report = cudajit_sim::launch(&program, &launch, args, stream.options())?;
        tracing::trace!(
            "cudajit: kernel `{}`: simulated {} threads on {} host threads in {:.3} ms",
            program.kernel(),
            report.threads,
            report.workers,
            report.elapsed.as_secs_f64() * 1e3
        );
        stream.record(report);
        Ok(())
    }

    fn load(
        &'static self,
        context: &Arc<CudaContext>,
        spec_id: u64,
        spec: Specialization,
    ) -> Result<LoadedKernel, Error> {
        let name = self.name();
        let driver = |what: &'static str| {
            move |source| Error::Driver {
                kernel: name.to_owned(),
                what,
                source,
            }
        };
        let (major, minor) = context
            .compute_capability()
            .map_err(driver("querying the compute capability"))?;
        let arch = Arch::new(major as u32, minor as u32);
        let compiled = self.compile_for_arch_with(arch, &spec)?;

        let started = Instant::now();
        let module = context
            .load_module(Ptx::from_binary(compiled.cubin.to_vec()))
            .map_err(|source| Error::Load {
                kernel: name.to_owned(),
                source,
            })?;
        let function = module
            .load_function(&compiled.entry)
            .map_err(driver("finding the kernel in its module"))?;
        let load_time = started.elapsed();

        let max_threads = function
            .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(driver("querying the kernel's thread limit"))?;
        let static_shared = function
            .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            .map_err(driver("querying the kernel's shared memory"))?;
        let optin = context
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(driver("querying the device's shared memory"))?;
        let max_dynamic_shared = (optin - static_shared).max(0);
        // Allow every size the device can give, so launches above 48 KiB work without a
        // separate opt-in call.
        function
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                max_dynamic_shared,
            )
            .map_err(driver("raising the kernel's shared memory limit"))?;
        let device = CooperativeDevice::query(context).map_err(driver(
            "querying the device's multiprocessors and cooperative launch support",
        ))?;
        Ok(LoadedKernel {
            context: context.cu_ctx() as usize,
            spec_id,
            captured: &self.captured,
            identity: OnceLock::new(),
            memo: LaunchMemo::new(),
            spec,
            function,
            compiled,
            load_time,
            max_threads: max_threads.max(0) as u32,
            max_dynamic_shared: max_dynamic_shared as u32,
            device,
            grid_sync: self.captured.reaches_intrinsic(Intrinsic::GridSync),
        })
    }
}

impl LoadedKernel {
    /// The specialisation this kernel was compiled for.
    pub fn specialization(&self) -> &Specialization {
        &self.spec
    }

    /// How the cubin was obtained and how long each step took.
    pub fn compiled(&self) -> &CompiledKernel {
        &self.compiled
    }

    /// Time to load the cubin into the context.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// The most threads per block this kernel can be launched with.
    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads
    }

    /// The most dynamic shared memory per block this kernel can be launched with.
    pub fn max_dynamic_shared_bytes(&self) -> u32 {
        self.max_dynamic_shared
    }

    /// The identity the ranks of a communicator agree on before the first launch
    /// ([`cudajit_codegen::compile::launch_identity`]): BLAKE3 hash of the kernel's code and
    /// specialisation, independent of the GPU and toolchain.
    pub fn identity(&self) -> &[u8; 32] {
        &self.identity_and_description().0
    }

    /// The kernel and its specialisation for people: `all_reduce<T=f32>`.
    pub fn description(&self) -> &str {
        &self.identity_and_description().1
    }

    fn identity_and_description(&self) -> &([u8; 32], String) {
        self.identity.get_or_init(|| {
            let identity = cudajit_codegen::compile::launch_identity(self.captured, &self.spec);
            (identity.0, describe(self.captured.name, &self.spec))
        })
    }

    /// Runs an argument's launch check (`LaunchArgument::LAUNCH_CHECK`) for a launch with
    /// `config`; its error becomes [`Error::Collective`].
    #[inline]
    pub fn run_launch_check<T>(
        &self,
        config: &LaunchConfig,
        value: &T,
        check: LaunchCheck<T>,
    ) -> Result<(), Error> {
        let (identity, description) = self.identity_and_description();
        let info = LaunchInfo {
            kernel: self.captured.name,
            captured: self.captured,
            identity,
            description,
            grid: (config.grid.x, config.grid.y, config.grid.z),
            block: (config.block.x, config.block.y, config.block.z),
            memo: &self.memo,
        };
        check(value, &info).map_err(|message| Error::Collective {
            kernel: description.clone(),
            message,
        })
    }

    /// Checks `config` against CUDA's limits and this kernel's; a cooperative launch also
    /// against what fits on the GPU at once ([`LaunchConfig::check_co_resident`]).
    #[inline]
    pub fn check(&self, config: &LaunchConfig) -> Result<(), Error> {
        let refused = |source| Error::LaunchConfig {
            kernel: self.compiled.entry.clone(),
            source,
        };
        config
            .check(self.max_threads, self.max_dynamic_shared)
            .map_err(refused)?;
        if self.grid_sync && !config.cooperative {
            return Err(refused(LaunchConfigError::NotCooperative));
        }
        if config.cooperative {
            let per_sm = self
                .device
                .blocks_per_sm(&self.function, config)
                .map_err(|source| Error::Driver {
                    kernel: self.compiled.entry.clone(),
                    what: "querying the kernel's occupancy for a cooperative launch",
                    source,
                })?
                .map_err(refused)?;
            config
                .check_co_resident(per_sm, self.device.multiprocessors)
                .map_err(refused)?;
        }
        Ok(())
    }

    /// Launches with raw argument pointers.
    ///
    /// # Safety
    /// `args` must hold one pointer per kernel parameter of the compiled signature, each to
    /// a live value of the parameter's type; `stream` must belong to this kernel's context.
    #[inline]
    pub unsafe fn launch_raw(
        &self,
        stream: &CudaStream,
        config: &LaunchConfig,
        args: &mut [*mut c_void],
    ) -> Result<(), Error> {
        let driver = |what| {
            move |source| Error::Driver {
                kernel: self.compiled.entry.clone(),
                what,
                source,
            }
        };
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("making the stream's context current"))?;
        let function: CUfunction = self.function.cu_function();
        let grid = (config.grid.x, config.grid.y, config.grid.z);
        let block = (config.block.x, config.block.y, config.block.z);
        if let Some(cluster) = config.cluster {
            // SAFETY: as below, with the launch described by `cuLaunchKernelEx`'s config.
            return unsafe { launch_in_clusters(function, stream, config, cluster, args) }
                .map_err(driver("cuLaunchKernelEx (clusters)"));
        }
        if config.cooperative {
            // SAFETY: as below; the driver checks co-residency again and refuses a grid
            // that does not fit (`check` has reported that case with the largest grid).
            return unsafe {
                cudarc::driver::result::launch_cooperative_kernel(
                    function,
                    grid,
                    block,
                    config.shared_mem_bytes,
                    stream.cu_stream(),
                    args,
                )
            }
            .map_err(driver("cuLaunchCooperativeKernel"));
        }
        // SAFETY: the caller guarantees `args` matches the kernel's parameters; the function
        // belongs to the stream's context (resolved from it by `Kernel::function`).
        unsafe {
            cudarc::driver::result::launch_kernel(
                function,
                grid,
                block,
                config.shared_mem_bytes,
                stream.cu_stream(),
                args,
            )
        }
        .map_err(driver("cuLaunchKernel"))
    }
}

/// `cuLaunchKernelEx` with the cluster-dimension attribute.
///
/// # Safety
/// As [`Kernel::launch_raw`]'s: `args` matches the kernel's parameters, and `function`
/// belongs to the stream's context, which is current.
unsafe fn launch_in_clusters(
    function: CUfunction,
    stream: &CudaStream,
    config: &LaunchConfig,
    cluster: crate::Dim3,
    args: &mut [*mut c_void],
) -> Result<(), cudarc::driver::DriverError> {
    use cudarc::driver::sys;
    // SAFETY: a plain C union of integers; every field is valid zeroed.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
        x: cluster.x,
        y: cluster.y,
        z: cluster.z,
    };
    let mut attribute = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value,
    };
    let launch = sys::CUlaunchConfig {
        gridDimX: config.grid.x,
        gridDimY: config.grid.y,
        gridDimZ: config.grid.z,
        blockDimX: config.block.x,
        blockDimY: config.block.y,
        blockDimZ: config.block.z,
        sharedMemBytes: config.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attribute,
        numAttrs: 1,
    };
    // SAFETY: the config and its attribute live across the call; the caller vouches for
    // the function and the arguments.
    unsafe {
        sys::cuLaunchKernelEx(&launch, function, args.as_mut_ptr(), std::ptr::null_mut()).result()
    }
}

/// `name<T=f32, N=4>`, or `name` without generic parameters.
pub(crate) fn describe(name: &str, spec: &Specialization) -> String {
    let values = spec.describe();
    if values.is_empty() {
        name.to_owned()
    } else {
        format!("{name}<{values}>")
    }
}

/// Runs `load` with this thread's stream-capture mode set to relaxed, then restores it.
///
/// A stream capture in the default (global or thread-local) mode makes the driver refuse
/// "potentially unsafe" calls on the capturing thread, which a module load and the
/// function-attribute queries may be; a kernel's first launch inside a capture would then
/// fail. Relaxed mode is CUDA's documented way for a library to make such calls during a
/// capture (`cuThreadExchangeStreamCaptureMode`); nothing is enqueued on the capturing
/// stream here. Costs two driver calls, once per kernel and context; never on the hot path.
pub fn relaxed_capture<T>(load: impl FnOnce() -> T) -> T {
    use cudarc::driver::sys::{cuThreadExchangeStreamCaptureMode, CUstreamCaptureMode};
    // SAFETY: only probes whether libcuda can be opened (cudarc panics on calls otherwise);
    // without a driver there is no capture to relax.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return load();
    }
    let mut mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: `mode` is a valid, writable mode; the previous mode is written back into it.
    let exchanged = unsafe { cuThreadExchangeStreamCaptureMode(&mut mode) }
        == cudarc::driver::sys::CUresult::CUDA_SUCCESS;
    let result = load();
    if exchanged {
        // SAFETY: as above; restores the thread's previous mode.
        unsafe { cuThreadExchangeStreamCaptureMode(&mut mode) };
    }
    result
}
