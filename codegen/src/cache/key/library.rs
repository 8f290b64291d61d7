//! What identifies a device library in a cache key: the bytes of its parts for the
//! architecture the kernel is linked for.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cudajit_core::external::{DeviceLibrary, LibraryKind};

use crate::device_library::LibraryParts;
use crate::sync::lock_ignoring_poison as lock;
use crate::target::Arch;

/// What identifies a device library in a cache key for `arch`: its name, then the kind
/// and BLAKE3 hash of each of its parts for `arch`, in link order (memoised per library
/// and architecture, so a warm start hashes each file once per process; BLAKE3 because
/// NCCL's 10 MB `.ltoir` is hashed by every process, in the user's profile, where `sha2`
/// at `-O0` would take ~0.3 s), or the reason it cannot be had (the compile then fails, so
/// that key never holds a cubin).
pub fn library_identity(library: &'static DeviceLibrary, arch: Arch) -> Vec<u8> {
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
                identity.extend_from_slice(kind_name(part.kind).as_bytes());
                identity.push(b':');
                identity.extend_from_slice(blake3::hash(&part.bytes).as_bytes());
                identity.push(b'/');
            }
            lock(hashes).insert(memo, identity.clone());
        }
        Err(error) => identity.extend_from_slice(error.to_string().as_bytes()),
    }
    identity
}

/// A part's kind as keys spell it, fixed here rather than taken from `Debug`.
fn kind_name(kind: LibraryKind) -> &'static str {
    match kind {
        LibraryKind::LtoIr => "LtoIr",
        LibraryKind::Fatbin => "Fatbin",
        LibraryKind::Ptx => "Ptx",
        LibraryKind::Cubin => "Cubin",
    }
}
