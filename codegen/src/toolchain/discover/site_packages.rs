//! Python site-packages directories reachable from the environment, found
//! without running Python (spawning an interpreter per process start would be
//! slow and would pick whatever `python3` happens to be first on `PATH`).
//!
//! Shared by every search for NVIDIA's wheels: the compiler toolchain here and
//! NCCL's discovery in `cudajit-nccl`. Each caller names the order of the
//! [`SiteSource`]s it consults and words the [`SiteMiss`]es for its own
//! "searched" list.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Component as PathPart, Path, PathBuf};

use super::env::SearchEnv;

/// A place site-packages directories are derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteSource {
    /// `CUDAJIT_TOOLS_DIR`: a site-packages itself (`pip install --target`) or
    /// a prefix holding one (a venv, `pip install --prefix`).
    ToolsDir,
    /// Every entry of `PYTHONPATH`.
    PythonPath,
    /// `VIRTUAL_ENV`, then `CONDA_PREFIX`, then `PYENV_ROOT`'s versions.
    Prefixes,
    /// Every absolute `<prefix>/bin` on `PATH`, and pyenv's `<root>/shims` (its versions).
    PathPrefixes,
    /// `$PYTHONUSERBASE` or `~/.local`: `lib/python3*/site-packages` (`pip install --user`).
    UserHome,
    /// [`SearchEnv::system_site_packages`].
    System,
}

/// The order the compiler toolchain searches: the explicit tools directory
/// first, then what the user's interpreter would see.
pub const TOOLCHAIN_ORDER: &[SiteSource] = &[
    SiteSource::ToolsDir,
    SiteSource::PythonPath,
    SiteSource::Prefixes,
    SiteSource::PathPrefixes,
    SiteSource::UserHome,
    SiteSource::System,
];

/// A place consulted that held no site-packages directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteMiss {
    /// `CUDAJIT_TOOLS_DIR` is not set.
    ToolsDirUnset,
    /// `CUDAJIT_TOOLS_DIR` names no directory holding a site-packages.
    ToolsDir(PathBuf),
    /// A `PYTHONPATH` entry that is not a directory.
    PythonPathEntry(PathBuf),
    /// `VIRTUAL_ENV` or `CONDA_PREFIX` is set, but `pattern` matched nothing.
    Prefix {
        /// The variable.
        var: &'static str,
        /// `<prefix>/lib/python3*/site-packages`.
        pattern: PathBuf,
    },
    /// A pyenv installation (`PYENV_ROOT`, or `<root>/shims` on `PATH`) none of whose
    /// versions holds a site-packages directory.
    Pyenv {
        /// The pyenv root.
        root: PathBuf,
        /// `<root>/versions/*/lib/python3*/site-packages`.
        pattern: PathBuf,
    },
    /// A `<prefix>/bin` on `PATH` whose `pattern` matched nothing.
    PathEntry {
        /// The `PATH` entry.
        bin: PathBuf,
        /// `<prefix>/lib/python3*/site-packages`.
        pattern: PathBuf,
    },
    /// The home directory's user site-packages pattern matched nothing.
    UserHome(PathBuf),
    /// A system site-packages pattern matched nothing.
    System(PathBuf),
}

impl fmt::Display for SiteMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SiteMiss::ToolsDirUnset => f.write_str("CUDAJIT_TOOLS_DIR: not set"),
            SiteMiss::ToolsDir(d) => {
                write!(f, "CUDAJIT_TOOLS_DIR={} (no such directory)", d.display())
            }
            SiteMiss::PythonPathEntry(e) => {
                write!(f, "PYTHONPATH entry {} (no such directory)", e.display())
            }
            SiteMiss::Prefix { var, pattern } => {
                write!(f, "{var}: {} (no match)", pattern.display())
            }
            SiteMiss::Pyenv { root, pattern } => {
                write!(
                    f,
                    "pyenv at {}: {} (no match)",
                    root.display(),
                    pattern.display()
                )
            }
            SiteMiss::PathEntry { bin, pattern } => write!(
                f,
                "PATH entry {}: {} (no match)",
                bin.display(),
                pattern.display()
            ),
            SiteMiss::UserHome(pattern) | SiteMiss::System(pattern) => {
                write!(f, "{} (no match)", pattern.display())
            }
        }
    }
}

/// One step of the site-packages enumeration: a directory that exists, or a
/// place that was looked at and held nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteEntry {
    /// An existing directory that may contain `nvidia/...`.
    Dir(PathBuf),
    /// A place consulted without result, for the "searched" list.
    Miss(SiteMiss),
}

