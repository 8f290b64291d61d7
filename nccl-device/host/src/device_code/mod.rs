//! NCCL's device code for a given NCCL installation: the provider of the
//! [`cudajit_core::external::DeviceLibrary`] that kernels calling NCCL's device API link
//! ([`provide_for_loaded_nccl`]). A [`DeviceCode`] is one release's file; an
//! [`ApiFunction`] is a function of NCCL's device API as cudajit names it, and
//! [`symbols`] says which symbol implements it in each generation.
//!
//! - NCCL with `libnccl_device.ltoir` beside `libnccl.so.2` (the 2.31+ wheels): that file,
//!   linked as LTO-IR; its names are C++-mangled ([`symbols::LTOIR_2_32`],
//!   [`symbols::LTOIR_2_31`]).
//! - NCCL 2.28, which ships no device library: cudajit's `extern "C"` bridge over the
//!   installed `nccl_device.h`, compiled by nvcc into a fatbin with LTO-IR and cached on
//!   disk ([`bridge`], [`symbols::BRIDGE_2_28`]).
//!
//! Either way nvJitLink's `-lto` link inlines the calls into the kernel. Kernels written
//! against the bridge's C ABI (`cudajit_nccl_*`, [`symbols::BRIDGE_2_28`]) link against
//! either: for a `.ltoir`, [`shim`] defines those functions over its mangled ones
//! ([`DeviceCode::parts`], [`provide_for_loaded_nccl`]). [`DeviceCode::link`]
//! turns an undefined-symbol failure into an error naming the function, the library, its
//! path and release.
//!
//! The library must belong to the loaded `libnccl` release (struct layouts change between
//! patch releases): [`DeviceCode::for_nccl`] takes it from a [`LoadedNccl`], whose
//! headers were already checked against the library.

pub mod bridge;
mod error;
pub mod nvcc;
pub mod shim;
#[cfg(test)]
mod symbol_spellings;
pub mod symbols;
mod unresolved;

use std::path::PathBuf;

use cudajit_codegen::toolchain::{
    InputKind, LinkInput, Linked, NvJitLink, SearchEnv, Toolchain, ToolchainError,
};
use cudajit_codegen::Arch;
use cudajit_core::external::{LibraryKind, LibraryPart, ProvidedLibrary};

pub use error::{DeviceCodeError, MissingSymbol, Result};
pub use nvcc::{Nvcc, NvccLookupError};
pub use symbols::{ApiFunction, SymbolEntry, SymbolTable};

use crate::discover::Installation;
use crate::version::NcclVersion;
use crate::LoadedNccl;

/// Where a device library came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Shipped by NCCL beside the host library.
    Shipped,
    /// cudajit's bridge, compiled from the installation's headers.
    Bridge,
}

/// NCCL's device code of one release, ready to be linked: the shipped `.ltoir` or the
/// bridge's fatbin.
#[derive(Debug, Clone)]
pub struct DeviceCode {
    /// Where it came from.
    pub provenance: Provenance,
    /// What nvJitLink should take it as.
    pub kind: InputKind,
    /// The file.
    pub path: PathBuf,
    /// The NCCL release it belongs to.
    pub version: NcclVersion,
    /// Its symbols.
    pub symbols: &'static SymbolTable,
    bytes: Vec<u8>,
}

impl DeviceCode {
    /// The device library of a loaded NCCL, for `arch`.
    pub fn for_nccl(nccl: &LoadedNccl, arch: Arch, env: &SearchEnv) -> Result<DeviceCode> {
        Self::provide(nccl.installation(), nccl.version(), arch, env)
    }

