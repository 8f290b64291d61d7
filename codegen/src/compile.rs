//! The JIT pipeline, without the driver: captured kernel → IR → NVVM IR → LTO-IR (libNVVM)
//! → cubin (nvJitLink), with the in-memory and on-disk caches in front.
//!
//! The cache key is computed from what the macro hashed at compile time (the captured
//! syntax), so a warm start neither parses nor lowers anything: it hashes a few dozen bytes,
//! reads one file and checks its checksum.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudajit_core::external::{DeviceLibrary, LibraryError, LibraryKind};
use cudajit_core::lower::Specialization;
use cudajit_core::{CapturedKernel, LowerCapturedError};

use crate::cache::{self, CacheKey, KeyBuilder, KeyParts};
use crate::cubin::{self, CubinError};
use crate::nvvm::{self, WriteError};
use crate::target::Arch;
use crate::toolchain::{InputKind, LinkInput, NvvmModule, Toolchain, ToolchainError};

/// Options that change the generated code; all of them are part of the cache key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// libNVVM optimisation level, 0 to 3.
    pub opt_level: u8,
    /// Contract `a * b + c` into fused multiply-adds, as nvcc does by default (`-fmad=true`).
    pub fma: bool,
    /// Check every index against its slice's or array's length (on by default in debug
    /// builds of the kernel's crate; `CUDAJIT_BOUNDS_CHECKS=0|1` overrides).
    pub bounds_checks: bool,
    /// Check `debug_assert!`s (on in debug builds of the kernel's crate).
    pub debug_assertions: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            opt_level: 3,
            fma: true,
            bounds_checks: false,
            debug_assertions: false,
        }
    }
}

impl CompileOptions {
    /// The options of a kernel whose crate was built with `debug_assertions` as given:
    /// checks follow the build, unless `CUDAJIT_BOUNDS_CHECKS` says otherwise;
    /// `CUDAJIT_FMA=0` turns off the contraction of `a * b + c` into FMAs (so float
    /// results are bit-identical to the CPU simulator's, which never contracts).
    pub fn for_build(debug_assertions: bool) -> Self {
        let flag = |name: &str| match std::env::var(name).ok().as_deref() {
            Some("0") | Some("off") | Some("false") => Some(false),
            Some("1") | Some("on") | Some("true") => Some(true),
            _ => None,
        };
        CompileOptions {
            bounds_checks: flag("CUDAJIT_BOUNDS_CHECKS").unwrap_or(debug_assertions),
            debug_assertions,
            fma: flag("CUDAJIT_FMA").unwrap_or(true),
            ..CompileOptions::default()
        }
    }

    /// The options of the NVVM IR writer.
    pub fn write_options(&self, file: &str) -> nvvm::WriteOptions {
        nvvm::WriteOptions {
            bounds_checks: self.bounds_checks,
            debug_assertions: self.debug_assertions,
            file: file.to_owned(),
        }
    }

    /// libNVVM's options for `arch`.
    pub fn nvvm_options(&self, arch: Arch) -> Vec<String> {
        vec![
            format!("-arch={}", arch.compute_name()),
            format!("-opt={}", self.opt_level.min(3)),
            format!("-fma={}", u8::from(self.fma)),
            "-gen-lto".to_owned(),
        ]
    }

    /// nvJitLink's options for `arch`.
    pub fn link_options(&self, arch: Arch) -> Vec<String> {
        let mut options = vec![format!("-arch={}", arch.sm_name()), "-lto".to_owned()];
        // With `-lto`, nvJitLink generates the code and contracts `a * b + c` on its own
        // unless told not to: libNVVM's `-fma=0` alone does not stop it.
        if !self.fma {
            options.push("-fma=0".to_owned());
        }
        options
    }
}

/// Where a compiled kernel came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubinOrigin {
    /// Compiled earlier in this process.
    Memory,
    /// Read from the disk cache.
    Disk,
    /// Compiled now by libNVVM and nvJitLink.
    Compiled,
}

