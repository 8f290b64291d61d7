//! Where NCCL is: the host library, the headers of the same installation and the device
//! library beside it.
//!
//! The library, first hit wins:
//! 1. `CUDAJIT_NCCL_LIBRARY`: an exact path (a missing file is an error, not a
//!    fall-through: the user asked for that file);
//! 2. `NCCL_HOME/lib`;
//! 3. NVIDIA's Python wheels (`nvidia/nccl/lib`) in every site-packages reachable from
//!    the environment: `PYTHONPATH`, `CUDAJIT_TOOLS_DIR`, `VIRTUAL_ENV`, `CONDA_PREFIX`,
//!    `PATH` prefixes, `~/.local`, system directories;
//! 4. the loader: `LD_LIBRARY_PATH` directories, then `dlopen("libnccl.so.2")`.
//!
//! The headers are searched only where they belong to the chosen library, so that two
//! installations are never mixed: `CUDAJIT_NCCL_INCLUDE` (exact directory), then
//! `<libdir>/../include`, `NCCL_HOME/include` when the library came from `NCCL_HOME`,
//! and `<prefix>/include` for a multiarch `<prefix>/lib/<triplet>/` directory (Debian's
//! `/usr/lib/x86_64-linux-gnu` pairs with `/usr/include`). The same is tried for the
//! library's resolved path when it is a symlink.
//!
//! The environment, the site-packages enumeration and the loader probe are the
//! compiler toolchain's (`cudajit_codegen::toolchain::discover`): one search for
//! NVIDIA's libraries, driven here with NCCL's file names and wording.

use std::fmt;
use std::path::{Path, PathBuf};

use cudajit_codegen::toolchain::discover::{
    probe_loader,
    site_packages::{site_packages, SiteEntry, SiteMiss, SiteSource},
};
pub use cudajit_codegen::toolchain::discover::{SearchEnv, DEFAULT_SYSTEM_SITE_PACKAGES};

use crate::error::{NcclError, Result};

/// Where NCCL looks for wheels, in the order `docs/nccl.md` documents: `PYTHONPATH`
/// before `CUDAJIT_TOOLS_DIR` (the compiler toolchain tries `CUDAJIT_TOOLS_DIR` first).
const WHEEL_ORDER: &[SiteSource] = &[
    SiteSource::PythonPath,
    SiteSource::ToolsDir,
    SiteSource::Prefixes,
    SiteSource::PathPrefixes,
    SiteSource::UserHome,
    SiteSource::System,
];

/// File names of the host library, preferred first.
pub const LIBRARY_NAMES: &[&str] = &["libnccl.so.2", "libnccl.so"];
/// The variable naming the exact library file.
pub const LIBRARY_VAR: &str = "CUDAJIT_NCCL_LIBRARY";
/// The variable naming the exact include directory (the one holding `nccl.h`).
pub const INCLUDE_VAR: &str = "CUDAJIT_NCCL_INCLUDE";
/// Device libraries NCCL ships next to `libnccl.so.2` from 2.29 on.
pub const DEVICE_LIBRARY_NAMES: &[&str] = &["libnccl_device.ltoir"];

/// The rule that found the library.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// `CUDAJIT_NCCL_LIBRARY`.
    Override,
    /// `NCCL_HOME/lib`.
    NcclHome(PathBuf),
    /// An `nvidia-nccl-cu*` wheel in this site-packages directory.
    PythonWheel(PathBuf),
    /// A directory of `LD_LIBRARY_PATH`.
    LdLibraryPath(PathBuf),
    /// The dynamic loader's own search (`dlopen` of the soname).
    Loader,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Override => write!(f, "{LIBRARY_VAR}"),
            Origin::NcclHome(h) => write!(f, "NCCL_HOME={}", h.display()),
            Origin::PythonWheel(sp) => write!(f, "Python wheel in {}", sp.display()),
            Origin::LdLibraryPath(d) => write!(f, "LD_LIBRARY_PATH entry {}", d.display()),
            Origin::Loader => f.write_str("dynamic loader search path"),
        }
    }
}

/// One NCCL installation: the library and what belongs to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    /// `libnccl.so.2` (for [`Origin::Loader`] hits where `/proc/self/maps` did not reveal
    /// the file, the bare soname).
    pub library: PathBuf,
    /// The rule that found it.
    pub origin: Origin,
    /// The directory holding the matching `nccl.h`, if any.
    pub include_dir: Option<PathBuf>,
    /// Every directory tried for the headers, in order.
    pub headers_searched: Vec<String>,
    /// `libnccl_device.ltoir` beside the library (NCCL 2.29+ wheels), if present.
    pub device_library: Option<PathBuf>,
}

impl Installation {
    /// `nccl.h` of this installation, if its headers were found.
    pub fn header(&self) -> Option<PathBuf> {
        self.include_dir.as_ref().map(|d| d.join("nccl.h"))
    }
}

/// Finds the NCCL installation the environment selects. Loads nothing (except the
/// last-resort `dlopen` probe, which loads the library the loader would pick).
pub fn locate(env: &SearchEnv) -> Result<Installation> {
    let mut searched = Vec::new();
    let (library, origin) = locate_library(env, &mut searched)?;
    Ok(complete(env, library, origin))
}

