//! Python site-packages directories reachable from the environment, found
//! without running Python (spawning an interpreter per process start would be
//! slow and would pick whatever `python3` happens to be first on `PATH`).

use std::ffi::OsStr;
use std::path::{Component as PathPart, Path, PathBuf};

use super::env::SearchEnv;

/// One step of the site-packages enumeration: a directory that exists, or a
/// description of a place that was looked at and held nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SiteEntry {
    /// An existing directory that may contain `nvidia/...`.
    Dir(PathBuf),
    /// A place consulted without result, for the "searched" list.
    Miss(String),
}

/// Every candidate site-packages directory, in search order, without
/// duplicates.
pub(crate) fn site_packages(env: &SearchEnv) -> Vec<SiteEntry> {
    let mut out = Vec::new();
    let mut push = |label: String, patterns: Vec<PathBuf>| {
        let mut hit = false;
        for dir in patterns.iter().flat_map(|p| expand(p)) {
            hit = true;
            if !out.contains(&SiteEntry::Dir(dir.clone())) {
                out.push(SiteEntry::Dir(dir));
            }
        }
        if !hit {
            out.push(SiteEntry::Miss(label));
        }
    };

    // CUDAJIT_TOOLS_DIR may be a site-packages itself (`pip install --target`)
    // or a prefix holding one (a venv, `pip install --prefix`).
    match env.var("CUDAJIT_TOOLS_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            let pats = vec![
                d.clone(),
                d.join("site-packages"),
                d.join("lib/python3*/site-packages"),
            ];
            push(
                format!("CUDAJIT_TOOLS_DIR={} (no such directory)", d.display()),
                pats,
            );
        }
        None => push("CUDAJIT_TOOLS_DIR: not set".into(), Vec::new()),
    }
    if let Some(pp) = env.var("PYTHONPATH") {
        for entry in std::env::split_paths(pp).filter(|p| !p.as_os_str().is_empty()) {
            push(
                format!("PYTHONPATH entry {} (no such directory)", entry.display()),
                vec![entry],
            );
        }
    }
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = env.var(var) {
            let pat = Path::new(prefix).join("lib/python3*/site-packages");
            push(format!("{var}: {} (no match)", pat.display()), vec![pat]);
        }
    }
    if let Some(path) = env.var("PATH") {
        // An absolute `<prefix>/bin` on PATH usually means `<prefix>/lib/python3*/...`
        // belongs to the interpreter the user runs (venvs, conda, pyenv).
        for bin in std::env::split_paths(path)
            .filter(|p| p.is_absolute() && p.file_name() == Some(OsStr::new("bin")))
        {
            if let Some(prefix) = bin.parent() {
                let pat = prefix.join("lib/python3*/site-packages");
                push(
                    format!("PATH entry {}: {} (no match)", bin.display(), pat.display()),
                    vec![pat],
                );
            }
        }
    }
    if let Some(home) = env.home() {
        let pat = home.join(".local/lib/python3*/site-packages");
        push(format!("{} (no match)", pat.display()), vec![pat]);
    }
    for pat in env.system_site_packages() {
        push(format!("{} (no match)", pat.display()), vec![pat.clone()]);
    }
    out
}

/// Expands a path whose components may end in `*` (prefix globs only) into
/// the existing directories it matches, sorted for a stable search order.
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