/// Timings and provenance of one compilation request.
#[derive(Clone, Debug)]
pub struct CompileReport {
    pub origin: CubinOrigin,
    /// Computing the key and consulting the caches.
    pub lookup: Duration,
    /// Parsing, lowering, validating and writing NVVM IR.
    pub lower: Duration,
    /// libNVVM: NVVM IR to LTO-IR.
    pub nvvm: Duration,
    /// nvJitLink: LTO-IR to cubin.
    pub link: Duration,
    /// The disk cache entry (read or written), if the disk cache is on.
    pub cache_file: Option<PathBuf>,
}

/// A kernel compiled for one architecture.
#[derive(Clone, Debug)]
pub struct CompiledKernel {
    /// The kernel's symbol in the cubin.
    pub entry: String,
    pub arch: Arch,
    pub cubin: Arc<[u8]>,
    pub key: CacheKey,
    pub report: CompileReport,
}

/// Why a kernel could not be compiled. Every variant names the kernel.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The captured kernel did not become validated IR ([`CapturedKernel::lower`]).
    #[error(transparent)]
    Lower(#[from] LowerCapturedError),
    #[error("kernel `{kernel}`: {source}")]
    Write { kernel: String, source: WriteError },
    #[error("kernel `{kernel}`: {source}")]
    Toolchain {
        kernel: String,
        source: ToolchainError,
    },
    #[error("kernel `{kernel}`: nvJitLink produced no usable cubin: {source}")]
    Cubin { kernel: String, source: CubinError },
    #[error("kernel `{kernel}`: {source}")]
    Library {
        kernel: String,
        source: LibraryError,
    },
    #[error(
        "kernel `{kernel}`: {}\n--- nvJitLink log ---\n{log}",
        missing.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    MissingExtern {
        kernel: String,
        missing: Vec<MissingExtern>,
        log: String,
    },
}

/// An `#[extern_device]` symbol that no linked device library defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingExtern {
    /// The symbol nvJitLink could not resolve.
    pub symbol: String,
    /// The `#[extern_device]` function bound to it, if one is.
    pub function: Option<String>,
    /// The library the function names, and where its bytes come from.
    pub library: Option<(String, String)>,
}

impl std::fmt::Display for MissingExtern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.function, &self.library) {
            (Some(function), Some((library, origin))) => write!(
                f,
                "the `#[extern_device]` function `{function}` binds to the symbol `{}`, which \
                 the device library `{library}` ({origin}) does not define; check the symbol \
                 (`#[link_name]`), that the library exports it `extern \"C\"`, and that it \
                 was rebuilt",
                self.symbol
            ),
            _ => write!(f, "no linked input defines the symbol `{}`", self.symbol),
        }
    }
}

/// The NVVM IR text of a captured kernel's specialisation.
pub fn nvvm_ir(
    captured: &'static CapturedKernel,
    spec: &Specialization,
) -> Result<String, CompileError> {
    nvvm_ir_with(captured, spec, &CompileOptions::default())
}

/// The NVVM IR text of a captured kernel's specialisation under `options`.
pub fn nvvm_ir_with(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    options: &CompileOptions,
) -> Result<String, CompileError> {
    let (module, info) = captured.lower(spec)?;
    crate::dump::ir(
        &cudajit_core::lower::entry_symbol(captured.name, spec),
        &module,
    );
    let write = options.write_options(captured.file);
    nvvm::write_module_with(&module, &info, &write).map_err(|source| CompileError::Write {
        kernel: captured.name.to_owned(),
        source,
    })
}