/// Every candidate site-packages directory from `order`'s sources, in that
/// order, without duplicates, with a [`SiteEntry::Miss`] where a source held
/// none.
pub fn site_packages(env: &SearchEnv, order: &[SiteSource]) -> Vec<SiteEntry> {
    let mut out = Vec::new();
    let mut push = |miss: SiteMiss, patterns: Vec<PathBuf>| {
        let mut hit = false;
        for dir in patterns.iter().flat_map(|p| expand(p)) {
            hit = true;
            if !out.contains(&SiteEntry::Dir(dir.clone())) {
                out.push(SiteEntry::Dir(dir));
            }
        }
        if !hit {
            out.push(SiteEntry::Miss(miss));
        }
    };
    for source in order {
        match source {
            SiteSource::ToolsDir => match env.var("CUDAJIT_TOOLS_DIR") {
                Some(d) => {
                    let d = PathBuf::from(d);
                    let pats = vec![d.clone(), d.join("site-packages"), d.join(SITE_PACKAGES)];
                    push(SiteMiss::ToolsDir(d), pats);
                }
                None => push(SiteMiss::ToolsDirUnset, Vec::new()),
            },
            SiteSource::PythonPath => {
                if let Some(pp) = env.var("PYTHONPATH") {
                    for entry in std::env::split_paths(pp).filter(|p| !p.as_os_str().is_empty()) {
                        push(SiteMiss::PythonPathEntry(entry.clone()), vec![entry]);
                    }
                }
            }
            SiteSource::Prefixes => {
                for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
                    if let Some(prefix) = env.var(var) {
                        let pattern = Path::new(prefix).join(SITE_PACKAGES);
                        push(
                            SiteMiss::Prefix {
                                var,
                                pattern: pattern.clone(),
                            },
                            vec![pattern],
                        );
                    }
                }
                if let Some(root) = env.var("PYENV_ROOT") {
                    let root = PathBuf::from(root);
                    let patterns = pyenv_patterns(&root, env);
                    push(pyenv_miss(root), patterns);
                }
            }
            SiteSource::PathPrefixes => {
                if let Some(path) = env.var("PATH") {
                    for entry in std::env::split_paths(path).filter(|p| p.is_absolute()) {
                        // pyenv puts `<root>/shims` (and its own `<root>/bin`) on PATH;
                        // the interpreters are `<root>/versions/*`.
                        if let Some(root) = pyenv_root_of(&entry) {
                            let patterns = pyenv_patterns(&root, env);
                            push(pyenv_miss(root), patterns);
                            continue;
                        }
                        // An absolute `<prefix>/bin` on PATH usually means
                        // `<prefix>/lib/python3*/...` belongs to the interpreter the
                        // user runs (venvs, conda, uv's managed Pythons).
                        if entry.file_name() != Some(OsStr::new("bin")) {
                            continue;
                        }
                        let bin = entry;
                        if let Some(prefix) = bin.parent() {
                            let pattern = prefix.join(SITE_PACKAGES);
                            push(
                                SiteMiss::PathEntry {
                                    bin: bin.clone(),
                                    pattern: pattern.clone(),
                                },
                                vec![pattern],
                            );
                        }
                    }
                }
            }
            SiteSource::UserHome => {
                // `pip install --user` installs under the user base: `PYTHONUSERBASE`,
                // else `~/.local`.
                let base = match env.var("PYTHONUSERBASE") {
                    Some(base) => Some(PathBuf::from(base)),
                    None => env.home().map(|home| home.join(".local")),
                };
                if let Some(base) = base {
                    let pattern = base.join(SITE_PACKAGES);
                    push(SiteMiss::UserHome(pattern.clone()), vec![pattern]);
                }
            }
            SiteSource::System => {
                for pattern in env.system_site_packages() {
                    push(SiteMiss::System(pattern.clone()), vec![pattern.clone()]);
                }
            }
        }
    }
    out
}

/// Where an interpreter of a prefix keeps its packages.
const SITE_PACKAGES: &str = "lib/python3*/site-packages";

/// The pyenv root a `PATH` entry belongs to: `<root>/shims`, or pyenv's own `<root>/bin`
/// (no `lib/` beside it), where `<root>/versions` exists.
fn pyenv_root_of(entry: &Path) -> Option<PathBuf> {
    let name = entry.file_name()?;
    let root = entry.parent()?;
    let is_pyenv = root.join("versions").is_dir()
        && (name == "shims" || (name == "bin" && !root.join("lib").is_dir()));
    is_pyenv.then(|| root.to_path_buf())
}

/// The site-packages patterns of a pyenv root: the active versions first
/// (`PYENV_VERSION`, `a:b` for several, else the global `<root>/version` file), then
/// every installed version.
fn pyenv_patterns(root: &Path, env: &SearchEnv) -> Vec<PathBuf> {
    let active = match env.var_str("PYENV_VERSION") {
        Some(versions) => versions.to_owned(),
        None => std::fs::read_to_string(root.join("version")).unwrap_or_default(),
    };
    active
        .split([':', '\n'])
        .map(str::trim)
        // `system` is the interpreter outside pyenv, found through the other sources.
        .filter(|v| !v.is_empty() && *v != "system" && !v.contains('/'))
        .map(|version| root.join("versions").join(version).join(SITE_PACKAGES))
        .chain([root.join("versions/*").join(SITE_PACKAGES)])
        .collect()
}

fn pyenv_miss(root: PathBuf) -> SiteMiss {
    let pattern = root.join("versions/*").join(SITE_PACKAGES);
    SiteMiss::Pyenv { root, pattern }
}

/// Expands a path whose components may end in `*` (prefix globs only) into
/// the existing directories it matches, sorted for a stable search order.
///
/// Hand-written rather than the `glob` crate (1.0 s to build, no dependencies): the
/// patterns here are fixed (`python3*`, `versions/*`) under prefixes taken from the
/// environment, which `glob` would read as patterns too (a `[` or `?` in a user's path
/// would need escaping) and which need not be UTF-8, which `glob` requires; every
/// dependant would build one more crate for forty lines.
pub(crate) fn expand(pattern: &Path) -> Vec<PathBuf> {
    let mut current = vec![PathBuf::new()];
    for part in pattern.components() {
        let text = part.as_os_str().to_string_lossy();
        let glob_prefix = match part {
            PathPart::Normal(_) => text.strip_suffix('*'),
            _ => None,
        };
        current = match glob_prefix {
            None => current.into_iter().map(|c| c.join(part)).collect(),
            Some(prefix) => current
                .iter()
                .flat_map(|c| matching_children(c, prefix))
                .collect(),
        };
        if current.is_empty() {
            break;
        }
    }
    current.retain(|p| p.is_dir());
    current
}

fn matching_children(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    names.sort();
    names
}
