//! The 2.28 bridge: `bridge_2_28.cu` compiled by nvcc into a fatbin holding LTO-IR, and
//! kept on disk. nvcc takes about a second and a half, far too long to pay per process,
//! so the fatbin is cached under a name derived from everything that changes it: the
//! NCCL release, a hash of its device headers, the GPU architecture, a hash of the
//! bridge source, the `ncclDevComm` size it is checked against and nvcc's identity (LTO-IR from a newer nvcc does not link with an
//! older nvJitLink).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cudajit_codegen::Arch;
use sha2::{Digest, Sha256};

use super::error::{DeviceCodeError, Result};
use super::nvcc::{self, Nvcc};
use crate::version::NcclVersion;

/// The bridge's C++ source.
pub const SOURCE: &str = include_str!("bridge_2_28.cu");

/// Builds (or finds cached) the bridge for the headers in `include_dir`; returns the
/// fatbin's path under `cache_dir`. `dev_comm_bytes`, the host bindings' size of
/// `ncclDevComm` for this release, is checked by a `static_assert` in the bridge.
pub fn build(
    nvcc: &Nvcc,
    include_dir: &Path,
    version: NcclVersion,
    arch: Arch,
    dev_comm_bytes: Option<usize>,
    cache_dir: &Path,
) -> Result<PathBuf> {
    let key = key(nvcc, include_dir, version, arch, dev_comm_bytes)?;
    let path = cache_dir.join(format!("bridge-{version}-{arch}-{}.fatbin", &key[..16]));
    if path.is_file() {
        tracing::debug!(path = %path.display(), "NCCL bridge: cached");
        return Ok(path);
    }
    let io = |what: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |e: std::io::Error| DeviceCodeError::Io {
            what,
            path,
            message: e.to_string(),
        }
    };
    // A private work directory, so concurrent builds never see each other's files; the
    // finished fatbin is renamed into place, which is atomic.
    let work = cache_dir.join(format!("tmp-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&work).map_err(io("cannot create", &work))?;
    let source = work.join("bridge_2_28.cu");
    std::fs::write(&source, SOURCE).map_err(io("cannot write", &source))?;
    let out = work.join("bridge.fatbin");
    let build = |defines: &[&str]| {
        let mut cmd = nvcc.command(include_dir);
        cmd.args(defines);
        if let Some(bytes) = dev_comm_bytes {
            cmd.arg(format!("-DCUDAJIT_DEV_COMM_BYTES={bytes}"));
        }
        cmd.args(["-dlto", "-rdc=true", "-fatbin"])
            .arg(format!("-arch={}", arch.sm_name()))
            .arg("-o")
            .arg(&out)
            .arg(&source);
        cmd
    };
    let started = std::time::Instant::now();
    let finished = nvcc::run_with_header_fallbacks(build).and_then(|()| {
        std::fs::rename(&out, &path).map_err(|e| {
            let stored = format!(
                "(renaming into the cache) cannot store {}: {e}",
                path.display()
            );
            ("rename".to_owned(), stored)
        })
    });
    let _ = std::fs::remove_dir_all(&work);
    finished.map_err(|(command, stderr)| DeviceCodeError::BridgeCompile {
        version,
        include_dir: include_dir.to_path_buf(),
        command,
        stderr,
    })?;
    tracing::info!(path = %path.display(), elapsed = ?started.elapsed(), "NCCL bridge compiled");
    Ok(path)
}

/// The cache key: SHA-256 over the release, the device headers, the architecture, the
/// bridge source, the checked `ncclDevComm` size and nvcc's path, size and modification
/// time.
fn key(
    nvcc: &Nvcc,
    include_dir: &Path,
    version: NcclVersion,
    arch: Arch,
    dev_comm_bytes: Option<usize>,
) -> Result<String> {
    let mut h = Sha256::new();
    h.update(b"cudajit-nccl bridge v1\0");
    h.update(version.to_string().as_bytes());
    h.update(headers_hash(include_dir)?.as_bytes());
    h.update(arch.sm_name().as_bytes());
    h.update(Sha256::digest(SOURCE.as_bytes()));
    h.update(format!("{dev_comm_bytes:?}").as_bytes());
    h.update(nvcc.path.to_string_lossy().as_bytes());
    if let Ok(meta) = std::fs::metadata(&nvcc.path) {
        h.update(meta.len().to_le_bytes());
        if let Ok(t) = meta.modified().and_then(|t| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_err(std::io::Error::other)
        }) {
            h.update(t.as_nanos().to_le_bytes());
        }
    }
    Ok(hex(&h.finalize()))
}

/// SHA-256 over `nccl.h`, `nccl_device.h` and everything under `nccl_device/`, by
/// relative path and contents, in sorted order.
pub fn headers_hash(include_dir: &Path) -> Result<String> {
    let mut files = vec![
        include_dir.join("nccl.h"),
        include_dir.join("nccl_device.h"),
    ];
    collect(&include_dir.join("nccl_device"), &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        let bytes = std::fs::read(f).map_err(|e| DeviceCodeError::Io {
            what: "cannot read the NCCL header",
            path: f.clone(),
            message: e.to_string(),
        })?;
        let rel = f.strip_prefix(include_dir).unwrap_or(f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(hex(&h.finalize()))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| DeviceCodeError::Io {
        what: "cannot list the NCCL headers in",
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unique() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
