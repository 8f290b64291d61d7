//! The cached compile: the memory cache and the disk cache in front of lowering and
//! linking, so a warm start neither parses nor lowers anything (it hashes a few dozen
//! bytes, reads one file and checks its checksum).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudajit_core::lower::Specialization;
use cudajit_core::CapturedKernel;

use super::arch_target::{kernel_target, name_specific_instructions};
use super::link::link_nvvm_ir;
use super::lower::write_nvvm;
use super::missing_externs::name_missing_externs;
use super::{CompileError, CompileOptions};
use crate::cache::{self, CacheKey, KeyParts};
use crate::cubin;
use crate::progress;
use crate::sync::lock_ignoring_poison as lock;
use crate::target::Arch;
use crate::toolchain::Toolchain;

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
    /// The disk cache entry this cubin was read from or written to; `None` when the disk
    /// cache is off or the entry could not be written.
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

/// A cubin compiled or read in this process, with the disk entry holding it, if any.
type Remembered = (Arc<[u8]>, Option<PathBuf>);
type MemoryCache = Mutex<HashMap<CacheKey, Remembered>>;

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
    crate::log::notice_unheard_setting();
    let arch = kernel_target(captured, arch)?;
    let entry = cudajit_core::lower::entry_symbol(captured.name, spec);
    // Every event of the compile (cache lookup, miss explanation, libNVVM, nvJitLink) is
    // inside this span, for a program's own subscriber.
    let _span = tracing::debug_span!("compile", kernel = %entry, %arch).entered();
    let started = Instant::now();
    let toolchain_error = |source| CompileError::Toolchain {
        kernel: captured.name.to_owned(),
        source,
    };
    let toolchain = Toolchain::global().map_err(toolchain_error)?;
    let KeyParts { key, components } = super::cache_key(captured, spec, arch, options, toolchain);
    let environment_error = |source| CompileError::Environment {
        kernel: captured.name.to_owned(),
        source,
    };
    let disk = cache::disk_cache().map_err(environment_error)?;
    // While `CUDAJIT_DUMP` is set the disk cache is written but not read, so that every
    // kernel the program uses is compiled, and dumped, once.
    let readable_disk = if crate::dump::enabled() { None } else { disk };
    let finish = |(cubin, cache_file): Remembered, origin, times: [Duration; 4]| {
        let [lookup, lower, nvvm, link] = times;
        CompiledKernel {
            entry: entry.clone(),
            arch,
            cubin,
            key,
            report: CompileReport {
                origin,
                lookup,
                lower,
                nvvm,
                link,
                cache_file,
            },
        }
    };
    let hit = |remembered: Remembered, origin| {
        let zero = Duration::ZERO;
        finish(remembered, origin, [started.elapsed(), zero, zero, zero])
    };

    if let Some(remembered) = lock(memory_cache()).get(&key).cloned() {
        return Ok(hit(remembered, CubinOrigin::Memory));
    }
    // ---- cache section (codegen/src/cache/): disk lookup; at most one compile per key
    // across threads and processes (wait for whoever compiles it, then look again);
    // miss explanation.
    let valid = |bytes: &[u8]| cubin::inspect(bytes).is_ok_and(|info| info.has_function(&entry));
    let mut _compile_lock = None;
    let mut discarded = None;
    for locked in [false, true] {
        if locked {
            let lock_path = disk.map(|d| d.lock_path(&key));
            let waiting = "waiting for another thread or process compiling it (the cache's lock)";
            let _notice = progress::notice(&entry, waiting).map_err(environment_error)?;
            _compile_lock = Some(cache::CompileLock::acquire(
                &key,
                &entry,
                lock_path.as_deref(),
            ));
            if let Some(remembered) = lock(memory_cache()).get(&key).cloned() {
                return Ok(hit(remembered, CubinOrigin::Memory));
            }
        }
        match cache::disk_lookup(readable_disk, &key, valid) {
            Ok(bytes) => {
                let remembered: Remembered = (bytes.into(), disk.map(|d| d.path_for(&key)));
                lock(memory_cache()).insert(key, remembered.clone());
                return Ok(hit(remembered, CubinOrigin::Disk));
            }
            Err(reason) => discarded = reason.or(discarded),
        }
    }
    if tracing::enabled!(tracing::Level::DEBUG) {
        // A damaged entry of this very key is the reason, whatever other entries hold.
        let why = match &discarded {
            Some(reason) => format!("its entry was damaged and discarded: {reason}"),
            None => cache::explain_miss(disk, captured.name, &components),
        };
        tracing::debug!(
            "cudajit: cache miss for kernel `{entry}` on {arch} (key {}): {why}; compiling",
            &key.hex()[..16],
        );
    }
    // ---- end of cache section
    let lookup = started.elapsed();

    let step = format!("compiling for {arch} (libNVVM, nvJitLink)");
    let _notice = progress::notice(&entry, &step).map_err(environment_error)?;
    let lower_started = Instant::now();
    let ir = write_nvvm(captured, spec, options, &entry)?;
    let lower = lower_started.elapsed();
    let libraries = captured.reachable_libraries();
    let (linked, nvvm_time, link_time) =
        link_nvvm_ir(toolchain, &entry, &ir, arch, options, &libraries, false)
            .map_err(|e| name_missing_externs(e, captured, &ir, arch))
            .map_err(|e| name_specific_instructions(e, arch))?;
    let cubin: Arc<[u8]> = linked.cubin.into();
    let cache_file = disk.and_then(|disk| {
        let meta = cache::entry_meta(captured.name, &arch.sm_name(), &components);
        disk.put(&key, &meta, &cubin).then(|| disk.path_for(&key))
    });
    let remembered: Remembered = (cubin, cache_file);
    lock(memory_cache()).insert(key, remembered.clone());
    Ok(finish(
        remembered,
        CubinOrigin::Compiled,
        [lookup, lower, nvvm_time, link_time],
    ))
}
