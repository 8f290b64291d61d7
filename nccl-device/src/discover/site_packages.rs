//! Python site-packages directories reachable from the environment, found without
//! running Python, in the order a user's interpreter would see them.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use super::env::SearchEnv;

/// Every candidate site-packages directory (existing ones, deduplicated) and, for
/// the "searched" list, a note for each place that held none.
pub(crate) fn site_packages(env: &SearchEnv) -> (Vec<PathBuf>, Vec<String>) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut misses = Vec::new();
    let mut push = |label: String, patterns: Vec<PathBuf>| {
        let found: Vec<PathBuf> = patterns.iter().flat_map(|p| expand(p)).collect();
        if found.is_empty() {
            misses.push(label);
        }
        for d in found {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    };
    if let Some(pp) = env.var("PYTHONPATH") {
        for entry in std::env::split_paths(pp).filter(|p| !p.as_os_str().is_empty()) {
            push(
                format!("PYTHONPATH entry {} (no such directory)", entry.display()),
                vec![entry],
            );
        }
    }
    if let Some(d) = env.var("CUDAJIT_TOOLS_DIR") {
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
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = env.var(var) {
            let pat = Path::new(prefix).join("lib/python3*/site-packages");
            push(format!("{var}: {} (no match)", pat.display()), vec![pat]);
        }
    }
    if let Some(path) = env.var("PATH") {
        // `<prefix>/bin` on PATH: `<prefix>/lib/python3*/site-packages` belongs to the
        // interpreter the user runs (venvs, conda, pyenv).
        for bin in std::env::split_paths(path)
            .filter(|p| p.is_absolute() && p.file_name() == Some(OsStr::new("bin")))
        {
            if let Some(prefix) = bin.parent() {
                let pat = prefix.join("lib/python3*/site-packages");
                push(
                    format!("PATH entry {} (no site-packages)", bin.display()),
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
    (dirs, misses)
}

/// The existing directories matching `pattern`, whose components may end in `*`
/// (prefix globs only), sorted for a stable order.
pub(crate) fn expand(pattern: &Path) -> Vec<PathBuf> {
    let mut current = vec![PathBuf::new()];
    for part in pattern.components() {
        let text = part.as_os_str().to_string_lossy();
        let glob = match part {
            Component::Normal(_) => text.strip_suffix('*'),
            _ => None,
        };
        current = match glob {
            None => current.into_iter().map(|c| c.join(part)).collect(),
            Some(prefix) => current.iter().flat_map(|c| children(c, prefix)).collect(),
        };
        if current.is_empty() {
            break;
        }
    }
    current.retain(|p| p.is_dir());
    current
}

fn children(dir: &Path, prefix: &str) -> Vec<PathBuf> {
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
