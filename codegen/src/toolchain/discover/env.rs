//! The environment a search runs in, held as data.
//!
//! Discovery never reads `std::env` directly: it reads a [`SearchEnv`]. That
//! keeps the search a pure function of its input, so tests can drive it with
//! fake directory trees without mutating the (process-global, racy) real
//! environment.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Toolkit roots that are searched after `CUDA_HOME`/`CUDA_PATH`.
pub const DEFAULT_FIXED_ROOTS: &[&str] = &["/usr/local/cuda"];

/// System-wide Python package directories searched for NVIDIA wheels; a path
/// component ending in `*` is a prefix glob (`python3*` matches `python3.12`).
pub const DEFAULT_SYSTEM_SITE_PACKAGES: &[&str] = &[
    "/usr/local/lib/python3*/site-packages",
    "/usr/local/lib/python3*/dist-packages",
    "/usr/lib/python3/dist-packages",
];

/// Environment variables, home directory and fixed search locations that
/// discovery consults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEnv {
    vars: BTreeMap<String, OsString>,
    home: Option<PathBuf>,
    fixed_roots: Vec<PathBuf>,
    system_site_packages: Vec<PathBuf>,
    probe_loader: bool,
}

impl SearchEnv {
    /// Snapshot of the current process: all variables, `HOME`, the default
    /// fixed roots and site-packages, and `dlopen` probing of bare sonames.
    pub fn from_process() -> Self {
        Self::from_pairs(std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))))
    }

    /// An environment made of the given variables (the home directory is
    /// taken from a `HOME` pair), with the same defaults as
    /// [`SearchEnv::from_process`] for everything else.
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<OsString>,
    {
        let vars: BTreeMap<String, OsString> = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let home = vars
            .get("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        SearchEnv {
            vars,
            home,
            fixed_roots: DEFAULT_FIXED_ROOTS.iter().map(PathBuf::from).collect(),
            system_site_packages: DEFAULT_SYSTEM_SITE_PACKAGES
                .iter()
                .map(PathBuf::from)
                .collect(),
            probe_loader: true,
        }
    }

    /// Like [`SearchEnv::from_pairs`] but sealed off from the machine: no home
    /// directory, no fixed roots, no system site-packages and no `dlopen`
    /// probing. Only what the given variables point at is searched.
    pub fn isolated<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<OsString>,
    {
        Self::from_pairs(pairs)
            .with_home(None)
            .with_fixed_roots(Vec::new())
            .with_system_site_packages(Vec::new())
            .with_loader_probe(false)
    }

    /// The value of `name`; a variable set to the empty string counts as unset
    /// (that is how shells "unset" things in practice: `CUDA_HOME= cmd`).
    pub fn var(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .get(name)
            .map(OsString::as_os_str)
            .filter(|v| !v.is_empty())
    }

    /// The value of `name` as UTF-8 text, if set (see [`SearchEnv::var`]) and
    /// valid UTF-8.
    pub fn var_str(&self, name: &str) -> Option<&str> {
        self.var(name).and_then(OsStr::to_str)
    }

    /// The home directory, for `~/.local/lib/python3*/site-packages`.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Replaces the home directory.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// Toolkit roots searched after `CUDA_HOME` and `CUDA_PATH`.
    pub fn fixed_roots(&self) -> &[PathBuf] {
        &self.fixed_roots
    }

    /// Replaces the fixed toolkit roots (default [`DEFAULT_FIXED_ROOTS`]).
    pub fn with_fixed_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.fixed_roots = roots;
        self
    }

    /// System site-packages patterns searched last among wheel locations.
    pub fn system_site_packages(&self) -> &[PathBuf] {
        &self.system_site_packages
    }

    /// Replaces the system site-packages patterns (default
    /// [`DEFAULT_SYSTEM_SITE_PACKAGES`]).
    pub fn with_system_site_packages(mut self, patterns: Vec<PathBuf>) -> Self {
        self.system_site_packages = patterns;
        self
    }

    /// Whether the last resort, `dlopen` of bare sonames, is tried.
    pub fn probe_loader(&self) -> bool {
        self.probe_loader
    }

    /// Enables or disables `dlopen` probing of bare sonames.
    pub fn with_loader_probe(mut self, probe: bool) -> Self {
        self.probe_loader = probe;
        self
    }
}
