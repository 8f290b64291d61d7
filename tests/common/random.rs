//! Running the random kernels of `cudajit_kernel_generator` on the simulator and on a
//! GPU, and comparing the two. Used by `tests/random_kernels.rs` and, through `#[path]`,
//! by `examples/random_kernels.rs`.
#![allow(dead_code)]

use std::sync::Arc;

use cudajit::codegen::compile::{compile_nvvm_ir, CompileOptions};
use cudajit::codegen::toolchain::Toolchain;
use cudajit::codegen::Arch;
use cudajit::core::math::MathFunction;
use cudajit::core::Scalar;
use cudajit::simulator::{
    self as sim, DeviceMemory, Program, ProgramOptions, RegisterValue, SimArg, SimLaunch,
    SimOptions,
};
use cudajit::CudaStream;
use cudajit_kernel_generator::{RandomKernel, RandomParameter, Rng, COUNTERS, PARAMETERS};

/// The arguments of one run: scalar values and input arrays, as register bits.
pub struct Inputs {
    /// One entry per parameter: the scalar's bits, or the input array's elements.
    pub values: Vec<Vec<u64>>,
    pub threads: usize,
}

/// Inputs for `kernel`, from its seed.
pub fn inputs(kernel: &RandomKernel) -> Inputs {
    let mut rng = Rng::new(kernel.seed ^ 0x5eed_1234_abcd);
    let threads = kernel.threads();
    let values = PARAMETERS
        .iter()
        .map(|parameter| match *parameter {
            RandomParameter::Scalar("n", _) => vec![threads as u64],
            RandomParameter::Scalar(_, s) => vec![rng.value(s)],
            RandomParameter::Input(_, s) => (0..threads).map(|_| rng.value(s)).collect(),
            RandomParameter::Output(..) | RandomParameter::Counters(..) => Vec::new(),
        })
        .collect();
    Inputs { values, threads }
}

/// What a run wrote: every output and counter slice, as register bits.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    /// One entry per output or counter parameter, in parameter order.
    pub slices: Vec<(&'static str, Scalar, Vec<u64>)>,
}

fn output_len(
    parameter: &RandomParameter,
    threads: usize,
) -> Option<(&'static str, Scalar, usize)> {
    match *parameter {
        RandomParameter::Output(name, s, slots) => Some((name, s, threads * slots)),
        RandomParameter::Counters(name, s) => Some((name, s, COUNTERS)),
        _ => None,
    }
}

/// Counters start from values every operation changes.
fn counter_start(name: &str, index: usize) -> u64 {
    let start = [
        0u64,
        u64::MAX,
        u64::MAX,
        0,
        u64::MAX,
        0,
        0x5555_5555_5555_5555,
        7,
    ];
    let bits = start[index % start.len()];
    if name.ends_with("u32") {
        bits & 0xffff_ffff
    } else {
        bits
    }
}

