//! Safe libNVVM: a loaded library plus per-call RAII programs.

use std::path::Path;
use std::time::Instant;

use super::result;
use super::sys::{nvvmProgram, NvvmSys};
use crate::toolchain::counters;
use crate::toolchain::discover::{Component, Located};
use crate::toolchain::dylib::DynLib;
use crate::toolchain::error::{CallError, NvvmCompileFailure, Result, ToolchainError};
use crate::toolchain::ffi::{c_string, owned, CStrings};

/// One input module of an NVVM program.
#[derive(Debug, Clone, Copy)]
pub struct NvvmModule<'a> {
    /// Name shown in libNVVM's diagnostics.
    pub name: &'a str,
    /// NVVM IR, as text or bitcode.
    pub bytes: &'a [u8],
    /// Added with `nvvmLazyAddModuleToProgram`: only the functions other
    /// modules reference are kept (libdevice is added this way).
    pub lazy: bool,
}

impl<'a> NvvmModule<'a> {
    /// A module compiled in full.
    pub fn new(name: &'a str, bytes: &'a [u8]) -> Self {
        NvvmModule {
            name,
            bytes,
            lazy: false,
        }
    }

    /// A lazily linked module, such as libdevice.
    pub fn lazy(name: &'a str, bytes: &'a [u8]) -> Self {
        NvvmModule {
            name,
            bytes,
            lazy: true,
        }
    }
}

/// What a successful compilation produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvvmOutput {
    /// PTX text (without its C terminator) or, with `-gen-lto`, LTO-IR.
    pub result: Vec<u8>,
    /// libNVVM's program log (warnings); usually empty.
    pub log: String,
}

impl NvvmOutput {
    /// The result as text, when it is PTX (valid UTF-8).
    pub fn as_text(&self) -> Option<&str> {
        std::str::from_utf8(&self.result).ok()
    }
}

/// A loaded libNVVM.
///
/// `Send + Sync`: the value holds only function pointers into a library that
/// is never unloaded and cached version numbers. Every compilation creates,
/// uses and destroys its own `nvvmProgram` inside one call on one thread, and
/// the libNVVM API reference ("Thread Safety") documents the interface as
/// thread-safe, with concurrent compilation threads as the intended use.
pub struct Nvvm {
    sys: NvvmSys,
    lib: DynLib,
    version: (i32, i32),
    ir_version: (i32, i32, i32, i32),
}

impl std::fmt::Debug for Nvvm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvvm")
            .field("path", &self.lib.path())
            .field("version", &self.version)
            .field("ir_version", &self.ir_version)
            .finish_non_exhaustive()
    }
}

impl Nvvm {
    /// Loads libNVVM from `located`, resolves every entry point and queries
    /// its versions once.
    pub fn load(located: &Located) -> Result<Nvvm> {
        let lib = DynLib::open(located)?;
        let sys = NvvmSys::resolve(&lib)?;
        // SAFETY: `sys` was just resolved from a real libNVVM.
        let version = unsafe { result::version(&sys) }?;
        // SAFETY: as above.
        let ir_version = unsafe { result::ir_version(&sys) }?;
        tracing::debug!(?version, ?ir_version, path = %lib.path().display(), "libNVVM ready");
        Ok(Nvvm {
            sys,
            lib,
            version,
            ir_version,
        })
    }

    /// `nvvmVersion`: (major, minor) of libNVVM itself.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// `nvvmIRVersion`: (IR major, IR minor, debug major, debug minor).
    pub fn ir_version(&self) -> (i32, i32, i32, i32) {
        self.ir_version
    }

    /// The file the library was loaded from.
    pub fn path(&self) -> &Path {
        self.lib.path()
    }

    /// libNVVM's description of a status code.
    pub fn error_string(&self, code: i32) -> String {
        // SAFETY: `self.sys` was resolved from a real libNVVM.
        unsafe { result::error_string(&self.sys, code) }
    }