/// The cache key of `captured` for `arch`: everything that changes the cubin.
pub fn cache_key(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    arch: Arch,
    options: &CompileOptions,
    toolchain: &Toolchain,
) -> KeyParts {
    let mut key = KeyBuilder::new(&format!(
        "cudajit-cubin/store{}/ast{}",
        cache::store::STORE_FORMAT,
        cudajit_core::ast::FORMAT_VERSION
    ));
    key.field("cudajit", env!("CARGO_PKG_VERSION").as_bytes())
        .field("sources", env!("CUDAJIT_SOURCE_FINGERPRINT").as_bytes())
        .field("kernel", captured.name.as_bytes())
        .field("source", captured.source_hash.as_bytes())
        .field_labelled(
            "specialisation",
            format!("{spec:?}").as_bytes(),
            &spec.describe(),
        );
    // Every device function the kernel reaches, by the hash its macro computed.
    for function in captured.reachable().into_iter().skip(1) {
        key.field("device-function", function.source_hash.as_bytes());
    }
    // The device libraries its `#[extern_device]` functions link, by the content of
    // their parts for `arch`.
    for library in captured.reachable_libraries() {
        key.field_labelled(
            "device-library",
            &library_identity(library, arch),
            &format!("{} ({})", library.name(), library.origin_for(arch.number())),
        );
    }
    // The layouts of the structs it takes, as rustc computed them.
    for layout in captured.reachable_structs() {
        key.field("struct", format!("{layout:?}").as_bytes());
    }
    key.field("arch", arch.sm_name().as_bytes())
        .field(
            "nvvm-options",
            options.nvvm_options(arch).join(" ").as_bytes(),
        )
        .field(
            "link-options",
            options.link_options(arch).join(" ").as_bytes(),
        )
        .field(
            "checks",
            &[
                u8::from(options.bounds_checks),
                u8::from(options.debug_assertions),
            ],
        );
    // libNVVM, libdevice, nvJitLink: SHA-256 and version, memoised in the cache directory
    // (codegen/src/toolchain_identity.rs), so a warm start neither hashes nor loads them.
    let toolchain_fields =
        crate::toolchain_identity::toolchain_fields(toolchain, cache::memo_dir());
    for (tag, value, label) in toolchain_fields.iter() {
        key.field_labelled(tag, value, label);
    }
    key.parts()
}

/// The identity ranks of a communicator agree on before a kernel's first launch
/// (`cudajit::nccl::device::DevComm`): the kernel's name and captured source, every
/// device function it reaches, the layouts of the structs it takes and its
/// specialisation. Unlike [`cache_key`] it leaves out the GPU architecture, the
/// toolchain, the device libraries' builds and the checks of the build, which may differ
/// between ranks running the same kernel; anything that changes what the kernel does is in.
pub fn launch_identity(captured: &'static CapturedKernel, spec: &Specialization) -> CacheKey {
    let mut key = KeyBuilder::new(&format!(
        "cudajit-launch-identity/1/ast{}",
        cudajit_core::ast::FORMAT_VERSION
    ));
    key.field("kernel", captured.name.as_bytes())
        .field("source", captured.source_hash.as_bytes())
        .field("specialisation", format!("{spec:?}").as_bytes());
    for function in captured.reachable().into_iter().skip(1) {
        key.field("device-function", function.source_hash.as_bytes());
    }
    for layout in captured.reachable_structs() {
        key.field("struct", format!("{layout:?}").as_bytes());
    }
    key.finish()
}

/// What identifies a device library in a cache key for `arch`: its name, then the kind
/// and SHA-256 of each of its parts for `arch`, in link order (memoised per library and
/// architecture, so a warm start hashes each file once per process), or the reason it
/// cannot be had (the compile then fails, so that key never holds a cubin).
pub fn library_identity(library: &'static DeviceLibrary, arch: Arch) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    type Hashes = Mutex<HashMap<(usize, Arch), Vec<u8>>>;
    static HASHES: OnceLock<Hashes> = OnceLock::new();
    let memo = (library as *const DeviceLibrary as usize, arch);
    let hashes = HASHES.get_or_init(Default::default);
    if let Some(hash) = lock(hashes).get(&memo) {
        return hash.clone();
    }
    let mut identity = format!("{}/", library.name()).into_bytes();
    match library.parts(arch.number()) {
        Ok(provided) => {
            for part in &provided.parts {
                identity.extend_from_slice(format!("{:?}:", part.kind).as_bytes());
                identity.extend_from_slice(&Sha256::digest(&part.bytes));
                identity.push(b'/');
            }
            lock(hashes).insert(memo, identity.clone());
        }
        Err(error) => identity.extend_from_slice(error.to_string().as_bytes()),
    }
    identity
}

/// nvJitLink's input kind for a device library.
fn input_kind(kind: LibraryKind) -> InputKind {
    match kind {
        LibraryKind::LtoIr => InputKind::LtoIr,
        LibraryKind::Fatbin => InputKind::Fatbin,
        LibraryKind::Ptx => InputKind::Ptx,
        LibraryKind::Cubin => InputKind::Cubin,
    }
}

