//! The environment a search runs in, held as data so tests can drive discovery with
//! fake directory trees instead of mutating the (process-global) real environment.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// System-wide Python package directories searched for NVIDIA's wheels; a path
/// component ending in `*` is a prefix glob (`python3*` matches `python3.12`).
pub const DEFAULT_SYSTEM_SITE_PACKAGES: &[&str] = &[
    "/usr/local/lib/python3*/site-packages",
    "/usr/local/lib/python3*/dist-packages",
    "/usr/lib/python3/dist-packages",
];

/// Environment variables, home directory and fixed places that discovery consults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEnv {
    vars: BTreeMap<String, OsString>,
    home: Option<PathBuf>,
    system_site_packages: Vec<PathBuf>,
    probe_loader: bool,
}

impl SearchEnv {
    /// Snapshot of the current process: its variables, `HOME`, the default system
    /// site-packages and `dlopen` probing of `libnccl.so.2`.
    pub fn from_process() -> Self {
        Self::from_pairs(std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))))
    }

    /// An environment made of the given variables (home from a `HOME` pair), with the
    /// same defaults as [`SearchEnv::from_process`] otherwise.
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
            system_site_packages: DEFAULT_SYSTEM_SITE_PACKAGES
                .iter()
                .map(PathBuf::from)
                .collect(),
            probe_loader: true,
        }
    }

    /// Only what the given variables point at: no home directory, no system
    /// site-packages, no `dlopen` probing. For tests.
    pub fn isolated<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<OsString>,
    {
        let mut env = Self::from_pairs(pairs);
        env.home = None;
        env.system_site_packages.clear();
        env.probe_loader = false;
        env
    }

    /// The value of `name`; set-but-empty counts as unset (`NCCL_HOME= cmd`).
    pub fn var(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .get(name)
            .map(OsString::as_os_str)
            .filter(|v| !v.is_empty())
    }

    /// The value of `name` as UTF-8 text, if set and valid.
    pub fn var_str(&self, name: &str) -> Option<&str> {
        self.var(name).and_then(OsStr::to_str)
    }

    /// The home directory (for `~/.local/lib/python3*/site-packages`).
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// System site-packages patterns, searched last among wheel locations.
    pub fn system_site_packages(&self) -> &[PathBuf] {
        &self.system_site_packages
    }

    /// Replaces the system site-packages patterns.
    pub fn with_system_site_packages(mut self, patterns: Vec<PathBuf>) -> Self {
        self.system_site_packages = patterns;
        self
    }

    /// Whether the last resort, `dlopen("libnccl.so.2")`, is tried.
    pub fn probe_loader(&self) -> bool {
        self.probe_loader
    }

    /// Enables or disables the `dlopen` probe.
    pub fn with_loader_probe(mut self, probe: bool) -> Self {
        self.probe_loader = probe;
        self
    }
}