/// Runs `kernel` on the simulator.
pub fn run_sim(kernel: &RandomKernel, inputs: &Inputs) -> Result<Outputs, sim::SimError> {
    let info =
        cudajit::core::valid::validate(&kernel.module).map_err(|e| sim::SimError::Launch {
            kernel: kernel.symbol.clone(),
            detail: e.to_string(),
        })?;
    let program = Program::new(&kernel.module, &info, None, &ProgramOptions::default())?;
    let threads = inputs.threads;
    let mut memories = Vec::new();
    for (parameter, values) in PARAMETERS.iter().zip(&inputs.values) {
        let memory = match *parameter {
            RandomParameter::Input(_, s) => {
                let size = s.size_bytes() as usize;
                let mut memory = DeviceMemory::zeroed(values.len() * size);
                let bytes: Vec<u8> = values
                    .iter()
                    .flat_map(|v| v.to_le_bytes()[..size].to_vec())
                    .collect();
                memory.write_bytes(0, &bytes);
                Some(memory)
            }
            ref other => output_len(other, threads).map(|(name, s, len)| {
                let size = s.size_bytes() as usize;
                let mut memory = DeviceMemory::zeroed(len * size);
                if matches!(other, RandomParameter::Counters(..)) {
                    let bytes: Vec<u8> = (0..len)
                        .flat_map(|k| counter_start(name, k).to_le_bytes()[..size].to_vec())
                        .collect();
                    memory.write_bytes(0, &bytes);
                }
                memory
            }),
        };
        memories.push(memory);
    }
    let args: Vec<SimArg<'_>> = PARAMETERS
        .iter()
        .zip(&inputs.values)
        .zip(&memories)
        .map(|((parameter, values), memory)| match (*parameter, memory) {
            (RandomParameter::Scalar(_, scalar), _) => SimArg::Scalar {
                scalar,
                bits: values[0],
            },
            (RandomParameter::Input(_, s), Some(memory)) => SimArg::slice(memory, s, false),
            (RandomParameter::Output(_, s, _) | RandomParameter::Counters(_, s), Some(memory)) => {
                SimArg::slice(memory, s, true)
            }
            _ => unreachable!("every slice has memory"),
        })
        .collect();
    let launch = SimLaunch {
        grid: kernel.grid.into(),
        block: kernel.block.into(),
        dynamic_shared_bytes: 0,
        cooperative: false,
        cluster: None,
    };
    let options = SimOptions {
        workers: 1,
        ..SimOptions::default()
    };
    sim::launch(&program, &launch, &args, &options)?;
    let mut slices = Vec::new();
    for (parameter, memory) in PARAMETERS.iter().zip(&memories) {
        if let (Some((name, s, len)), Some(memory)) = (output_len(parameter, threads), memory) {
            let size = s.size_bytes() as usize;
            let mut bytes = vec![0u8; len * size];
            memory.read_bytes(0, &mut bytes);
            let values = bytes
                .chunks_exact(size)
                .map(|c| {
                    let mut word = [0u8; 8];
                    word[..size].copy_from_slice(c);
                    u64::from_le_bytes(word)
                })
                .collect();
            slices.push((name, s, values));
        }
    }
    Ok(Outputs { slices })
}

/// Compiles `kernel` to a cubin for `arch` without contraction into FMAs (so float
/// results are those of IEEE operations, as on the simulator).
pub fn compile(
    toolchain: &Toolchain,
    kernel: &RandomKernel,
    arch: Arch,
) -> Result<Vec<u8>, String> {
    let info = cudajit::core::valid::validate(&kernel.module).map_err(|e| e.to_string())?;
    let text =
        cudajit::codegen::nvvm::write_module(&kernel.module, &info).map_err(|e| e.to_string())?;
    let options = CompileOptions {
        fma: false,
        ..CompileOptions::default()
    };
    compile_nvvm_ir(toolchain, &kernel.symbol, &text, arch, &options)
        .map(|(cubin, _, _)| cubin)
        .map_err(|e| e.to_string())
}

fn typed<T: RegisterValue + cudarc::driver::DeviceRepr>(
    stream: &Arc<CudaStream>,
    values: &[u64],
) -> Result<cudarc::driver::CudaSlice<T>, String> {
    let host: Vec<T> = values.iter().map(|&v| T::from_register(v)).collect();
    stream.clone_htod(&host).map_err(|e| e.to_string())
}

fn back<T: RegisterValue + cudarc::driver::DeviceRepr>(
    stream: &Arc<CudaStream>,
    slice: &cudarc::driver::CudaSlice<T>,
) -> Result<Vec<u64>, String> {
    Ok(stream
        .clone_dtoh(slice)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(RegisterValue::to_register)
        .collect())
}

/// Device memory of one parameter.
enum GpuSlice {
    U8(cudarc::driver::CudaSlice<u8>),
    I16(cudarc::driver::CudaSlice<i16>),
    I32(cudarc::driver::CudaSlice<i32>),
    U32(cudarc::driver::CudaSlice<u32>),
    I64(cudarc::driver::CudaSlice<i64>),
    U64(cudarc::driver::CudaSlice<u64>),
    F32(cudarc::driver::CudaSlice<f32>),
    F64(cudarc::driver::CudaSlice<f64>),
    Bool(cudarc::driver::CudaSlice<bool>),
}

