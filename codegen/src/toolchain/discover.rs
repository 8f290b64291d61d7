//! The search for each toolchain component.
//!
//! Order, first hit wins:
//! 1. the explicit `CUDAJIT_*` override (a missing file is an error);
//! 2. toolkit roots `CUDA_HOME`, then `CUDA_PATH`;
//! 3. fixed toolkit roots (`/usr/local/cuda`);
//! 4. NVIDIA Python wheels in every site-packages reachable from the
//!    environment (`CUDAJIT_TOOLS_DIR`, `PYTHONPATH`, `VIRTUAL_ENV`,
//!    `CONDA_PREFIX`, `PATH` prefixes, `~/.local`, system directories);
//! 5. the loader: `LD_LIBRARY_PATH` directories, then `dlopen` of the bare
//!    soname (libraries); `PATH` directories (nvcc).
//!
//! libdevice additionally looks next to the chosen libNVVM right after its
//! override, so that both come from the same installation.
//!
//! The environment ([`SearchEnv`]), the site-packages enumeration
//! ([`site_packages`]), the loader probe ([`probe_loader`]) and the wording of
//! a miss ([`searched_list`]) are public so that other searches for NVIDIA's
//! libraries (NCCL's, in `cudajit-nccl`) reuse them instead of copying them.

mod env;
mod layout;
mod loader;
pub mod site_packages;

use std::fmt;
use std::path::{Path, PathBuf};

pub use env::{SearchEnv, DEFAULT_FIXED_ROOTS, DEFAULT_SYSTEM_SITE_PACKAGES};
pub use loader::probe as probe_loader;

pub use super::component::{searched_list, Component};
use super::error::{Result, ToolchainError};
use layout::{layout, Layout, Spot};
use site_packages::{SiteEntry, TOOLCHAIN_ORDER};

impl Component {
    /// The environment variable that overrides this component's location.
    pub fn override_var(self) -> &'static str {
        layout(self).override_var
    }
}

/// Which kind of toolkit root a hit came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RootSource {
    /// A root named by an environment variable (`CUDA_HOME`, `CUDA_PATH`).
    Var(String),
    /// One of [`SearchEnv::fixed_roots`].
    Fixed(PathBuf),
}

/// The search rule that produced a [`Located`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// An explicit override variable (`CUDAJIT_NVVM`, ...).
    EnvOverride(String),
    /// A CUDA toolkit root.
    ToolkitRoot(RootSource),
    /// An NVIDIA wheel inside this site-packages directory.
    PythonWheel(PathBuf),
    /// The dynamic loader's search path (`LD_LIBRARY_PATH` or `dlopen`), or
    /// `PATH` for nvcc.
    LoaderPath,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::EnvOverride(var) => write!(f, "override {var}"),
            Origin::ToolkitRoot(RootSource::Var(var)) => write!(f, "toolkit root {var}"),
            Origin::ToolkitRoot(RootSource::Fixed(root)) => {
                write!(f, "fixed toolkit root {}", root.display())
            }
            Origin::PythonWheel(dir) => write!(f, "Python wheel in {}", dir.display()),
            Origin::LoaderPath => f.write_str("loader search path"),
        }
    }
}

/// A component's file and how it was found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Located {
    /// The component.
    pub component: Component,
    /// Its file. For a [`Origin::LoaderPath`] hit where the loader did not
    /// reveal the file, this is the bare soname to hand to `dlopen`.
    pub path: PathBuf,
    /// The rule that found it.
    pub origin: Origin,
}

/// Finds `component`. For [`Component::Libdevice`] this first locates libNVVM
/// (ignoring failure) to prefer the libdevice of the same installation; use
/// [`locate_libdevice`] when libNVVM is already known.
pub fn locate(component: Component, env: &SearchEnv) -> Result<Located> {
    if component == Component::Libdevice {
        let nvvm = locate(Component::Nvvm, env).ok();
        return locate_libdevice(env, nvvm.as_ref());
    }
    Search::new(component, env).run(None)
}

/// Finds libdevice, preferring the one next to `nvvm` (`X/lib/libnvvm.so*`
/// or `X/nvvm/lib64/libnvvm.so*` pair with `X/nvvm/libdevice`).
pub fn locate_libdevice(env: &SearchEnv, nvvm: Option<&Located>) -> Result<Located> {
    Search::new(Component::Libdevice, env).run(nvvm)
}

/// Accumulates every place tried, so a miss can list them all.
struct Search<'e> {
    component: Component,
    layout: &'static Layout,
    env: &'e SearchEnv,
    searched: Vec<String>,
}

impl<'e> Search<'e> {
    fn new(component: Component, env: &'e SearchEnv) -> Self {
        Search {
            component,
            layout: layout(component),
            env,
            searched: Vec::new(),
        }
    }

    fn run(mut self, nvvm: Option<&Located>) -> Result<Located> {
        if let Some(hit) = self.overridden()? {
            return Ok(hit);
        }
        if let Some(dir) = self.env.var("CUDAJIT_TOOLS_DIR").map(PathBuf::from) {
            if !dir.is_dir() {
                return Err(ToolchainError::BadToolsDir { path: dir });
            }
        }
        let hit = nvvm
            .and_then(|n| self.beside_nvvm(n))
            .or_else(|| self.toolkit_roots())
            .or_else(|| self.wheels())
            .or_else(|| self.loader());
        hit.ok_or_else(|| self.not_found())
    }

