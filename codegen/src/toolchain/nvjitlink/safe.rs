//! Safe nvJitLink: a loaded library plus per-call RAII link handles.

use std::fmt;
use std::path::Path;
use std::time::Instant;

use super::result;
use super::sys::{nvJitLinkHandle, nvJitLinkInputType, NvJitLinkSys};
use crate::toolchain::counters;
use crate::toolchain::discover::{Component, Located};
use crate::toolchain::dylib::DynLib;
use crate::toolchain::error::{CallError, LinkFailure, Result, ToolchainError};
use crate::toolchain::ffi::{c_string, owned, CStrings};

/// `nvJitLinkInputType`, with the header's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum InputKind {
    /// `NVJITLINK_INPUT_CUBIN`: a CUDA binary (ELF).
    Cubin = 1,
    /// `NVJITLINK_INPUT_PTX`: PTX text.
    Ptx = 2,
    /// `NVJITLINK_INPUT_LTOIR`: LTO-IR from libNVVM/NVRTC `-gen-lto`.
    LtoIr = 3,
    /// `NVJITLINK_INPUT_FATBIN`: a fat binary.
    Fatbin = 4,
    /// `NVJITLINK_INPUT_OBJECT`: a host object with embedded device code.
    Object = 5,
    /// `NVJITLINK_INPUT_LIBRARY`: a host static library.
    Library = 6,
    /// `NVJITLINK_INPUT_INDEX`: an index file.
    Index = 7,
    /// `NVJITLINK_INPUT_ANY`: let nvJitLink detect the kind.
    Any = 10,
}

impl InputKind {
    /// The C enum value.
    pub fn as_raw(self) -> nvJitLinkInputType {
        self as nvJitLinkInputType
    }
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputKind::Cubin => "cubin",
            InputKind::Ptx => "PTX",
            InputKind::LtoIr => "LTO-IR",
            InputKind::Fatbin => "fatbin",
            InputKind::Object => "object",
            InputKind::Library => "library",
            InputKind::Index => "index",
            InputKind::Any => "any",
        })
    }
}

/// One input of a link.
#[derive(Debug, Clone, Copy)]
pub struct LinkInput<'a> {
    /// Name shown in nvJitLink's logs and in errors.
    pub name: &'a str,
    /// What `bytes` holds.
    pub kind: InputKind,
    /// The input itself.
    pub bytes: &'a [u8],
}

/// What a successful link produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linked {
    /// The linked cubin (an ELF image).
    pub cubin: Vec<u8>,
    /// The linked PTX, when requested (needs `-lto`).
    pub ptx: Option<String>,
    /// nvJitLink's info log (e.g. register usage with `-verbose`).
    pub info_log: String,
}

/// A loaded nvJitLink.
///
/// `Send + Sync`: only function pointers into a library that is never
/// unloaded and a cached version. Every link creates, uses and destroys its
/// own handle inside one call; nvJitLink handles are independent, and the
/// library is documented thread-safe for distinct handles.
pub struct NvJitLink {
    sys: NvJitLinkSys,
    lib: DynLib,
    version: (u32, u32),
}

impl std::fmt::Debug for NvJitLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvJitLink")
            .field("path", &self.lib.path())
            .field("version", &self.version)
            .field("abi_suffix", &self.sys.abi_suffix)
            .finish_non_exhaustive()
    }
}

impl NvJitLink {
    /// Loads nvJitLink from `located`, resolves its entry points (versioned
    /// names first) and queries its version once.
    pub fn load(located: &Located) -> Result<NvJitLink> {
        let lib = DynLib::open(located)?;
        let sys = NvJitLinkSys::resolve(&lib)?;
        // SAFETY: `sys` was just resolved from a real nvJitLink.
        let version = match unsafe { result::version(&sys) } {
            Some(v) => v?,
            // Pre-12.3 libraries lack nvJitLinkVersion; their ABI suffix
            // still says which major they are.
            None => (abi_major(sys.abi_suffix), 0),
        };
        tracing::debug!(?version, abi = sys.abi_suffix, path = %lib.path().display(), "nvJitLink ready");
        Ok(NvJitLink { sys, lib, version })
    }

    /// `nvJitLinkVersion`: (major, minor).
    pub fn version(&self) -> (u32, u32) {
        self.version
    }