/// The `#[extern_device]` functions `captured` reaches: (function, symbol, library).
fn extern_functions(
    captured: &'static CapturedKernel,
) -> Vec<(String, String, &'static DeviceLibrary)> {
    captured
        .reachable()
        .into_iter()
        .filter_map(|function| {
            let library = function.library?();
            let symbol = function.parse().ok()?.external?;
            Some((function.name.to_owned(), symbol, library))
        })
        .collect()
}

type MemoryCache = Mutex<HashMap<CacheKey, Arc<[u8]>>>;

fn memory_cache() -> &'static MemoryCache {
    static CACHE: OnceLock<MemoryCache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Compiles `captured` for `arch`, or fetches it from the memory or disk cache.
pub fn compile_kernel(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    arch: Arch,
    options: &CompileOptions,
) -> Result<CompiledKernel, CompileError> {
    crate::log::init_from_env();
    let entry = cudajit_core::lower::entry_symbol(captured.name, spec);
    let started = Instant::now();
    let toolchain_error = |source| CompileError::Toolchain {
        kernel: captured.name.to_owned(),
        source,
    };
    let toolchain = Toolchain::global().map_err(toolchain_error)?;
    let KeyParts { key, components } = cache_key(captured, spec, arch, options, toolchain);
    let disk = cache::disk_cache();
    let cache_file = disk.map(|d| d.path_for(&key));
    let finish = |cubin: Arc<[u8]>, report: CompileReport| CompiledKernel {
        entry: entry.clone(),
        arch,
        cubin,
        key,
        report,
    };
    let report = |origin, lookup, lower, nvvm, link| CompileReport {
        origin,
        lookup,
        lower,
        nvvm,
        link,
        cache_file: cache_file.clone(),
    };

    if let Some(cubin) = lock(memory_cache()).get(&key).cloned() {
        let lookup = started.elapsed();
        return Ok(finish(
            cubin,
            report(
                CubinOrigin::Memory,
                lookup,
                Duration::ZERO,
                Duration::ZERO,
                Duration::ZERO,
            ),
        ));
    }
    // ---- cache section (codegen/src/cache/): disk lookup; at most one compile per key
    // across threads and processes (wait for whoever compiles it, then look again);
    // miss explanation.
    let hit = |cubin: Arc<[u8]>, origin| {
        let zero = Duration::ZERO;
        finish(cubin, report(origin, started.elapsed(), zero, zero, zero))
    };
    let valid = |bytes: &[u8]| cubin::inspect(bytes).is_ok_and(|info| info.has_function(&entry));
    let mut _compile_lock = None;
    for locked in [false, true] {
        if locked {
            let lock_path = disk.map(|d| d.lock_path(&key));
            _compile_lock = Some(cache::CompileLock::acquire(
                &key,
                &entry,
                lock_path.as_deref(),
            ));
            if let Some(cubin) = lock(memory_cache()).get(&key).cloned() {
                return Ok(hit(cubin, CubinOrigin::Memory));
            }
        }
        if let Some(bytes) = cache::disk_lookup(disk, &key, valid) {
            let cubin: Arc<[u8]> = bytes.into();
            lock(memory_cache()).insert(key, cubin.clone());
            return Ok(hit(cubin, CubinOrigin::Disk));
        }
    }
    if tracing::enabled!(tracing::Level::DEBUG) {
        tracing::debug!(
            "cudajit: cache miss for kernel `{entry}` on {arch} (key {}): {}; compiling",
            &key.hex()[..16],
            cache::explain_miss(disk, captured.name, &components)
        );
    }
    // ---- end of cache section
    let lookup = started.elapsed();

    let lower_started = Instant::now();
    let text = nvvm_ir_with(captured, spec, options)?;
    let lower = lower_started.elapsed();
    let libraries = captured.reachable_libraries();
    let (linked, nvvm_time, link_time) =
        link_nvvm_ir(toolchain, &entry, &text, arch, options, &libraries, false)
            .map_err(|e| name_missing_externs(e, captured, arch))?;
    let bytes = linked.cubin;
    let cubin: Arc<[u8]> = bytes.into();
    if let Some(disk) = disk {
        let meta = cache::entry_meta(captured.name, &arch.sm_name(), &components);
        disk.put(&key, &meta, &cubin);
    }
    lock(memory_cache()).insert(key, cubin.clone());
    Ok(finish(
        cubin,
        report(CubinOrigin::Compiled, lookup, lower, nvvm_time, link_time),
    ))
}