    fn overridden(&mut self) -> Result<Option<Located>> {
        let var = self.layout.override_var;
        let Some(value) = self.env.var(var) else {
            self.searched.push(format!("{var}: not set"));
            return Ok(None);
        };
        let path = PathBuf::from(value);
        if !path.is_file() {
            return Err(ToolchainError::BadOverride {
                component: self.component,
                var: var.into(),
                path,
            });
        }
        Ok(Some(self.hit(path, Origin::EnvOverride(var.into()))))
    }

    fn beside_nvvm(&mut self, nvvm: &Located) -> Option<Located> {
        let mut libs = vec![nvvm.path.clone()];
        if let Ok(real) = nvvm.path.canonicalize() {
            if real != nvvm.path {
                libs.push(real); // a symlinked libnvvm: its real installation too
            }
        }
        for lib in libs {
            let Some(x) = lib.parent().and_then(Path::parent) else {
                continue;
            };
            for dir in [x.join("libdevice"), x.join("nvvm/libdevice")] {
                let label = format!("next to libNVVM {}", nvvm.path.display());
                if let Some(hit) = self.in_dir(&dir, &["libdevice.10.bc"], &label, &nvvm.origin) {
                    return Some(hit);
                }
            }
        }
        None
    }

    fn toolkit_roots(&mut self) -> Option<Located> {
        for var in ["CUDA_HOME", "CUDA_PATH"] {
            match self.env.var(var) {
                None => self.searched.push(format!("{var}: not set")),
                Some(root) => {
                    let origin = Origin::ToolkitRoot(RootSource::Var(var.into()));
                    if let Some(hit) =
                        self.spots(Path::new(root), self.layout.toolkit, var, &origin)
                    {
                        return Some(hit);
                    }
                }
            }
        }
        let env = self.env;
        for root in env.fixed_roots() {
            let origin = Origin::ToolkitRoot(RootSource::Fixed(root.clone()));
            if let Some(hit) = self.spots(root, self.layout.toolkit, "fixed toolkit root", &origin)
            {
                return Some(hit);
            }
        }
        None
    }

    fn wheels(&mut self) -> Option<Located> {
        let env = self.env;
        for entry in site_packages::site_packages(env, TOOLCHAIN_ORDER) {
            match entry {
                SiteEntry::Miss(what) => self.searched.push(format!("site-packages {what}")),
                SiteEntry::Dir(sp) => {
                    let origin = Origin::PythonWheel(sp.clone());
                    if let Some(hit) = self.spots(&sp, self.layout.wheel, "Python wheel", &origin) {
                        return Some(hit);
                    }
                }
            }
        }
        None
    }

    fn loader(&mut self) -> Option<Located> {
        let names = self.layout.loader_names;
        if !names.is_empty() {
            if let Some(hit) = self.path_list("LD_LIBRARY_PATH", names) {
                return Some(hit);
            }
        }
        if let Some(exe) = self.layout.path_exe {
            if let Some(hit) = self.path_list("PATH", &[exe]) {
                return Some(hit);
            }
        }
        if !self.env.probe_loader() {
            return None;
        }
        for name in names {
            self.searched
                .push(format!("dlopen(\"{name}\") (system loader search path)"));
            // SAFETY: the names probed are NVIDIA's compiler libraries, whose
            // initialisers have no preconditions; they would run the same way
            // when the library is loaded for use.
            if let Some(path) = unsafe { loader::probe(name) } {
                return Some(self.hit(path, Origin::LoaderPath));
            }
        }
        None
    }

    fn path_list(&mut self, var: &str, names: &[&str]) -> Option<Located> {
        let Some(value) = self.env.var(var) else {
            self.searched.push(format!("{var}: not set"));
            return None;
        };
        let dirs: Vec<PathBuf> = std::env::split_paths(value)
            .filter(|d| !d.as_os_str().is_empty())
            .collect();
        dirs.iter()
            .find_map(|dir| self.in_dir(dir, names, var, &Origin::LoaderPath))
    }

    fn spots(
        &mut self,
        root: &Path,
        spots: &[Spot],
        label: &str,
        origin: &Origin,
    ) -> Option<Located> {
        spots
            .iter()
            .find_map(|(sub, names)| self.in_dir(&root.join(sub), names, label, origin))
    }

    fn in_dir(
        &mut self,
        dir: &Path,
        names: &[&str],
        label: &str,
        origin: &Origin,
    ) -> Option<Located> {
        let shown = match names {
            [one] => dir.join(one).display().to_string(),
            _ => format!("{}/{{{}}}", dir.display(), names.join(",")),
        };
        self.searched.push(format!("{shown} ({label})"));
        let path = names.iter().map(|n| dir.join(n)).find(|p| p.is_file())?;
        Some(self.hit(path, origin.clone()))
    }

    fn hit(&self, path: PathBuf, origin: Origin) -> Located {
        tracing::debug!(component = %self.component, path = %path.display(), origin = %origin, "toolchain component located");
        Located {
            component: self.component,
            path,
            origin,
        }
    }

    fn not_found(self) -> ToolchainError {
        ToolchainError::NotFound {
            component: self.component,
            searched: self.searched,
            fix: format!(
                "{}; wheels installed with `pip install --target DIR` are found through CUDAJIT_TOOLS_DIR=DIR",
                self.layout.fix
            ),
        }
    }
}