    /// The device library of `installation` (release `version`) for `arch`: the shipped
    /// `.ltoir`, or the bridge built with the nvcc that `env` selects and cached under
    /// cudajit's cache directory (`CUDAJIT_CACHE_DIR`, ...; a temporary directory when
    /// the cache is off). `version` must be the library's own (see the module docs).
    pub fn provide(
        installation: &Installation,
        version: NcclVersion,
        arch: Arch,
        env: &SearchEnv,
    ) -> Result<DeviceCode> {
        let (provenance, kind, path, symbols) = match &installation.device_library {
            Some(ltoir) => {
                // 2.32 added the barrier session's destroy; older .ltoir lack it.
                let table = if version < NcclVersion::new(2, 32, 0) {
                    &symbols::LTOIR_2_31
                } else {
                    &symbols::LTOIR_2_32
                };
                (Provenance::Shipped, InputKind::LtoIr, ltoir.clone(), table)
            }
            None if version.major == 2 && version.minor == 28 => {
                let include = installation.include_dir.as_deref().ok_or_else(|| {
                    DeviceCodeError::NoHeaders {
                        version,
                        library: installation.library.clone(),
                    }
                })?;
                let nvcc = Nvcc::locate(env).map_err(|e| e.into_error(version))?;
                // The bridge checks its ncclDevComm against the host bindings' layout.
                let dev_comm = crate::sys::layout::select(version)
                    .ok()
                    .filter(|s| s.exact)
                    .map(|s| s.generation.dev_comm.size);
                let fatbin =
                    bridge::build(&nvcc, include, version, arch, dev_comm, &cache_dir(env)?)?;
                (
                    Provenance::Bridge,
                    InputKind::Fatbin,
                    fatbin,
                    &symbols::BRIDGE_2_28,
                )
            }
            None => {
                return Err(DeviceCodeError::NoDeviceLibrary {
                    version,
                    library: installation.library.clone(),
                })
            }
        };
        let bytes = std::fs::read(&path).map_err(|e| DeviceCodeError::Io {
            what: "cannot read the NCCL device library",
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok(DeviceCode {
            provenance,
            kind,
            path,
            version,
            symbols,
            bytes,
        })
    }

    /// The linker symbol of `function` in this library.
    pub fn symbol(&self, function: ApiFunction) -> Result<&'static str> {
        self.symbols.get(function).map(|e| e.symbol).ok_or_else(|| {
            DeviceCodeError::FunctionUnavailable {
                function: function.name().to_owned(),
                generation: self.symbols.generation,
                path: self.path.clone(),
                version: self.version,
            }
        })
    }

    /// The library's contents.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The C-ABI shim over this `.ltoir` ([`shim`]), compiled by `toolchain`'s libNVVM for
    /// `arch`; `None` for the 2.28 bridge, which defines the C ABI itself.
    pub fn shim(&self, toolchain: &Toolchain, arch: Arch) -> Result<Option<Vec<u8>>> {
        if self.provenance == Provenance::Bridge {
            return Ok(None);
        }
        shim::compile(toolchain, self.symbols, arch)
            .map(Some)
            .map_err(|source| DeviceCodeError::Shim {
                version: self.version,
                path: self.path.clone(),
                source,
            })
    }

    /// What a kernel written against the bridge's C ABI (`cudajit_nccl_*`) links, for
    /// `arch`, as a [`cudajit_core::external::DeviceLibrary`] takes it: the bridge fatbin
    /// (2.28), or the shim's LTO-IR (compiled by `toolchain`'s libNVVM) then the `.ltoir`.
    pub fn parts(&self, toolchain: &Toolchain, arch: Arch) -> Result<ProvidedLibrary> {
        let file_name = self.link_input().name.to_owned();
        let library = LibraryPart {
            name: file_name,
            kind: match self.provenance {
                Provenance::Bridge => LibraryKind::Fatbin,
                Provenance::Shipped => LibraryKind::LtoIr,
            },
            bytes: self.bytes.clone(),
        };
        let Some(shim) = self.shim(toolchain, arch)? else {
            return Ok(ProvidedLibrary {
                origin: format!(
                    "NCCL {}: cudajit's bridge, built by nvcc for {arch}, {}",
                    self.version,
                    self.path.display()
                ),
                parts: vec![library],
            });
        };
        let mut caveat = String::new();
        if self.symbols.get(ApiFunction::LsaBarrierDestroy).is_none() {
            caveat.push_str(
                "; this release has no LSA barrier session destroy (NCCL 2.32+ has), so \
                 cudajit_nccl_lsa_barrier_destroy (and its _warp, _thread, _lanes and \
                 _warp_span forms) is left undefined",
            );
        }
        if self.symbols.get(ApiFunction::GinPut).is_none() {
            caveat.push_str(
                "; cudajit's GIN functions (cudajit_nccl_gin_*, NCCL 2.32+) are left undefined",
            );
        }
        Ok(ProvidedLibrary {
            origin: format!(
                "NCCL {} {} with cudajit's C-ABI shim for {arch}{caveat}",
                self.version,
                self.path.display()
            ),
            parts: vec![
                LibraryPart {
                    name: "cudajit_nccl_shim.ltoir".to_owned(),
                    kind: LibraryKind::LtoIr,
                    bytes: shim,
                },
                library,
            ],
        })
    }

    /// This library as an nvJitLink input.
    pub fn link_input(&self) -> LinkInput<'_> {
        LinkInput {
            name: self
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("nccl-device-library"),
            kind: self.kind,
            bytes: &self.bytes,
        }
    }

