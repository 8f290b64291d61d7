//! nvcc with the CUDA headers it needs for NCCL's device headers: shared by the 2.28
//! bridge build and the layout probes of `tests/layouts.rs`, so both compile against
//! exactly the same include path.
//!
//! nvcc itself is found by cudajit-codegen's toolchain discovery (`CUDAJIT_NVCC`, CUDA
//! toolkits, the `nvidia-cuda-nvcc` wheel, `PATH`). The nvcc wheel carries no
//! `cuda_runtime.h`, so the CUDA headers are searched separately, first hit wins:
//! `CUDAJIT_CUDA_INCLUDE`; nvcc's own `../include` (a toolkit, or the `nvidia/cu13`
//! tree of the wheels when the runtime wheels are installed beside nvcc's); the CUDA
//! 13.0 headers that `nccl-device/scripts/fetch-wheels.sh --cuda-headers` caches.

use std::path::{Path, PathBuf};
use std::process::Command;

use cudajit_codegen::toolchain::{locate, Component, SearchEnv, ToolchainError};

use super::error::DeviceCodeError;

/// The variable naming a CUDA include directory (the one holding `cuda_runtime.h`).
pub const CUDA_INCLUDE_VAR: &str = "CUDAJIT_CUDA_INCLUDE";

/// nvcc plus the CUDA include (and static runtime) directories to compile NCCL code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nvcc {
    /// The executable.
    pub path: PathBuf,
    /// The directory holding `cuda_runtime.h`; `cccl/` below it is added when present.
    pub cuda_include: PathBuf,
}

impl Nvcc {
    /// Finds nvcc and CUDA headers as the module docs describe.
    pub fn locate(env: &SearchEnv) -> std::result::Result<Nvcc, NvccLookupError> {
        let nvcc = locate(Component::Nvcc, env).map_err(NvccLookupError::Nvcc)?;
        let mut candidates: Vec<(PathBuf, &str)> = Vec::new();
        if let Some(dir) = env.var(CUDA_INCLUDE_VAR) {
            candidates.push((PathBuf::from(dir), CUDA_INCLUDE_VAR));
        }
        if let Some(root) = nvcc.path.parent().and_then(Path::parent) {
            candidates.push((root.join("include"), "beside nvcc"));
        }
        candidates.push((
            headers_cache(env).join("cuda-13.0/nvidia/cu13/include"),
            "fetch-wheels.sh cache",
        ));
        let mut searched = Vec::new();
        for (dir, why) in candidates {
            if dir.join("cuda_runtime.h").is_file() {
                return Ok(Nvcc {
                    path: nvcc.path,
                    cuda_include: dir,
                });
            }
            searched.push(format!("  - {} ({why}): no cuda_runtime.h", dir.display()));
        }
        Err(NvccLookupError::Headers {
            nvcc: nvcc.path,
            searched,
        })
    }

    /// `nvcc -I <nccl_include> -I <cuda include> [-I <cccl>] [-L <cuda lib>]`: the rest
    /// (mode, output, input) is the caller's.
    pub fn command(&self, nccl_include: &Path) -> Command {
        let mut cmd = Command::new(&self.path);
        cmd.arg("-I")
            .arg(nccl_include)
            .arg("-I")
            .arg(&self.cuda_include);
        let cccl = self.cuda_include.join("cccl");
        if cccl.is_dir() {
            cmd.arg("-I").arg(cccl);
        }
        // The static runtime, for probes that link an executable.
        if let Some(lib) = self.cuda_include.parent().map(|r| r.join("lib")) {
            if lib.is_dir() {
                cmd.arg("-L").arg(lib);
            }
        }
        cmd
    }
}

/// Why [`Nvcc::locate`] found nothing usable.
#[derive(Debug, Clone)]
pub enum NvccLookupError {
    /// No nvcc at all.
    Nvcc(ToolchainError),
    /// nvcc but no CUDA headers; `searched` says where they were looked for.
    Headers {
        /// The nvcc found.
        nvcc: PathBuf,
        /// Each directory tried, as a bullet line.
        searched: Vec<String>,
    },
}

impl NvccLookupError {
    /// The provider's error for a bridge of NCCL `version`.
    pub(crate) fn into_error(self, version: crate::NcclVersion) -> DeviceCodeError {
        match self {
            NvccLookupError::Nvcc(source) => DeviceCodeError::NvccNotFound { version, source },
            NvccLookupError::Headers { nvcc, searched } => {
                DeviceCodeError::CudaHeadersNotFound { nvcc, searched }
            }
        }
    }
}

impl std::fmt::Display for NvccLookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NvccLookupError::Nvcc(e) => write!(f, "{e}"),
            NvccLookupError::Headers { nvcc, searched } => write!(
                f,
                "nvcc at {} but no CUDA headers:\n{}",
                nvcc.display(),
                searched.join("\n")
            ),
        }
    }
}

/// `CUDAJIT_NCCL_HEADERS_CACHE`, else `~/.cache/cudajit-tools/nccl` (fetch-wheels.sh).
pub fn headers_cache(env: &SearchEnv) -> PathBuf {
    match env
        .var("CUDAJIT_NCCL_HEADERS_CACHE")
        .filter(|v| !v.is_empty())
    {
        Some(dir) => PathBuf::from(dir),
        None => env
            .var("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(".cache/cudajit-tools/nccl"),
    }
}

/// Runs the nvcc command `build` makes from extra defines, first with none. Some wheels'
/// headers (2.28.7) include DOCA headers they do not ship, from `gin_gdaki.h`: then it
/// runs again with `-DNCCL_GIN_GDAKI_ENABLE=0` (GIN over DOCA is not used from there).
/// On failure returns the last command line and nvcc's output.
pub fn run_with_header_fallbacks(
    build: impl Fn(&[&str]) -> Command,
) -> std::result::Result<(), (String, String)> {
    let mut cmd = build(&[]);
    let mut outcome = run(&mut cmd);
    if matches!(&outcome, Err(e) if e.contains("doca_gpunetio")) {
        cmd = build(&["-DNCCL_GIN_GDAKI_ENABLE=0"]);
        outcome = run(&mut cmd);
    }
    outcome.map_err(|e| (show(&cmd), e))
}

/// Runs `cmd`, returning its stderr (plus stdout) as the error when it fails.
fn run(cmd: &mut Command) -> std::result::Result<(), String> {
    let out = cmd.output().map_err(|e| format!("cannot run it: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "exited with {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    ))
}

/// A command line as text, for error messages.
fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}
