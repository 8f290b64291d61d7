//! `CUDAJIT_DUMP=DIR`: write what each kernel became, so users can read it.
//!
//! For every kernel compiled while the variable is set, `DIR` receives
//! - `<entry>.ir.txt`: cudajit's typed IR (the `Debug` form of `cudajit_core::ir::Module`),
//! - `<entry>.<arch>.nvvm.ll`: the NVVM IR handed to libNVVM,
//! - `<entry>.<arch>.ptx`: the PTX of the linked program (a second nvJitLink session with
//!   `-ptx`: nvJitLink returns either a cubin or PTX per session),
//! - `<entry>.<arch>.cubin`: the cubin that is loaded,
//!
//! where `<entry>` is the kernel's symbol (its name, with a suffix per specialisation).
//! While dumping, the disk cache is not read (it is still written), so every kernel the
//! program uses is compiled, and dumped, once per process. `cudajit emit` prints these
//! files (and disassembles the cubin into SASS).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::target::Arch;
use crate::toolchain::{LinkInput, Toolchain};

/// The file kinds a dump holds, with their file-name suffixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpKind {
    /// cudajit's IR (architecture-independent).
    Ir,
    /// NVVM IR text.
    NvvmIr,
    /// Linked PTX.
    Ptx,
    /// The cubin.
    Cubin,
}

impl DumpKind {
    /// The dump file of `entry` for `arch` in `dir`.
    pub fn path(self, dir: &Path, entry: &str, arch: Arch) -> PathBuf {
        dir.join(match self {
            DumpKind::Ir => format!("{entry}.ir.txt"),
            DumpKind::NvvmIr => format!("{entry}.{arch}.nvvm.ll"),
            DumpKind::Ptx => format!("{entry}.{arch}.ptx"),
            DumpKind::Cubin => format!("{entry}.{arch}.cubin"),
        })
    }
}

/// The dump directory, from `CUDAJIT_DUMP` (read once per process).
pub fn dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::var_os("CUDAJIT_DUMP")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    })
    .as_deref()
}

/// Whether `CUDAJIT_DUMP` is set.
pub fn enabled() -> bool {
    dir().is_some()
}

fn write(path: PathBuf, bytes: &[u8]) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    let result = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, bytes));
    match result {
        Ok(()) => tracing::debug!("cudajit: dumped {}", path.display()),
        Err(error) => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cudajit: cannot write {} for CUDAJIT_DUMP ({error}); set CUDAJIT_DUMP to a writable directory",
                    path.display()
                );
            }
        }
    }
}

/// Dumps cudajit's IR of `entry` (any `Debug` value: the lowered module).
pub fn ir(entry: &str, module: &dyn std::fmt::Debug) {
    if let Some(dir) = dir() {
        let path = dir.join(format!("{entry}.ir.txt"));
        write(path, format!("{module:#?}\n").as_bytes());
    }
}

/// Dumps the NVVM IR of `entry` compiled for `arch`.
pub fn nvvm_ir(entry: &str, arch: Arch, text: &str) {
    if let Some(dir) = dir() {
        write(DumpKind::NvvmIr.path(dir, entry, arch), text.as_bytes());
    }
}

/// Dumps the cubin of `entry` and the PTX of the same link (`inputs` and `options` are
/// those of the link that made `cubin`).
pub fn linked(
    toolchain: &Toolchain,
    entry: &str,
    arch: Arch,
    inputs: &[LinkInput<'_>],
    options: &[&str],
    cubin: &[u8],
) {
    let Some(dir) = dir() else {
        return;
    };
    write(DumpKind::Cubin.path(dir, entry, arch), cubin);
    let ptx = toolchain
        .nvjitlink()
        .and_then(|linker| linker.link(inputs, options, true));
    match ptx {
        Ok(linked) => {
            if let Some(ptx) = linked.ptx {
                write(DumpKind::Ptx.path(dir, entry, arch), ptx.as_bytes());
            }
        }
        Err(error) => tracing::warn!("cudajit: no PTX dump for `{entry}`: {error}"),
    }
}
