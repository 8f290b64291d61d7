//! [`LoadedNccl`], NCCL's host library (`libnccl.so.2`) loaded: the installation it came from, its version checked against the
//! headers of the same installation, the struct layouts of that release, and the
//! function table.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::discover::{self, Installation, SearchEnv};
use crate::error::{NcclError, Result};
use crate::result::check;
use crate::sys::layout::{self, Selection};
use crate::sys::{ncclUniqueId, DynLib, NcclSys, NCCL_UNIQUE_ID_BYTES};
use crate::version::NcclVersion;

/// A loaded `libnccl.so.2` whose release cudajit supports.
pub struct LoadedNccl {
    installation: Installation,
    version: NcclVersion,
    headers_version: Option<NcclVersion>,
    selection: Selection,
    sys: NcclSys,
    _lib: DynLib,
}

impl fmt::Debug for LoadedNccl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedNccl")
            .field("library", &self.installation.library)
            .field("version", &self.version)
            .field("generation", &self.selection.generation.name)
            .finish_non_exhaustive()
    }
}

static GLOBAL: OnceLock<Result<Arc<LoadedNccl>>> = OnceLock::new();

impl LoadedNccl {
    /// Finds NCCL in `env` (see [`discover`]) and loads it.
    pub fn load(env: &SearchEnv) -> Result<Arc<LoadedNccl>> {
        LoadedNccl::open(discover::locate(env)?)
    }

    /// The process-wide NCCL, found from the process environment on first call; the
    /// outcome, failure included, is kept for the life of the process.
    pub fn global() -> Result<Arc<LoadedNccl>> {
        GLOBAL
            .get_or_init(|| LoadedNccl::load(&SearchEnv::from_process()))
            .clone()
    }

    /// Loads the library of `installation` and checks its release: supported (2.28.3 or
    /// newer) and, when the installation has headers, exactly the headers' release.
    pub fn open(installation: Installation) -> Result<Arc<LoadedNccl>> {
        let lib = DynLib::open(&installation.library)?;
        let sys = NcclSys::resolve(&lib)?;
        let mut code = 0;
        // SAFETY: a valid out-pointer; ncclGetVersion has no other precondition.
        unsafe {
            check(
                &sys,
                "ncclGetVersion",
                (sys.get_version)(&mut code),
                std::ptr::null_mut(),
            )
        }?;
        let version = NcclVersion::from_code(u32::try_from(code).unwrap_or(0));
        let selection = layout::select(version).map_err(|_| NcclError::TooOld {
            version,
            path: installation.library.clone(),
        })?;
        let headers_version = match installation.header() {
            Some(header) => {
                let hv =
                    NcclVersion::from_header(&header).map_err(|message| NcclError::BadHeaders {
                        path: header.clone(),
                        message,
                    })?;
                check_same_release(&installation.library, version, &header, hv)?;
                Some(hv)
            }
            None => {
                tracing::warn!(library = %installation.library.display(), "no NCCL headers beside the library: host layer only");
                None
            }
        };
        if !selection.exact {
            tracing::warn!(%version, generation = selection.generation.name, "NCCL release without generated layouts: host communicators only");
        }
        tracing::debug!(library = %installation.library.display(), %version, origin = %installation.origin, "loaded NCCL");
        Ok(Arc::new(LoadedNccl {
            installation,
            version,
            headers_version,
            selection,
            sys,
            _lib: lib,
        }))
    }

    /// The release `ncclGetVersion` reports.
    pub fn version(&self) -> NcclVersion {
        self.version
    }

    /// Where the library, headers and device library are.
    pub fn installation(&self) -> &Installation {
        &self.installation
    }

    /// The layouts chosen for this release.
    pub fn layouts(&self) -> &Selection {
        &self.selection
    }