impl GpuSlice {
    fn new(stream: &Arc<CudaStream>, scalar: Scalar, values: &[u64]) -> Result<Self, String> {
        Ok(match scalar {
            Scalar::U8 => GpuSlice::U8(typed(stream, values)?),
            Scalar::I16 => GpuSlice::I16(typed(stream, values)?),
            Scalar::I32 => GpuSlice::I32(typed(stream, values)?),
            Scalar::U32 => GpuSlice::U32(typed(stream, values)?),
            Scalar::I64 => GpuSlice::I64(typed(stream, values)?),
            Scalar::U64 => GpuSlice::U64(typed(stream, values)?),
            Scalar::F32 => GpuSlice::F32(typed(stream, values)?),
            Scalar::F64 => GpuSlice::F64(typed(stream, values)?),
            Scalar::Bool => GpuSlice::Bool(typed(stream, values)?),
            other => return Err(format!("no {other} slices in random kernels")),
        })
    }

    fn values(&self, stream: &Arc<CudaStream>) -> Result<Vec<u64>, String> {
        match self {
            GpuSlice::U8(s) => back(stream, s),
            GpuSlice::I16(s) => back(stream, s),
            GpuSlice::I32(s) => back(stream, s),
            GpuSlice::U32(s) => back(stream, s),
            GpuSlice::I64(s) => back(stream, s),
            GpuSlice::U64(s) => back(stream, s),
            GpuSlice::F32(s) => back(stream, s),
            GpuSlice::F64(s) => back(stream, s),
            GpuSlice::Bool(s) => back(stream, s),
        }
    }

    fn pointer(&self, stream: &CudaStream) -> u64 {
        use cudarc::driver::DevicePtr;
        macro_rules! ptr {
            ($s:expr) => {{
                let (pointer, _sync) = $s.device_ptr(stream);
                pointer
            }};
        }
        match self {
            GpuSlice::U8(s) => ptr!(s),
            GpuSlice::I16(s) => ptr!(s),
            GpuSlice::I32(s) => ptr!(s),
            GpuSlice::U32(s) => ptr!(s),
            GpuSlice::I64(s) => ptr!(s),
            GpuSlice::U64(s) => ptr!(s),
            GpuSlice::F32(s) => ptr!(s),
            GpuSlice::F64(s) => ptr!(s),
            GpuSlice::Bool(s) => ptr!(s),
        }
    }
}

/// Runs `kernel` (compiled to `cubin`) on the GPU of `stream`.
pub fn run_gpu(
    stream: &Arc<CudaStream>,
    kernel: &RandomKernel,
    cubin: &[u8],
    inputs: &Inputs,
) -> Result<Outputs, String> {
    let threads = inputs.threads;
    let module = stream
        .context()
        .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()))
        .map_err(|e| format!("loading the cubin: {e}"))?;
    let function = module
        .load_function(&kernel.symbol)
        .map_err(|e| format!("finding the kernel: {e}"))?;
    let mut slices = Vec::new();
    let mut scalars = Vec::new();
    for (parameter, values) in PARAMETERS.iter().zip(&inputs.values) {
        match *parameter {
            RandomParameter::Scalar(_, s) => {
                scalars.push((s, values[0]));
                slices.push(None);
            }
            RandomParameter::Input(_, s) => slices.push(Some(GpuSlice::new(stream, s, values)?)),
            ref other => {
                let (name, s, len) = output_len(other, threads).ok_or("an output")?;
                let initial: Vec<u64> = if matches!(other, RandomParameter::Counters(..)) {
                    (0..len).map(|k| counter_start(name, k)).collect()
                } else {
                    vec![0; len]
                };
                slices.push(Some(GpuSlice::new(stream, s, &initial)?));
            }
        }
    }
    // Argument storage: every value widened to 8 bytes, read by the driver at its type's
    // size from the start of its slot (little-endian).
    let mut storage: Vec<u64> = Vec::new();
    let mut lengths = Vec::new();
    let mut scalar_values = scalars.iter();
    for slice in &slices {
        match slice {
            None => {
                let (_, bits) = scalar_values.next().ok_or("a scalar")?;
                storage.push(*bits);
            }
            Some(slice) => {
                storage.push(slice.pointer(stream));
                lengths.push(storage.len());
                storage.push(0);
            }
        }
    }
    let mut length_index = 0;
    for (slice, parameter) in slices.iter().zip(PARAMETERS.iter()) {
        if slice.is_some() {
            let len = match parameter {
                RandomParameter::Input(..) => threads,
                other => output_len(other, threads).map(|o| o.2).unwrap_or(0),
            };
            storage[lengths[length_index]] = len as u64;
            length_index += 1;
        }
    }
    let mut args: Vec<*mut std::ffi::c_void> = storage
        .iter_mut()
        .map(|v| v as *mut u64 as *mut std::ffi::c_void)
        .collect();
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| e.to_string())?;
    // SAFETY: `args` holds one pointer per parameter of the compiled kernel (a slice is a
    // pointer and a length), each to an 8-byte slot holding the value in its low bytes.
    unsafe {
        cudarc::driver::result::launch_kernel(
            function.cu_function(),
            (kernel.grid, 1, 1),
            (kernel.block, 1, 1),
            0,
            stream.cu_stream(),
            &mut args,
        )
    }
    .map_err(|e| format!("launch: {e}"))?;
    stream
        .synchronize()
        .map_err(|e| format!("the kernel failed: {e}"))?;
    let mut outputs = Vec::new();
    for (parameter, slice) in PARAMETERS.iter().zip(&slices) {
        if let (Some((name, s, _)), Some(slice)) = (output_len(parameter, threads), slice) {
            outputs.push((name, s, slice.values(stream)?));
        }
    }
    Ok(Outputs { slices: outputs })
}

