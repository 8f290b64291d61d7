//! The CUDA C++ twins of the cudajit GEMMs (`benches/cuda/gemm_mma.cu` for mma.sync,
//! `benches/cuda/gemm_wgmma.cu` for the Hopper one, built by nvcc): loaded from their cubin
//! through cudarc and launched with the cudajit kernels' grid, block, shared memory and
//! parameters.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudajit::codegen::cubin;
use cudajit::codegen::toolchain::SearchEnv;
use cudajit::{bf16, CudaContext, CudaSlice, CudaStream};
use cudajit_nccl::device_code::Nvcc;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, DeviceRepr, LaunchConfig, PushKernelArg};

use super::hopper;
use super::kernels::{SHARED_BYTES, THREADS, TILE_M, TILE_N};
use super::options::{Algorithm, Layout, Output};
use super::Result;

/// How to build the cubins, for the messages.
pub const BUILD: &str = "nvcc -O3 -arch=sm_90 -cubin -o gemm_mma.cubin benches/cuda/gemm_mma.cu";
pub const BUILD_HOPPER: &str =
    "nvcc -O3 -arch=sm_90a -cubin -o gemm_wgmma.cubin benches/cuda/gemm_wgmma.cu";

/// The twins' sources in the checkout this was built from.
const SOURCE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/cuda");
/// Overrides [`SOURCE_DIR`]'s `gemm_mma.cu`: where a staged binary finds the source on
/// another machine (the Hopper twin's is beside it).
const SOURCE_VAR: &str = "CUDAJIT_GEMM_SOURCE";

/// The twin's source file for `algorithm`: beside `CUDAJIT_GEMM_SOURCE` if it is set, else
/// the checkout's.
pub fn source(algorithm: Algorithm) -> PathBuf {
    let dir = std::env::var_os(SOURCE_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .and_then(|file| file.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from(SOURCE_DIR));
    dir.join(match algorithm {
        Algorithm::Mma => "gemm_mma.cu",
        Algorithm::Wgmma | Algorithm::Fp8 => "gemm_wgmma.cu",
    })
}

/// The twin's entry point for one algorithm, layout and output type:
/// `gemm_bf16_nn_to_bf16`, `gemm_wgmma_tn`.
pub fn entry(algorithm: Algorithm, layout: Layout, output: Output) -> String {
    match algorithm {
        Algorithm::Mma => format!("gemm_bf16_{}{}", layout.name(), output.kernel_suffix()),
        Algorithm::Wgmma | Algorithm::Fp8 => format!("gemm_wgmma_{}", layout.name()),
    }
}

/// The outputs a twin writes.
fn outputs(algorithm: Algorithm) -> &'static [Output] {
    match algorithm {
        Algorithm::Mma => &Output::ALL,
        Algorithm::Wgmma | Algorithm::Fp8 => &[Output::F32],
    }
}

/// Why the twin could not be built: no nvcc (a skip where the toolchain is optional), or
/// nvcc failed on the source (always a failure).
#[derive(Debug)]
pub enum BuildError {
    NoNvcc(String),
    Failed(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::NoNvcc(why) => write!(f, "no nvcc: {why}"),
            BuildError::Failed(why) => f.write_str(why),
        }
    }
}

/// Builds [`source`]`(algorithm)` as the GPU run does (`nvcc -O3 -arch=sm_90 -cubin`,
/// `sm_90a` for the Hopper twin, with ptxas's register and spill report on stderr) into
/// `dir`, and checks that the cubin defines every entry point. nvcc is found as cudajit
/// finds it (`CUDA_HOME`, the wheels under `CUDAJIT_TOOLS_DIR`, `PATH`).
pub fn build(dir: &Path, algorithm: Algorithm) -> std::result::Result<PathBuf, BuildError> {
    let nvcc =
        Nvcc::locate(&SearchEnv::from_process()).map_err(|e| BuildError::NoNvcc(e.to_string()))?;
    let fail = |why: String| BuildError::Failed(why);
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("creating {}: {e}", dir.display())))?;
    let source = source(algorithm);
    let (arch, output) = match algorithm {
        Algorithm::Mma => ("-arch=sm_90", dir.join("gemm_mma.cubin")),
        Algorithm::Wgmma | Algorithm::Fp8 => ("-arch=sm_90a", dir.join("gemm_wgmma.cubin")),
    };
    let status = nvcc
        .command(&nvcc.cuda_include)
        .args(["-O3", arch, "-cubin", "-Xptxas", "-v", "-o"])
        .arg(&output)
        .arg(&source)
        .status()
        .map_err(|e| fail(format!("running {}: {e}", nvcc.path.display())))?;
    if !status.success() {
        return Err(fail(format!(
            "nvcc failed ({status}) on {}",
            source.display()
        )));
    }
    let bytes =
        std::fs::read(&output).map_err(|e| fail(format!("reading {}: {e}", output.display())))?;
    let info = cubin::inspect(&bytes).map_err(|e| fail(format!("{}: {e}", output.display())))?;
    for layout in Layout::ALL {
        for &out in outputs(algorithm) {
            let name = entry(algorithm, layout, out);
            if !info.has_function(&name) {
                return Err(fail(format!(
                    "{} has no kernel `{name}`: {:?}",
                    output.display(),
                    info.functions
                )));
            }
        }
    }
    Ok(output)
}

