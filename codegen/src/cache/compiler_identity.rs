//! What the cache key says about the compiler libraries: each file's BLAKE3 hash and
//! version, memoised so that a warm start neither hashes ~160 MB of libraries nor loads them.
//!
//! # How it stays cheap and exact
//!
//! The first process that needs the digest of a file (libNVVM, libdevice, nvJitLink, a
//! linked device library such as NCCL's `.ltoir`) reads and hashes it, and records the
//! result in `<cache dir>/toolchain-digests.v2` under the file's *stamp*: canonical path,
//! device, inode, size, modification time and status-change time. Every later process
//! takes one `stat` per file and finds the digest in the memo. A reinstalled or upgraded
//! library changes its stamp (a new file has a new inode and change time, which no user
//! can set), so it is hashed again; a stale memo line can therefore never vouch for
//! other bytes.
//!
//! # Why BLAKE3
//!
//! The first-ever identity hashes ~160 MB in whatever profile the *user's* program is built
//! in; a workspace's `[profile.dev.package.*]` override does not reach dependants. The
//! `blake3` crate's x86-64 and AArch64 kernels are assembly/intrinsics whose speed does
//! not depend on the user's opt-level: a debug build hashes the toolchain in about the
//! time a release build does (`docs/performance.md#first-ever-toolchain-identity`), where
//! `sha2` at `-O0` took ~3 s.
//!
//! # Where the version comes from
//!
//! Never from loading the library (a warm start must not load it, and `nvvmVersion` says
//! only "2.0"): it is read once, when the file is hashed, from the installation's own
//! metadata: the wheel's `*.dist-info` name (`nvidia_nvjitlink-13.0.88.dist-info`), a
//! toolkit's `version.json` (`libnvjitlink`, `cuda_nvcc` for libNVVM and libdevice), a
//! versioned file name (`libnvJitLink.so.13.0.88`; not libNVVM's, whose soname is its ABI
//! version), or a `cuda-13.0` toolkit directory; else `unknown`. It is stored in the
//! memo next to the hash, so it is the same in every process. The hash is what makes the
//! key exact; the version is what makes a miss explainable ("nvJitLink 13.0.88 ->
//! 13.1.0").
//!
//! # Without a disk cache
//!
//! With the disk cache off or unusable, keys live only as long as the process, so the
//! cheap identity (path, size, modification time) of
//! [`Toolchain::identity`](crate::toolchain::Toolchain::identity) is used and nothing is
//! hashed.

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::fs::{create_private_dir, read_trusted};
use super::key::hex;
use crate::toolchain::{Component, Located, Toolchain};

/// The memo's file name in the cache directory.
pub const MEMO_FILE: &str = "toolchain-digests.v2";

/// A file's content hash and installed version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileDigest {
    /// BLAKE3 of the file's bytes.
    pub hash: [u8; 32],
    /// The version its installation declares, or `unknown`.
    pub version: String,
}

impl FileDigest {
    /// `13.0.88 blake3:0123456789ab`: the readable form recorded in entries.
    pub fn label(&self) -> String {
        format!("{} blake3:{}", self.version, &hex(&self.hash)[..12])
    }
}