    /// The symbol ABI suffix in use, e.g. `"_13_0"` (`""`: plain names).
    pub fn abi_suffix(&self) -> &'static str {
        self.sys.abi_suffix
    }

    /// The file the library was loaded from.
    pub fn path(&self) -> &Path {
        self.lib.path()
    }

    /// Links `inputs` with `options` (e.g. `-arch=sm_90 -lto`) into a cubin,
    /// plus the linked PTX when `want_ptx`. A failure carries nvJitLink's
    /// error log and every input's name. Counts as one invocation whatever
    /// the outcome.
    ///
    /// nvJitLink produces either a cubin or, with `-ptx` (which needs
    /// `-lto`), PTX, never both from one session. So `-ptx` is not taken from
    /// `options` (it is dropped there); `want_ptx` runs a second session with
    /// `-ptx` added. The cubin therefore never depends on `want_ptx`.
    pub fn link(
        &self,
        inputs: &[LinkInput<'_>],
        options: &[&str],
        want_ptx: bool,
    ) -> Result<Linked> {
        counters::record_nvjitlink_link();
        let started = Instant::now();
        let mut options: Vec<&str> = options.iter().copied().filter(|o| *o != "-ptx").collect();
        let cubin_of = |h: &Handle<'_>| {
            // SAFETY: `session` passes a live, completed handle.
            unsafe { result::linked_cubin(h.sys, h.raw) }
        };
        let (cubin, info_log) = self.session(inputs, &options, cubin_of)?;
        let ptx = if want_ptx {
            options.push("-ptx");
            let ptx_of = |h: &Handle<'_>| {
                // SAFETY: `session` passes a live, completed handle.
                unsafe { result::linked_ptx(h.sys, h.raw) }
            };
            Some(self.session(inputs, &options, ptx_of)?.0)
        } else {
            None
        };
        tracing::debug!(cubin = cubin.len(), elapsed = ?started.elapsed(), ?options, "nvJitLink linked");
        Ok(Linked {
            cubin,
            ptx,
            info_log,
        })
    }

    /// One create/add/complete session; `fetch` reads the product off the
    /// completed handle. Returns the product and the info log.
    fn session<T>(
        &self,
        inputs: &[LinkInput<'_>],
        options: &[&str],
        fetch: impl FnOnce(&Handle<'_>) -> std::result::Result<T, CallError>,
    ) -> Result<(T, String)> {
        let c_options = CStrings::new(Component::NvJitLink, "option", options)?;
        let names = inputs
            .iter()
            .map(|i| format!("{} ({})", i.name, i.kind))
            .collect();
        // SAFETY: real nvJitLink; options are live C strings. A non-null
        // handle is owned by `Handle` at once, so it is destroyed exactly once.
        let (created, raw) = unsafe { result::create(&self.sys, c_options.ptrs()) };
        let handle = Handle {
            sys: &self.sys,
            raw,
            options: owned(options),
            inputs: names,
        };
        created.map_err(|e| handle.failure(e))?;
        for input in inputs {
            let name = c_string(Component::NvJitLink, "input name", input.name)?;
            // SAFETY: live handle, used by this thread only.
            let added = unsafe {
                result::add_data(
                    &self.sys,
                    handle.raw,
                    input.kind.as_raw(),
                    input.bytes,
                    &name,
                )
            };
            added.map_err(|e| handle.failure(e))?;
        }
        // SAFETY: live handle.
        unsafe { result::complete(&self.sys, handle.raw) }.map_err(|e| handle.failure(e))?;
        let product = fetch(&handle).map_err(|e| handle.failure(e))?;
        Ok((product, handle.info_log()))
    }
}

fn abi_major(suffix: &str) -> u32 {
    suffix
        .trim_start_matches('_')
        .split('_')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// A link handle destroyed on drop, with what is needed to report errors.
struct Handle<'s> {
    sys: &'s NvJitLinkSys,
    raw: nvJitLinkHandle,
    options: Vec<String>,
    inputs: Vec<String>,
}

impl Handle<'_> {
    fn error_log(&self) -> String {
        if self.raw.is_null() {
            return String::new();
        }
        // SAFETY: live handle.
        unsafe { result::error_log(self.sys, self.raw) }
            .unwrap_or_else(|e| format!("<no log: {e}>"))
    }

    fn info_log(&self) -> String {
        if self.raw.is_null() {
            return String::new();
        }
        // SAFETY: live handle.
        unsafe { result::info_log(self.sys, self.raw) }.unwrap_or_else(|e| format!("<no log: {e}>"))
    }

    fn failure(&self, e: CallError) -> ToolchainError {
        ToolchainError::NvJitLinkFailed(Box::new(LinkFailure {
            function: e.function,
            status: e.status,
            code: e.code,
            error_log: self.error_log(),
            info_log: self.info_log(),
            inputs: self.inputs.clone(),
            options: self.options.clone(),
        }))
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        // SAFETY: live, owned handle; nulled by nvJitLink afterwards.
        if let Err(e) = unsafe { result::destroy(self.sys, &mut self.raw) } {
            tracing::warn!("{e}");
        }
    }
}