    /// The include directory of this installation, whose release was checked equal to
    /// the library's, or [`NcclError::HeadersNotFound`].
    pub fn include_dir(&self) -> Result<&Path> {
        match (&self.installation.include_dir, self.headers_version) {
            (Some(dir), Some(_)) => Ok(dir),
            _ => Err(NcclError::HeadersNotFound {
                library: self.installation.library.clone(),
                searched: self.installation.headers_searched.clone(),
            }),
        }
    }

    /// A fresh `ncclUniqueId` (rank 0 of a multi-process job creates it).
    pub fn unique_id(&self) -> Result<UniqueId> {
        let mut id = ncclUniqueId {
            internal: [0; NCCL_UNIQUE_ID_BYTES],
        };
        // SAFETY: a valid out-pointer to a 128-byte ncclUniqueId.
        unsafe {
            check(
                &self.sys,
                "ncclGetUniqueId",
                (self.sys.get_unique_id)(&mut id),
                std::ptr::null_mut(),
            )
        }?;
        Ok(UniqueId(id.internal.map(|c| c as u8)))
    }

    /// The raw function table.
    pub fn sys(&self) -> &NcclSys {
        &self.sys
    }

    /// A multi-line description for `cudajit doctor`: the search order, what was found
    /// and which release and layouts are in use.
    pub fn report(&self) -> NcclReport<'_> {
        NcclReport { nccl: self }
    }
}

/// Refuses a library and headers of different releases (any digit).
pub fn check_same_release(
    library: &Path,
    library_version: NcclVersion,
    header: &Path,
    headers_version: NcclVersion,
) -> Result<()> {
    if library_version == headers_version {
        return Ok(());
    }
    Err(NcclError::VersionMismatch {
        library: library.to_path_buf(),
        library_version,
        headers: header.to_path_buf(),
        headers_version,
    })
}

/// `ncclUniqueId`'s 128 bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId(pub [u8; NCCL_UNIQUE_ID_BYTES]);

impl UniqueId {
    pub(crate) fn to_c(self) -> ncclUniqueId {
        ncclUniqueId {
            internal: self.0.map(|b| b as std::ffi::c_char),
        }
    }
}

impl fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UniqueId(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "...)")
    }
}

/// See [`LoadedNccl::report`].
#[derive(Debug)]
pub struct NcclReport<'n> {
    nccl: &'n LoadedNccl,
}

impl fmt::Display for NcclReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.nccl;
        let i = &n.installation;
        writeln!(f, "NCCL:")?;
        writeln!(f, "  search order  {}", SEARCH_ORDER)?;
        writeln!(f, "  library       {}  [{}]", i.library.display(), i.origin)?;
        writeln!(f, "  version       {}", n.version)?;
        let found: &Option<PathBuf> = &i.include_dir;
        match (found, n.headers_version) {
            (Some(dir), Some(v)) => {
                writeln!(f, "  headers       {}  ({v}, matches)", dir.display())?
            }
            _ => writeln!(
                f,
                "  headers       NOT FOUND (searched: {})",
                i.headers_searched.join("; ")
            )?,
        }
        match &i.device_library {
            Some(p) => writeln!(f, "  device lib    {}", p.display())?,
            None => writeln!(
                f,
                "  device lib    none beside the library (2.28: built from the headers by nvcc)"
            )?,
        }
        let s = &n.selection;
        let exact = if s.exact {
            "exact"
        } else {
            "NOT PROBED: host communicators only"
        };
        writeln!(
            f,
            "  layouts       generation {} ({exact}); ncclDevComm {} bytes, align {}",
            s.generation.name, s.generation.dev_comm.size, s.generation.dev_comm.align
        )?;
        let props = if n.sys.comm_query_properties.is_some() {
            "yes"
        } else {
            "no (2.28)"
        };
        writeln!(f, "  ncclCommQueryProperties  {props}")
    }
}

/// The library search order, one line, for reports.
pub const SEARCH_ORDER: &str = "CUDAJIT_NCCL_LIBRARY -> NCCL_HOME/lib -> Python wheels (nvidia/nccl/lib) -> LD_LIBRARY_PATH -> dlopen(libnccl.so.2)";