/// The linked PTX of a captured kernel's specialisation (nvJitLink `-ptx`), with its device
/// libraries: to inspect what LTO made of calls into them. Bypasses the caches.
pub fn linked_ptx(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    arch: Arch,
    options: &CompileOptions,
) -> Result<String, CompileError> {
    let kernel = captured.name.to_owned();
    let toolchain = Toolchain::global().map_err(|source| CompileError::Toolchain {
        kernel: kernel.clone(),
        source,
    })?;
    let entry = cudajit_core::lower::entry_symbol(captured.name, spec);
    let text = nvvm_ir_with(captured, spec, options)?;
    let libraries = captured.reachable_libraries();
    let (linked, _, _) = link_nvvm_ir(toolchain, &entry, &text, arch, options, &libraries, true)
        .map_err(|e| name_missing_externs(e, captured, arch))?;
    Ok(linked.ptx.unwrap_or_default())
}

/// A link failure that names unresolved symbols, mapped back to the `#[extern_device]`
/// functions and device libraries of `captured` (linked for `arch`).
fn name_missing_externs(
    error: CompileError,
    captured: &'static CapturedKernel,
    arch: Arch,
) -> CompileError {
    let CompileError::Toolchain {
        kernel,
        source: ToolchainError::NvJitLinkFailed(failure),
    } = &error
    else {
        return error;
    };
    let unresolved = failure.unresolved_symbols();
    if unresolved.is_empty() {
        return error;
    }
    let externs = extern_functions(captured);
    let missing = unresolved
        .into_iter()
        .map(|symbol| {
            let bound = externs.iter().find(|(_, s, _)| *s == symbol);
            MissingExtern {
                function: bound.map(|(function, _, _)| function.clone()),
                library: bound.map(|(_, _, library)| {
                    (library.name().to_owned(), library.origin_for(arch.number()))
                }),
                symbol,
            }
        })
        .collect();
    CompileError::MissingExtern {
        kernel: kernel.clone(),
        missing,
        log: failure.error_log.clone(),
    }
}

/// NVVM IR text → cubin for `arch`, checking that the cubin defines `entry`.
pub fn compile_nvvm_ir(
    toolchain: &Toolchain,
    entry: &str,
    text: &str,
    arch: Arch,
    options: &CompileOptions,
) -> Result<(Vec<u8>, Duration, Duration), CompileError> {
    let (linked, nvvm_time, link_time) =
        link_nvvm_ir(toolchain, entry, text, arch, options, &[], false)?;
    Ok((linked.cubin, nvvm_time, link_time))
}