/// One entry point of the nvcc cubin, ready to launch.
pub struct Twin {
    function: CudaFunction,
    stream: Arc<CudaStream>,
    algorithm: Algorithm,
    layout: Layout,
    output: Output,
}

/// A tensor map as a kernel argument: the 128 descriptor bytes, copied into the parameter
/// (`const __grid_constant__ CUtensorMap`).
#[repr(transparent)]
struct MapArgument(cudarc::driver::sys::CUtensorMap);

// SAFETY: `CUtensorMap` is 128 plain bytes, 64-byte aligned, which the driver copies into
// the kernel's parameter space as the kernel declares it.
unsafe impl DeviceRepr for MapArgument {}

impl Twin {
    /// Loads entry [`entry`]`(algorithm, layout, output)` of the cubin at `path` and
    /// allows it the dynamic shared memory it needs (above the default 48 KiB).
    pub fn load(
        context: &Arc<CudaContext>,
        stream: Arc<CudaStream>,
        path: &Path,
        algorithm: Algorithm,
        layout: Layout,
        output: Output,
    ) -> Result<Twin> {
        let build = match algorithm {
            Algorithm::Mma => BUILD,
            Algorithm::Wgmma | Algorithm::Fp8 => BUILD_HOPPER,
        };
        let bytes = std::fs::read(path).map_err(|e| {
            format!(
                "reading the nvcc cubin {}: {e} (build it with `{build}`)",
                path.display()
            )
        })?;
        let module = context
            .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
            .map_err(|e| format!("loading the nvcc cubin {}: {e}", path.display()))?;
        let name = entry(algorithm, layout, output);
        let function = module.load_function(&name).map_err(|e| {
            format!("the nvcc cubin has no kernel `{name}` ({e}); rebuild it: `{build}`")
        })?;
        let shared = match algorithm {
            Algorithm::Mma => SHARED_BYTES,
            Algorithm::Wgmma | Algorithm::Fp8 => hopper::SHARED_BYTES,
        };
        function.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            shared as i32,
        )?;
        Ok(Twin {
            function,
            stream,
            algorithm,
            layout,
            output,
        })
    }

    /// `c = a · b` for an M×N×K problem, with the cudajit kernel's launch configuration.
    /// `C` is the output type the twin was loaded for (checked by size: f32 or bf16).
    #[allow(clippy::too_many_arguments)]
    pub fn launch<C: DeviceRepr>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &CudaSlice<bf16>,
        b: &CudaSlice<bf16>,
        c: &mut CudaSlice<C>,
    ) -> Result<()> {
        let element_bytes = match self.output {
            Output::F32 => 4,
            Output::Bf16 => 2,
        };
        if std::mem::size_of::<C>() != element_bytes {
            return Err(format!(
                "internal: the twin writes {} and was given another element type",
                self.output.name()
            )
            .into());
        }
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        if self.algorithm != Algorithm::Mma {
            let (a_map, b_map) =
                hopper::tensor_maps(self.layout.b_row_major(), false, (mu, nu, ku), a, b)?;
            let (a_map, b_map) = (MapArgument(*a_map.raw()), MapArgument(*b_map.raw()));
            let config = LaunchConfig {
                grid_dim: ((n / hopper::TILE_N) as u32, (m / hopper::TILE_M) as u32, 1),
                block_dim: (hopper::THREADS, 1, 1),
                shared_mem_bytes: hopper::SHARED_BYTES,
            };
            let mut builder = self.stream.launch_builder(&self.function);
            builder.arg(&a_map).arg(&b_map).arg(&nu).arg(&ku).arg(c);
            // SAFETY: gemm_wgmma.cu's `(CUtensorMap a_map, CUtensorMap b_map, unsigned n,
            // unsigned k, float* c)` in order (C's type checked above); the maps describe
            // `a` and `b`, which hold M·K and K·N elements, `c` M·N, all living until the
            // stream is synchronised.
            unsafe { builder.launch(config) }?;
            return Ok(());
        }
        let config = LaunchConfig {
            grid_dim: ((n / TILE_N) as u32, (m / TILE_M) as u32, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: SHARED_BYTES,
        };
        let mut builder = self.stream.launch_builder(&self.function);
        builder.arg(&mu).arg(&nu).arg(&ku).arg(a).arg(b).arg(c);
        // SAFETY: the arguments are gemm_mma.cu's `(unsigned m, unsigned n, unsigned k,
        // const bf16* a, const bf16* b, C* c)` in order; the buffers hold M·K, K·N and M·N
        // elements (the callers allocate them so) and live until the stream is synchronised.
        unsafe { builder.launch(config) }?;
        Ok(())
    }
}