/// The differences between two runs: integers and exact floats bit for bit (NaNs equal),
/// `approx` slots within the ulp bound of their function.
pub fn differences(kernel: &RandomKernel, gpu: &Outputs, simulated: &Outputs) -> Vec<String> {
    use cudajit_kernel_generator::APPROX_SLOTS;
    let mut found = Vec::new();
    for ((name, scalar, a), (_, _, b)) in gpu.slices.iter().zip(&simulated.slices) {
        let approx: Option<&[Option<MathFunction>]> = match *name {
            "approx_f32" => Some(&kernel.approx_f32),
            "approx_f64" => Some(&kernel.approx_f64),
            _ => None,
        };
        for (k, (&x, &y)) in a.iter().zip(b).enumerate() {
            let ulp = match scalar {
                Scalar::F32 => {
                    sim::ulp_distance_f32(f32::from_bits(x as u32), f32::from_bits(y as u32))
                }
                Scalar::F64 => sim::ulp_distance_f64(f64::from_bits(x), f64::from_bits(y)),
                _ => u64::from(x != y),
            };
            let bound = match approx {
                Some(functions) => functions[k % APPROX_SLOTS]
                    .and_then(|f| sim::ulp_bound(f, *scalar))
                    .map(u64::from)
                    .unwrap_or(u64::MAX),
                None => 0,
            };
            if ulp > bound {
                let slots = a.len() / kernel.threads().max(1);
                let statement = kernel
                    .source
                    .lines()
                    .find(|l| {
                        l.trim_start().starts_with(
                            &format!("{name}[global_index() * {slots} + {} ]", k % slots.max(1))
                                .replace(" ]", "]"),
                        )
                    })
                    .map(|l| format!("\n      {}", l.trim()))
                    .unwrap_or_default();
                let shown = |bits: u64| match scalar {
                    Scalar::F32 => format!("{:e} ({bits:#x})", f32::from_bits(bits as u32)),
                    Scalar::F64 => format!("{:e} ({bits:#x})", f64::from_bits(bits)),
                    _ => format!("{} ({bits:#x})", bits as i64),
                };
                found.push(format!(
                    "{name}[{k}] (thread {}, slot {}): GPU {} vs simulator {}{}{statement}",
                    if name.starts_with("counters") {
                        0
                    } else {
                        k / slots.max(1)
                    },
                    if name.starts_with("counters") {
                        k
                    } else {
                        k % slots.max(1)
                    },
                    shown(x),
                    shown(y),
                    match approx {
                        Some(functions) => format!(
                            ", {ulp} ulp apart, bound {bound} for {:?}",
                            functions[k % APPROX_SLOTS]
                        ),
                        None => String::new(),
                    }
                ));
            }
        }
    }
    found
}