    /// Links `kernels` (LTO-IR from libNVVM `-gen-lto`) with this library for `arch`
    /// (`-arch=sm_XY -lto`), plus the linked PTX when `want_ptx`. Functions left undefined
    /// come back as [`DeviceCodeError::MissingSymbols`], a device library newer than
    /// nvJitLink as [`DeviceCodeError::NvJitLinkTooOld`].
    pub fn link(
        &self,
        nvjitlink: &NvJitLink,
        kernels: &[LinkInput<'_>],
        arch: Arch,
        want_ptx: bool,
    ) -> Result<Linked> {
        let mut inputs = kernels.to_vec();
        inputs.push(self.link_input());
        let arch_option = format!("-arch={}", arch.sm_name());
        nvjitlink
            .link(&inputs, &[arch_option.as_str(), "-lto"], want_ptx)
            .map_err(|e| self.link_error(e, nvjitlink))
    }

    fn link_error(&self, e: ToolchainError, nvjitlink: &NvJitLink) -> DeviceCodeError {
        if let ToolchainError::NvJitLinkFailed(failure) = &e {
            let unresolved = unresolved::unresolved_symbols(&failure.error_log);
            if !unresolved.is_empty() {
                return DeviceCodeError::MissingSymbols {
                    missing: unresolved
                        .into_iter()
                        .map(|symbol| MissingSymbol {
                            function: unresolved::function_of(&symbol).map(str::to_owned),
                            symbol,
                        })
                        .collect(),
                    generation: self.symbols.generation,
                    path: self.path.clone(),
                    version: self.version,
                    log: failure.error_log.clone(),
                };
            }
            if failure.status == "NVJITLINK_ERROR_OUTDATED_LIBRARY" {
                let (major, minor) = nvjitlink.version();
                return DeviceCodeError::NvJitLinkTooOld {
                    version: self.version,
                    path: self.path.clone(),
                    nvjitlink: nvjitlink.path().to_path_buf(),
                    nvjitlink_version: format!("{major}.{minor}"),
                };
            }
        }
        DeviceCodeError::Link {
            version: self.version,
            path: self.path.clone(),
            source: e,
        }
    }
}

/// `<cudajit cache>/nccl-device`, or a directory under the system's temporary directory
/// when the cache is disabled (the bridge must still exist as a file while linking).
fn cache_dir(env: &SearchEnv) -> Result<PathBuf> {
    let var = |k: &str| env.var(k).and_then(|v| v.to_str()).map(str::to_owned);
    let dir = cudajit_codegen::cache::configured_dir(var)?.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("cudajit-nccl-{}", std::process::id()))
    });
    Ok(dir.join("nccl-device"))
}

/// The NCCL device library of the process's NCCL ([`LoadedNccl::global`]) for SM version `sm`
/// (e.g. 90), as the parts a kernel written against the bridge's C ABI (`cudajit_nccl_*`)
/// links: usable as the provider of a [`cudajit_core::external::DeviceLibrary`],
///
/// ```no_run
/// use cudajit_core::external::DeviceLibrary;
/// static NCCL: DeviceLibrary =
///     DeviceLibrary::provided("nccl", cudajit_nccl::device_code::provide_for_loaded_nccl);
/// ```
///
/// Tools (nvcc for the 2.28 bridge, the cache directory) are found from the process
/// environment; the shim is compiled by the process's libNVVM ([`Toolchain::global`]).
/// The error says what is missing and how to fix it.
pub fn provide_for_loaded_nccl(sm: u32) -> std::result::Result<ProvidedLibrary, String> {
    let arch = Arch::new(sm / 10, sm % 10);
    let nccl = LoadedNccl::global().map_err(|e| {
        format!(
            "the NCCL device library comes from the loaded NCCL, which could not be loaded: \
             {e}"
        )
    })?;
    let toolchain = Toolchain::global()
        .map_err(|e| format!("compiling cudajit's NCCL shim needs libNVVM: {e}"))?;
    let library =
        DeviceCode::for_nccl(&nccl, arch, &SearchEnv::from_process()).map_err(|e| e.to_string())?;
    library.parts(toolchain, arch).map_err(|e| e.to_string())
}