/// NVVM IR text → cubin (and PTX if `want_ptx`) for `arch`, linked with `libraries`,
/// checking that the cubin defines `entry`.
pub fn link_nvvm_ir(
    toolchain: &Toolchain,
    entry: &str,
    text: &str,
    arch: Arch,
    options: &CompileOptions,
    libraries: &[&'static DeviceLibrary],
    want_ptx: bool,
) -> Result<(crate::toolchain::Linked, Duration, Duration), CompileError> {
    let error = |source| CompileError::Toolchain {
        kernel: entry.to_owned(),
        source,
    };
    let started = Instant::now();
    let nvvm_options = options.nvvm_options(arch);
    let nvvm_args: Vec<&str> = nvvm_options.iter().map(String::as_str).collect();
    // libdevice is added lazily, and only when the kernel calls one of its functions:
    // libNVVM then links just the functions used.
    let libdevice = if text.contains("@__nv_") {
        Some(toolchain.libdevice_bytes().map_err(error)?)
    } else {
        None
    };
    let mut modules = vec![NvvmModule::new(entry, text.as_bytes())];
    if let Some(libdevice) = libdevice {
        modules.push(NvvmModule::lazy("libdevice.10.bc", libdevice));
    }
    crate::dump::nvvm_ir(entry, arch, text);
    let step = crate::progress::Step::new(format!("libNVVM: compiling `{entry}` for {arch}"));
    let ltoir = toolchain
        .nvvm()
        .and_then(|nvvm| nvvm.compile(&modules, &nvvm_args))
        .map_err(error)?;
    step.finish();
    let nvvm_time = started.elapsed();

    let started = Instant::now();
    let link_options = options.link_options(arch);
    let link_args: Vec<&str> = link_options.iter().map(String::as_str).collect();
    // Every part of every library, for `arch`, in the libraries' order.
    let provided = libraries
        .iter()
        .map(|library| library.parts(arch.number()))
        .collect::<Result<Vec<_>, LibraryError>>()
        .map_err(|source| CompileError::Library {
            kernel: entry.to_owned(),
            source,
        })?;
    let mut inputs = vec![LinkInput {
        name: entry,
        kind: InputKind::LtoIr,
        bytes: &ltoir.result,
    }];
    for part in provided.iter().flat_map(|library| &library.parts) {
        inputs.push(LinkInput {
            name: &part.name,
            kind: input_kind(part.kind),
            bytes: &part.bytes,
        });
    }
    let input_bytes = inputs.iter().map(|i| i.bytes.len()).sum();
    let step = crate::progress::Step::sized(
        format!("nvJitLink: linking `{entry}` for {arch}"),
        input_bytes,
    );
    let linked = toolchain
        .nvjitlink()
        .and_then(|linker| linker.link(&inputs, &link_args, want_ptx))
        .map_err(error)?;
    step.finish();
    let link_time = started.elapsed();
    crate::dump::linked(toolchain, entry, arch, &inputs, &link_args, &linked.cubin);

    let info = cubin::inspect(&linked.cubin).map_err(|source| CompileError::Cubin {
        kernel: entry.to_owned(),
        source,
    })?;
    if !info.has_function(entry) {
        return Err(CompileError::Cubin {
            kernel: entry.to_owned(),
            source: CubinError("the kernel's entry point is missing"),
        });
    }
    Ok((linked, nvvm_time, link_time))
}

/// Locks a mutex, recovering the data if another thread panicked while holding it (the
/// caches hold only complete values, so the data is consistent).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    //! Provided device libraries through the real libNVVM and nvJitLink (skipped without
    //! NVIDIA's wheels unless `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

    use super::*;
    use cudajit_core::external::{LibraryPart, ProvidedLibrary};

    const HEADER: &str = r#"target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
"#;

    /// The toolchain of `CUDAJIT_TOOLS_DIR`, or `None` (printed) to skip.
    fn toolchain() -> Option<&'static Toolchain> {
        static TOOLCHAIN: OnceLock<Option<Toolchain>> = OnceLock::new();
        let found = TOOLCHAIN.get_or_init(|| {
            let env = crate::toolchain::SearchEnv::from_process();
            Toolchain::discover(&env).ok()
        });
        if found.is_none() {
            assert!(
                std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1"),
                "no libNVVM/nvJitLink and CUDAJIT_REQUIRE_TOOLCHAIN=1"
            );
            eprintln!("skipped: no libNVVM/nvJitLink (set CUDAJIT_TOOLS_DIR)");
        }
        found.as_ref()
    }

    /// A provider that compiles `provided_twice` with libNVVM `-gen-lto` for the SM asked.
    fn twice_provider(sm: u32) -> Result<ProvidedLibrary, String> {
        let toolchain = toolchain().ok_or("no toolchain")?;
        let source = format!(
            "{HEADER}define float @provided_twice(float %x) {{\n  %y = fmul float %x, 2.0\n  \
             ret float %y\n}}\n!nvvmir.version = !{{!0}}\n!0 = !{{i32 2, i32 0}}\n"
        );
        let arch = format!("-arch=compute_{sm}");
        let ltoir = toolchain
            .nvvm()
            .and_then(|nvvm| {
                nvvm.compile(
                    &[NvvmModule::new("twice.ll", source.as_bytes())],
                    &[arch.as_str(), "-gen-lto"],
                )
            })
            .map_err(|e| e.to_string())?
            .result;
        Ok(ProvidedLibrary {
            origin: format!("compiled by the test for sm_{sm}"),
            parts: vec![LibraryPart {
                name: "twice.ltoir".into(),
                kind: LibraryKind::LtoIr,
                bytes: ltoir,
            }],
        })
    }

    fn refusing_provider(sm: u32) -> Result<ProvidedLibrary, String> {
        Err(format!(
            "no library for sm_{sm} here; install one (fix: set TWICE_DIR)"
        ))
    }

    static TWICE: DeviceLibrary = DeviceLibrary::provided("twice", twice_provider);
    static REFUSING: DeviceLibrary = DeviceLibrary::provided("refusing", refusing_provider);

    /// A kernel storing `callee(*p)` to `*p` (in `@llvm.used`, else LTO drops it).
    fn kernel_calling(callee: &str) -> String {
        format!(
            "{HEADER}define void @calls_twice(float* %p) {{\n  %x = load float, float* %p\n  \
             %y = call float @{callee}(float %x)\n  store float %y, float* %p\n  ret void\n}}\n\
             declare float @{callee}(float)\n\
             @llvm.used = appending global [1 x i8*] [i8* bitcast (void (float*)* @calls_twice \
             to i8*)], section \"llvm.metadata\"\n\
             !nvvm.annotations = !{{!0}}\n!0 = !{{void (float*)* @calls_twice, !\"kernel\", i32 1}}\n\
             !nvvmir.version = !{{!1}}\n!1 = !{{i32 2, i32 0}}\n"
        )
    }

    #[test]
    fn a_provided_lto_ir_part_links_inlines_and_keys_the_cache() {
        let Some(toolchain) = toolchain() else { return };
        let options = CompileOptions::default();
        let (linked, _, _) = link_nvvm_ir(
            toolchain,
            "calls_twice",
            &kernel_calling("provided_twice"),
            Arch::SM_90,
            &options,
            &[&TWICE],
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let ptx = linked.ptx.unwrap();
        assert!(ptx.contains(".entry calls_twice"), "{ptx}");
        assert!(!ptx.contains("provided_twice"), "not inlined:\n{ptx}");

        // The identity holds the hash of the part provided for that architecture.
        use sha2::{Digest, Sha256};
        let sm90 = library_identity(&TWICE, Arch::SM_90);
        let part = &TWICE.parts(90).unwrap().parts[0];
        let mut expected = b"twice/LtoIr:".to_vec();
        expected.extend_from_slice(&Sha256::digest(&part.bytes));
        expected.push(b'/');
        assert_eq!(sm90, expected);
        assert_eq!(library_identity(&TWICE, Arch::SM_90), sm90);
        // Another architecture, other parts (compiled for compute_80), another identity.
        assert_ne!(library_identity(&TWICE, Arch::SM_80), sm90);
        assert_eq!(TWICE.origin_for(90), "compiled by the test for sm_90");
    }

    #[test]
    fn a_provider_error_is_a_library_compile_error() {
        let Some(toolchain) = toolchain() else { return };
        let error = link_nvvm_ir(
            toolchain,
            "calls_twice",
            &kernel_calling("provided_twice"),
            Arch::SM_90,
            &CompileOptions::default(),
            &[&REFUSING],
            false,
        )
        .expect_err("a refusing provider cannot link");
        assert!(matches!(error, CompileError::Library { .. }), "{error:?}");
        let text = error.to_string();
        for needle in [
            "kernel `calls_twice`",
            "device library `refusing`",
            "provided at run time for sm_90",
            "no library for sm_90 here; install one (fix: set TWICE_DIR)",
        ] {
            assert!(text.contains(needle), "`{needle}` missing from: {text}");
        }
        // The identity of a failing library carries the reason and is not memoised.
        let identity = library_identity(&REFUSING, Arch::SM_90);
        assert!(String::from_utf8_lossy(&identity).contains("no library for sm_90"));
    }

    #[test]
    fn a_symbol_no_part_defines_is_reported_unresolved() {
        let Some(toolchain) = toolchain() else { return };
        let error = link_nvvm_ir(
            toolchain,
            "calls_twice",
            &kernel_calling("provided_thrice"),
            Arch::SM_90,
            &CompileOptions::default(),
            &[&TWICE],
            false,
        )
        .expect_err("an undefined symbol cannot link");
        let CompileError::Toolchain {
            source: ToolchainError::NvJitLinkFailed(failure),
            ..
        } = &error
        else {
            panic!("expected an nvJitLink failure, got {error:?}");
        };
        assert_eq!(
            failure.unresolved_symbols(),
            vec!["provided_thrice".to_owned()]
        );
    }
}