/// The outcome of a batch of random kernels.
#[derive(Debug, Default)]
pub struct Summary {
    pub generated: usize,
    pub simulated: usize,
    pub compiled: usize,
    /// Kernels run on both the GPU and the simulator and compared.
    pub compared: usize,
    /// Output elements compared.
    pub elements: usize,
    /// Failures, each with the kernel's text.
    pub failures: Vec<String>,
    /// Kernels with differences, by the first output that differs.
    pub by_output: std::collections::BTreeMap<String, usize>,
    pub seconds: f64,
}

/// Runs the kernels of `seeds`: each on the simulator, compiled to a cubin when a toolchain
/// is given, and run on the GPU and compared when a stream is given. Stops after `budget`
/// seconds (the kernels run so far are counted).
pub fn run_batch(
    seeds: impl IntoIterator<Item = u64>,
    toolchain: Option<&Toolchain>,
    gpu: Option<(&Arc<CudaStream>, Arch)>,
    budget: std::time::Duration,
    verbose: bool,
) -> Summary {
    let started = std::time::Instant::now();
    let mut summary = Summary::default();
    for seed in seeds {
        if started.elapsed() > budget {
            eprintln!(
                "time budget of {budget:?} reached after {} kernels",
                summary.generated
            );
            break;
        }
        let kernel = cudajit_kernel_generator::random_kernel(seed);
        summary.generated += 1;
        let inputs = inputs(&kernel);
        let fail = |summary: &mut Summary, what: String| {
            summary.failures.push(format!(
                "seed {seed} (grid {} x block {}): {what}\n{}",
                kernel.grid, kernel.block, kernel.source
            ));
        };
        let simulated = match run_sim(&kernel, &inputs) {
            Ok(outputs) => {
                summary.simulated += 1;
                outputs
            }
            Err(error) => {
                fail(&mut summary, format!("the simulator failed: {error}"));
                continue;
            }
        };
        let Some(toolchain) = toolchain else {
            continue;
        };
        let arch = gpu.map(|g| g.1).unwrap_or(Arch::SM_90);
        let cubin = match compile(toolchain, &kernel, arch) {
            Ok(cubin) => {
                summary.compiled += 1;
                cubin
            }
            Err(error) => {
                fail(&mut summary, format!("compiling failed: {error}"));
                continue;
            }
        };
        let Some((stream, _)) = gpu else {
            continue;
        };
        match run_gpu(stream, &kernel, &cubin, &inputs) {
            Ok(on_gpu) => {
                summary.compared += 1;
                summary.elements += on_gpu.slices.iter().map(|s| s.2.len()).sum::<usize>();
                let found = differences(&kernel, &on_gpu, &simulated);
                if let Some(first) = found.first() {
                    let output = first.split('[').next().unwrap_or("?").to_owned();
                    *summary.by_output.entry(output).or_default() += 1;
                }
                if !found.is_empty() {
                    let shown: Vec<_> = found.iter().take(8).cloned().collect();
                    fail(
                        &mut summary,
                        format!(
                            "{} differences between the GPU and the simulator:\n  {}",
                            found.len(),
                            shown.join("\n  ")
                        ),
                    );
                } else if verbose {
                    eprintln!("seed {seed}: agree");
                }
            }
            Err(error) => fail(&mut summary, format!("the GPU run failed: {error}")),
        }
    }
    summary.seconds = started.elapsed().as_secs_f64();
    summary
}

impl Summary {
    /// One line of counts.
    pub fn line(&self) -> String {
        let by_output: Vec<String> = self
            .by_output
            .iter()
            .map(|(output, count)| format!("{output}: {count}"))
            .collect();
        let by_output = if by_output.is_empty() {
            String::new()
        } else {
            format!(" (first differing output: {})", by_output.join(", "))
        };
        format!(
            "{} random kernels generated, {} simulated, {} compiled, {} compared with the GPU ({} output elements), {} failures{by_output}, {:.1} s",
            self.generated,
            self.simulated,
            self.compiled,
            self.compared,
            self.elements,
            self.failures.len(),
            self.seconds
        )
    }
}
