//! The CUDA C++ twin of the cudajit GEMM (`benches/cuda/gemm_mma.cu`, built by nvcc):
//! loaded from its cubin through cudarc and launched with the cudajit kernels' grid, block,
//! shared memory and parameters.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudajit::codegen::cubin;
use cudajit::codegen::toolchain::SearchEnv;
use cudajit::nccl::device_code::Nvcc;
use cudajit::{bf16, CudaContext, CudaSlice, CudaStream};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, DeviceRepr, LaunchConfig, PushKernelArg};

use super::kernels::{SHARED_BYTES, THREADS, TILE_M, TILE_N};
use super::options::{Layout, Output};
use super::Result;

/// How to build the cubin, for the messages.
pub const BUILD: &str = "nvcc -O3 -arch=sm_90 -cubin -o gemm_mma.cubin benches/cuda/gemm_mma.cu";

/// The twin's source in the checkout this was built from.
const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/cuda/gemm_mma.cu");
/// Overrides [`SOURCE`]: where a staged binary finds the source on another machine.
const SOURCE_VAR: &str = "CUDAJIT_GEMM_SOURCE";

/// The twin's source: `CUDAJIT_GEMM_SOURCE`, else the checkout's.
pub fn source() -> PathBuf {
    std::env::var_os(SOURCE_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(SOURCE))
}

/// The twin's entry point for one layout and output type: `gemm_bf16_nn_to_bf16`.
pub fn entry(layout: Layout, output: Output) -> String {
    format!("gemm_bf16_{}{}", layout.name(), output.kernel_suffix())
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

/// Builds [`source`] as the GPU run does (`nvcc -O3 -arch=sm_90 -cubin`, with ptxas's
/// register and spill report on stderr) into `dir`, and checks that the cubin defines all
/// four entry points. nvcc is found as cudajit finds it (`CUDA_HOME`, the wheels under
/// `CUDAJIT_TOOLS_DIR`, `PATH`).
pub fn build(dir: &Path) -> std::result::Result<PathBuf, BuildError> {
    let nvcc =
        Nvcc::locate(&SearchEnv::from_process()).map_err(|e| BuildError::NoNvcc(e.to_string()))?;
    let fail = |why: String| BuildError::Failed(why);
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("creating {}: {e}", dir.display())))?;
    let output = dir.join("gemm_mma.cubin");
    let source = source();
    let status = nvcc
        .command(&nvcc.cuda_include)
        .args(["-O3", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o"])
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
        for out in Output::ALL {
            let name = entry(layout, out);
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
    output: Output,
}

impl Twin {
    /// Loads entry [`entry`]`(layout, output)` of the cubin at `path` and allows it the
    /// 96 KiB of dynamic shared memory it needs (above the default 48 KiB).
    pub fn load(
        context: &Arc<CudaContext>,
        stream: Arc<CudaStream>,
        path: &Path,
        layout: Layout,
        output: Output,
    ) -> Result<Twin> {
        let bytes = std::fs::read(path).map_err(|e| {
            format!(
                "reading the nvcc cubin {}: {e} (build it with `{BUILD}`)",
                path.display()
            )
        })?;
        let module = context
            .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
            .map_err(|e| format!("loading the nvcc cubin {}: {e}", path.display()))?;
        let name = entry(layout, output);
        let function = module.load_function(&name).map_err(|e| {
            format!("the nvcc cubin has no kernel `{name}` ({e}); rebuild it: `{BUILD}`")
        })?;
        function.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            SHARED_BYTES as i32,
        )?;
        Ok(Twin {
            function,
            stream,
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
        let config = LaunchConfig {
            grid_dim: ((n / TILE_N) as u32, (m / TILE_M) as u32, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: SHARED_BYTES,
        };
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        let mut builder = self.stream.launch_builder(&self.function);
        builder.arg(&mu).arg(&nu).arg(&ku).arg(a).arg(b).arg(c);
        // SAFETY: the arguments are gemm_mma.cu's `(unsigned m, unsigned n, unsigned k,
        // const bf16* a, const bf16* b, C* c)` in order; the buffers hold M·K, K·N and M·N
        // elements (the callers allocate them so) and live until the stream is synchronised.
        unsafe { builder.launch(config) }?;
        Ok(())
    }
}
