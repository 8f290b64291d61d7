//! The cached compile: the memory cache and the disk cache in front of lowering and
//! linking, so a warm start neither parses nor lowers anything (it hashes a few dozen
//! bytes, reads one file and checks its checksum).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudajit_core::lower::Specialization;
use cudajit_core::CapturedKernel;

use super::link::link_nvvm_ir;
use super::lower::write_nvvm;
use super::missing_externs::name_missing_externs;
use super::{CompileError, CompileOptions};
use crate::cache::{self, CacheKey, KeyParts};
use crate::cubin;
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
    let KeyParts { key, components } = cache::cache_key(captured, spec, arch, options, toolchain);
    let disk = cache::disk_cache();
    // While `CUDAJIT_DUMP` is set the disk cache is written but not read, so that every
    // kernel the program uses is compiled, and dumped, once.
    let readable_disk = if crate::dump::enabled() { None } else { disk };
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
        if let Some(bytes) = cache::disk_lookup(readable_disk, &key, valid) {
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
    let ir = write_nvvm(captured, spec, options, &entry)?;
    let lower = lower_started.elapsed();
    let libraries = captured.reachable_libraries();
    let (linked, nvvm_time, link_time) =
        link_nvvm_ir(toolchain, &entry, &ir, arch, options, &libraries, false)
            .map_err(|e| name_missing_externs(e, captured, &ir, arch))?;
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
