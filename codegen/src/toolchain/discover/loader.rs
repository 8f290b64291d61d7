//! Last-resort discovery through the dynamic loader's own search path
//! (`/etc/ld.so.cache`, `DT_RUNPATH`, the `LD_LIBRARY_PATH` the process was
//! started with).
//!
//! The loader's path cannot be inspected without reimplementing it, so the
//! probe asks the loader itself: `dlopen` the bare soname. The handle is
//! deliberately leaked: the library is about to be loaded for real anyway
//! (the second `dlopen` only bumps a reference count), and unloading NVIDIA's
//! libraries is not something we want to exercise (see `dylib.rs`).

use std::mem::ManuallyDrop;
use std::path::PathBuf;

/// `dlopen`s `soname`; on success returns the file the loader picked (read
/// back from `/proc/self/maps` where available, else the soname itself).
///
/// # Safety
///
/// Loading runs the library's initialisers: the caller vouches that the
/// library `soname` resolves to has none with preconditions (NVIDIA's
/// compiler libraries and NCCL have none).
pub unsafe fn probe(soname: &str) -> Option<PathBuf> {
    // SAFETY: the caller vouches for the initialisers (see above).
    let lib = unsafe { libloading::Library::new(soname) }.ok()?;
    let _leaked = ManuallyDrop::new(lib);
    Some(mapped_file(soname).unwrap_or_else(|| PathBuf::from(soname)))
}

/// The mapped file whose name starts with the soname's stem (`libnvvm.so`
/// matches `libnvvm.so.4.0.0`, since the loader resolves symlinks).
fn mapped_file(soname: &str) -> Option<PathBuf> {
    let stem = soname.find(".so").map_or(soname, |i| &soname[..i + 3]);
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.find('/').map(|i| PathBuf::from(&line[i..])))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(stem))
        })
}