/// The identity of a file on disk: if any of this changes, the file may hold other bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Stamp {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    fn of(path: &Path) -> std::io::Result<Stamp> {
        let path = path.canonicalize()?;
        let metadata = fs::metadata(&path)?;
        #[cfg(unix)]
        let (dev, ino, mtime_ns, ctime_ns) = {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
            (
                metadata.dev(),
                metadata.ino(),
                ns(metadata.mtime(), metadata.mtime_nsec()),
                ns(metadata.ctime(), metadata.ctime_nsec()),
            )
        };
        #[cfg(not(unix))]
        let (dev, ino, mtime_ns, ctime_ns) = {
            let mtime = metadata
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128);
            (0, 0, mtime, 0)
        };
        Ok(Stamp {
            path,
            dev,
            ino,
            size: metadata.len(),
            mtime_ns,
            ctime_ns,
        })
    }

    fn line(&self, digest: &FileDigest) -> Option<String> {
        let path = self.path.to_str()?;
        let clean = |s: &str| !s.contains(['\t', '\n', '\r']);
        (clean(path) && clean(&digest.version)).then(|| {
            format!(
                "{path}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                self.dev,
                self.ino,
                self.size,
                self.mtime_ns,
                self.ctime_ns,
                hex(&digest.hash),
                digest.version
            )
        })
    }

    fn parse(line: &str) -> Option<(Stamp, FileDigest)> {
        let mut fields = line.split('\t');
        let mut next = || fields.next();
        let path = PathBuf::from(next()?);
        let stamp = Stamp {
            path,
            dev: next()?.parse().ok()?,
            ino: next()?.parse().ok()?,
            size: next()?.parse().ok()?,
            mtime_ns: next()?.parse().ok()?,
            ctime_ns: next()?.parse().ok()?,
        };
        let sha = next()?;
        let version = next()?.to_owned();
        if sha.len() != 64 {
            return None;
        }
        let mut hash = [0u8; 32];
        for (i, byte) in hash.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&sha[2 * i..2 * i + 2], 16).ok()?;
        }
        Some((stamp, FileDigest { hash, version }))
    }
}

/// Digests of files, memoised in a cache directory.
#[derive(Debug)]
pub struct DigestMemo {
    file: PathBuf,
    known: Mutex<Option<HashMap<Stamp, FileDigest>>>,
}

impl DigestMemo {
    /// The memo kept in cache directory `dir`.
    pub fn in_dir(dir: &Path) -> DigestMemo {
        DigestMemo {
            file: dir.join(MEMO_FILE),
            known: Mutex::new(None),
        }
    }

    /// The digest of `path` (of `component`, for the version lookup), from the memo or
    /// computed and recorded.
    pub fn digest(&self, path: &Path, component: Option<Component>) -> std::io::Result<FileDigest> {
        let stamp = Stamp::of(path)?;
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        let known = known.get_or_insert_with(|| read_memo(&self.file));
        if let Some(digest) = known.get(&stamp) {
            return Ok(digest.clone());
        }
        let started = Instant::now();
        let digest = FileDigest {
            hash: hash_file(&stamp.path)?,
            version: installed_version(&stamp.path, component),
        };
        tracing::debug!(
            "cudajit: hashed {} ({} MB) in {:.0} ms: {}; memoised in {}",
            stamp.path.display(),
            stamp.size >> 20,
            started.elapsed().as_secs_f64() * 1e3,
            digest.label(),
            self.file.display()
        );
        known.insert(stamp, digest.clone());
        if let Err(error) = write_memo(&self.file, known) {
            tracing::debug!(
                "cudajit: cannot record toolchain digests in {} ({error}); they will be recomputed",
                self.file.display()
            );
        }
        Ok(digest)
    }
}