    /// Compiles `modules` with `options` (e.g. `-arch=compute_90`, plus
    /// `-gen-lto` for LTO-IR). A failure carries the full program log and the
    /// options used. Counts as one invocation whatever the outcome.
    pub fn compile(&self, modules: &[NvvmModule<'_>], options: &[&str]) -> Result<NvvmOutput> {
        counters::record_nvvm_compile();
        let started = Instant::now();
        let program = self.program(modules, options)?;
        program.run(false)?;
        let mut bytes = program.result()?;
        // PTX comes back C-terminated; LTO-IR is binary, so only drop the
        // terminator when the result is NUL-terminated text.
        if bytes.last() == Some(&0) && std::str::from_utf8(&bytes[..bytes.len() - 1]).is_ok() {
            bytes.pop();
        }
        let log = program.log();
        tracing::debug!(bytes = bytes.len(), elapsed = ?started.elapsed(), ?options, "libNVVM compiled");
        Ok(NvvmOutput { result: bytes, log })
    }

    /// Runs `nvvmVerifyProgram` only; returns the (warning) log on success.
    pub fn verify(&self, modules: &[NvvmModule<'_>], options: &[&str]) -> Result<String> {
        let program = self.program(modules, options)?;
        program.run(true)?;
        Ok(program.log())
    }

    fn program<'s>(&'s self, modules: &[NvvmModule<'_>], options: &[&str]) -> Result<Program<'s>> {
        let c_options = CStrings::new(Component::Nvvm, "option", options)?;
        // SAFETY: `self.sys` is a real libNVVM; the program is owned by the
        // `Program` below, which destroys it exactly once.
        let raw = unsafe { result::create_program(&self.sys) }?;
        let program = Program {
            sys: &self.sys,
            raw,
            c_options,
            options: owned(options),
            modules: modules.iter().map(|m| m.name.to_owned()).collect(),
        };
        for m in modules {
            let name = c_string(Component::Nvvm, "module name", m.name)?;
            // SAFETY: `program.raw` is live and used by this thread only.
            let added =
                unsafe { result::add_module(&self.sys, program.raw, m.bytes, &name, m.lazy) };
            added.map_err(|e| program.failure(e))?;
        }
        Ok(program)
    }
}

/// An `nvvmProgram` destroyed on drop, with what is needed to report errors.
struct Program<'s> {
    sys: &'s NvvmSys,
    raw: nvvmProgram,
    c_options: CStrings,
    options: Vec<String>,
    modules: Vec<String>,
}

impl Program<'_> {
    fn run(&self, verify: bool) -> Result<()> {
        // SAFETY: live program, options are live C strings held by `self`.
        let ran =
            unsafe { result::compile_or_verify(self.sys, self.raw, self.c_options.ptrs(), verify) };
        ran.map_err(|e| self.failure(e))
    }

    fn result(&self) -> Result<Vec<u8>> {
        // SAFETY: live program that compiled successfully.
        Ok(unsafe { result::compiled_result(self.sys, self.raw) }?)
    }

    /// The program log; a failure to fetch it becomes a note in the text,
    /// since the log only ever decorates another result.
    fn log(&self) -> String {
        // SAFETY: live program.
        unsafe { result::program_log(self.sys, self.raw) }
            .unwrap_or_else(|e| format!("<no log: {e}>"))
    }

    fn failure(&self, e: CallError) -> ToolchainError {
        ToolchainError::NvvmCompile(Box::new(NvvmCompileFailure {
            function: e.function,
            status: e.status,
            code: e.code,
            log: self.log(),
            options: self.options.clone(),
            modules: self.modules.clone(),
        }))
    }
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` is live and owned; nulled by libNVVM afterwards.
        if let Err(e) = unsafe { result::destroy_program(self.sys, &mut self.raw) } {
            tracing::warn!("{e}");
        }
    }
}