fn locate_library(env: &SearchEnv, searched: &mut Vec<String>) -> Result<(PathBuf, Origin)> {
    match env.var(LIBRARY_VAR) {
        Some(path) => {
            let path = PathBuf::from(path);
            if !path.is_file() {
                return Err(NcclError::BadOverride {
                    var: LIBRARY_VAR,
                    path,
                    what: "file",
                });
            }
            return Ok((path, Origin::Override));
        }
        None => searched.push(format!("{LIBRARY_VAR}: not set")),
    }
    match env.var("NCCL_HOME") {
        Some(home) => {
            let home = PathBuf::from(home);
            if let Some(lib) = in_dir(&home.join("lib"), searched, "NCCL_HOME") {
                return Ok((lib, Origin::NcclHome(home)));
            }
        }
        None => searched.push("NCCL_HOME: not set".into()),
    }
    let (sites, misses) = wheel_places(env);
    searched.extend(misses.into_iter().map(|m| format!("site-packages: {m}")));
    for sp in sites {
        if let Some(lib) = in_dir(&sp.join("nvidia/nccl/lib"), searched, "Python wheel") {
            return Ok((lib, Origin::PythonWheel(sp)));
        }
    }
    match env.var("LD_LIBRARY_PATH") {
        Some(paths) => {
            for dir in std::env::split_paths(paths).filter(|p| !p.as_os_str().is_empty()) {
                if let Some(lib) = in_dir(&dir, searched, "LD_LIBRARY_PATH") {
                    return Ok((lib, Origin::LdLibraryPath(dir)));
                }
            }
        }
        None => searched.push("LD_LIBRARY_PATH: not set".into()),
    }
    if env.probe_loader() {
        // SAFETY: loading runs NCCL's initialisers, which have no preconditions; they
        // would run the same way when the library is loaded for use. The handle is
        // leaked: NCCL is never unloaded (see `sys`).
        if let Some(lib) = unsafe { probe_loader(LIBRARY_NAMES[0]) } {
            return Ok((lib, Origin::Loader));
        }
        searched.push(format!(
            "dlopen(\"{}\") through the loader's path (ld.so.cache, system directories): not found",
            LIBRARY_NAMES[0]
        ));
    } else {
        searched.push("dlopen probe of the loader's path: disabled".into());
    }
    Err(NcclError::LibraryNotFound {
        searched: std::mem::take(searched),
    })
}

/// The existing site-packages directories in [`WHEEL_ORDER`] and, listed before
/// them in "searched", a note for each place that held none.
fn wheel_places(env: &SearchEnv) -> (Vec<PathBuf>, Vec<String>) {
    let mut dirs = Vec::new();
    let mut misses = Vec::new();
    for entry in site_packages(env, WHEEL_ORDER) {
        match entry {
            SiteEntry::Dir(dir) => dirs.push(dir),
            // NCCL's "searched" list names only the variables that are set here,
            // and a PATH entry without its pattern; the toolchain's wording is fuller.
            SiteEntry::Miss(SiteMiss::ToolsDirUnset) => {}
            SiteEntry::Miss(SiteMiss::PathEntry { bin, .. }) => {
                misses.push(format!("PATH entry {} (no site-packages)", bin.display()))
            }
            SiteEntry::Miss(miss) => misses.push(miss.to_string()),
        }
    }
    (dirs, misses)
}

/// The library in `dir`, noting the miss in `searched`.
fn in_dir(dir: &Path, searched: &mut Vec<String>, label: &str) -> Option<PathBuf> {
    for name in LIBRARY_NAMES {
        let p = dir.join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    searched.push(format!(
        "{label}: {} (no {})",
        dir.display(),
        LIBRARY_NAMES.join(" or ")
    ));
    None
}

/// Adds the headers and device library of the installation `library` belongs to.
fn complete(env: &SearchEnv, library: PathBuf, origin: Origin) -> Installation {
    let mut searched = Vec::new();
    let include_dir = headers_for(env, &library, &origin, &mut searched);
    let device_library = library.parent().and_then(|dir| {
        DEVICE_LIBRARY_NAMES
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file())
    });
    Installation {
        library,
        origin,
        include_dir,
        headers_searched: searched,
        device_library,
    }
}

fn headers_for(
    env: &SearchEnv,
    library: &Path,
    origin: &Origin,
    searched: &mut Vec<String>,
) -> Option<PathBuf> {
    if let Some(dir) = env.var(INCLUDE_VAR) {
        let dir = PathBuf::from(dir);
        searched.push(format!("{INCLUDE_VAR}={}", dir.display()));
        // A wrong override is reported when the headers are needed, not here: the host
        // layer works without headers.
        return dir.join("nccl.h").is_file().then_some(dir);
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut libs = vec![library.to_path_buf()];
    if let Ok(real) = library.canonicalize() {
        if real != library {
            libs.push(real);
        }
    }
    for lib in &libs {
        let Some(dir) = lib.parent().filter(|d| !d.as_os_str().is_empty()) else {
            continue;
        };
        if let Some(parent) = dir.parent() {
            candidates.push(parent.join("include"));
            // Multiarch: <prefix>/lib/<triplet>/libnccl.so.2 pairs with <prefix>/include.
            if parent.file_name() == Some(std::ffi::OsStr::new("lib")) {
                if let Some(prefix) = parent.parent() {
                    candidates.push(prefix.join("include"));
                }
            }
        }
    }
    if let Origin::NcclHome(home) = origin {
        candidates.insert(1.min(candidates.len()), home.join("include"));
    }
    let mut seen = Vec::new();
    for dir in candidates {
        if seen.contains(&dir) {
            continue;
        }
        seen.push(dir.clone());
        if dir.join("nccl.h").is_file() {
            return Some(dir);
        }
        searched.push(format!("{} (no nccl.h)", dir.display()));
    }
    if libs
        .iter()
        .all(|l| l.parent().is_none_or(|d| d.as_os_str().is_empty()))
    {
        searched.push(format!(
            "{} is a bare soname: the loader did not reveal its directory",
            library.display()
        ));
    }
    None
}