fn read_memo(file: &Path) -> HashMap<Stamp, FileDigest> {
    let Ok(Some(bytes)) = read_trusted(file) else {
        return HashMap::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(Stamp::parse)
        .collect()
}

/// Rewrites the memo with what this process knows plus what the file holds now (another
/// process may have added lines), atomically.
fn write_memo(file: &Path, known: &HashMap<Stamp, FileDigest>) -> std::io::Result<()> {
    let mut merged = read_memo(file);
    merged.extend(known.iter().map(|(s, d)| (s.clone(), d.clone())));
    // Keep only lines for files that still have that stamp, so the memo stays small.
    merged.retain(|stamp, _| Stamp::of(&stamp.path).is_ok_and(|now| now == *stamp));
    let mut text: Vec<String> = merged.iter().filter_map(|(s, d)| s.line(d)).collect();
    text.sort();
    let dir = file.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let temp = dir.join(format!(".{MEMO_FILE}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut out = fs::File::create(&temp)?;
        out.write_all((text.join("\n") + "\n").as_bytes())?;
        out.sync_all()?;
        fs::rename(&temp, file)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// BLAKE3 of a file, streamed in 1 MiB reads (its SIMD kernels want large inputs).
pub fn hash_file(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut file = fs::File::open(path)?;
    let mut hasher = blake3::Hasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher.finalize().into())
}

/// The version an installation declares for the file at `path` (see the module docs).
pub fn installed_version(path: &Path, component: Option<Component>) -> String {
    let (dist, version_key) = match component {
        Some(Component::Nvvm | Component::Libdevice) => ("nvidia_nvvm", "cuda_nvcc"),
        Some(Component::NvJitLink) => ("nvidia_nvjitlink", "libnvjitlink"),
        Some(Component::Nvrtc) => ("nvidia_cuda_nvrtc", "cuda_nvrtc"),
        Some(Component::Nvcc) => ("nvidia_cuda_nvcc", "cuda_nvcc"),
        None => ("", ""),
    };
    for dir in path.ancestors().skip(1).take(5) {
        if !dist.is_empty() {
            if let Some(version) = wheel_version(dir, dist) {
                return version;
            }
        }
        if !version_key.is_empty() {
            if let Some(version) = toolkit_version(dir, version_key) {
                return version;
            }
        }
    }
    // libNVVM's soname (`libnvvm.so.4.0.0`) is its ABI version, not the CUDA release.
    let soname_is_release = !matches!(component, Some(Component::Nvvm | Component::Libdevice));
    soname_is_release
        .then(|| file_name_version(path))
        .flatten()
        .or_else(|| toolkit_dir_version(path))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// `13.0` from a `.../cuda-13.0/...` toolkit directory (distribution packages ship no
/// `version.json`).
fn toolkit_dir_version(path: &Path) -> Option<String> {
    path.ancestors().find_map(|dir| {
        let version = dir.file_name()?.to_str()?.strip_prefix("cuda-")?;
        let numeric = !version.is_empty()
            && version
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        numeric.then(|| version.to_owned())
    })
}

/// `13.0.88` from `<dir>/nvidia_nvjitlink-13.0.88.dist-info` (or `nvidia_nvjitlink_cu12-..`).
fn wheel_version(dir: &Path, dist: &str) -> Option<String> {
    fs::read_dir(dir).ok()?.flatten().find_map(|entry| {
        let name = entry.file_name().into_string().ok()?;
        let stem = name.strip_suffix(".dist-info")?;
        let (package, version) = stem.rsplit_once('-')?;
        let matches = package == dist
            || package
                .strip_prefix(dist)
                .is_some_and(|rest| rest.starts_with("_cu"));
        matches.then(|| version.to_owned())
    })
}

/// `version.json`'s `<key>.version` in a CUDA toolkit root.
fn toolkit_version(dir: &Path, key: &str) -> Option<String> {
    let text = fs::read_to_string(dir.join("version.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get(key)?.get("version")?.as_str().map(str::to_owned)
}

/// `13.0.88` from `libnvJitLink.so.13.0.88` (three or more numeric parts).
fn file_name_version(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let (_, suffix) = name.split_once(".so.")?;
    let parts: Vec<&str> = suffix.split('.').collect();
    (parts.len() >= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
    .then(|| suffix.to_owned())
}

/// The key fields for the toolchain: `(tag, key bytes, readable label)` for libNVVM,
/// libdevice and nvJitLink.
pub type ToolchainFields = Vec<(&'static str, Vec<u8>, String)>;

/// The toolchain's key fields. With `memo_dir` (the disk cache's directory), each file is
/// identified by its memoised BLAKE3 hash and version; without, by the cheap per-process
/// identity. Computed once per process per toolchain location.
pub fn toolchain_fields(toolchain: &Toolchain, memo_dir: Option<&Path>) -> Arc<ToolchainFields> {
    type Computed = Mutex<Vec<(Vec<PathBuf>, Option<PathBuf>, Arc<ToolchainFields>)>>;
    static COMPUTED: OnceLock<Computed> = OnceLock::new();
    let located = [
        toolchain.nvvm_location(),
        toolchain.libdevice_location(),
        toolchain.nvjitlink_location(),
    ];
    let paths: Vec<PathBuf> = located.iter().map(|l| l.path.clone()).collect();
    let memo_dir = memo_dir.map(Path::to_path_buf);
    let computed = COMPUTED.get_or_init(Default::default);
    let mut computed = computed.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, _, fields)) = computed
        .iter()
        .find(|(p, m, _)| *p == paths && *m == memo_dir)
    {
        return fields.clone();
    }
    let fields = Arc::new(compute_fields(toolchain, &located, memo_dir.as_deref()));
    computed.push((paths, memo_dir, fields.clone()));
    fields
}

fn compute_fields(
    toolchain: &Toolchain,
    located: &[&Located; 3],
    memo_dir: Option<&Path>,
) -> ToolchainFields {
    let tags = ["libnvvm", "libdevice", "nvjitlink"];
    let Some(dir) = memo_dir else {
        let digest = toolchain.identity().digest();
        return vec![("toolchain", digest.to_vec(), "path-size-mtime".to_owned())];
    };
    let memo = DigestMemo::in_dir(dir);
    tags.iter()
        .zip(located)
        .map(|(tag, l)| match memo.digest(&l.path, Some(l.component)) {
            Ok(digest) => {
                let mut bytes = b"blake3:".to_vec();
                bytes.extend_from_slice(&digest.hash);
                bytes.extend_from_slice(digest.version.as_bytes());
                (*tag, bytes, digest.label())
            }
            // A bare soname the loader resolves: its name is all we know.
            Err(_) => (
                *tag,
                l.path.as_os_str().as_encoded_bytes().to_vec(),
                format!("unresolved {}", l.path.display()),
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memo_round_trip_and_restamp() {
        let dir = std::env::temp_dir().join(format!("cudajit-memo-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("lib")).unwrap();
        let lib = dir.join("lib/libnvJitLink.so.13.0.88");
        fs::write(&lib, b"first").unwrap();
        let memo = DigestMemo::in_dir(&dir);
        let a = memo.digest(&lib, Some(Component::NvJitLink)).unwrap();
        assert_eq!(a.version, "13.0.88");
        assert_eq!(a.hash, <[u8; 32]>::from(blake3::hash(b"first")));
        // A fresh memo (another process) reads the recorded line.
        let again = DigestMemo::in_dir(&dir).digest(&lib, None).unwrap();
        assert_eq!(again, a);
        // Replacing the file (new inode) is noticed.
        fs::remove_file(&lib).unwrap();
        fs::write(&lib, b"second").unwrap();
        let b = DigestMemo::in_dir(&dir).digest(&lib, None).unwrap();
        assert_eq!(b.hash, <[u8; 32]>::from(blake3::hash(b"second")));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn versions_from_installation_metadata() {
        let dir = std::env::temp_dir().join(format!("cudajit-ver-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let lib = dir.join("nvidia/cu13/lib");
        fs::create_dir_all(&lib).unwrap();
        fs::create_dir_all(dir.join("nvidia_nvjitlink-13.0.88.dist-info")).unwrap();
        let file = lib.join("libnvJitLink.so.13");
        fs::write(&file, b"x").unwrap();
        assert_eq!(
            installed_version(&file, Some(Component::NvJitLink)),
            "13.0.88"
        );
        assert_eq!(installed_version(&file, Some(Component::Nvvm)), "unknown");
        let toolkit = dir.join("cuda");
        fs::create_dir_all(toolkit.join("nvvm/lib64")).unwrap();
        fs::write(
            toolkit.join("version.json"),
            r#"{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}"#,
        )
        .unwrap();
        let nvvm = toolkit.join("nvvm/lib64/libnvvm.so.4.0.0");
        fs::write(&nvvm, b"x").unwrap();
        assert_eq!(installed_version(&nvvm, Some(Component::Nvvm)), "13.0.88");
        // A distribution package: no version.json, a versioned toolkit directory.
        let packaged = dir.join("cuda-13.0/nvvm/lib64");
        fs::create_dir_all(&packaged).unwrap();
        let nvvm = packaged.join("libnvvm.so.4.0.0");
        fs::write(&nvvm, b"x").unwrap();
        assert_eq!(installed_version(&nvvm, Some(Component::Nvvm)), "13.0");
        let jitlink = dir.join("cuda-13.0/lib64/libnvJitLink.so.13.0.88");
        fs::create_dir_all(jitlink.parent().unwrap()).unwrap();
        fs::write(&jitlink, b"x").unwrap();
        assert_eq!(
            installed_version(&jitlink, Some(Component::NvJitLink)),
            "13.0.88"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
