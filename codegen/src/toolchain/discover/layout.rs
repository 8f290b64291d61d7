//! Where each component lives inside a toolkit, inside the NVIDIA wheels, and
//! under which names the dynamic loader knows it. Data only.

use super::Component;

/// A directory (relative to a root) and the file names to try in it, most
/// preferred first.
pub(crate) type Spot = (&'static str, &'static [&'static str]);

/// The search table for one component.
pub(crate) struct Layout {
    /// The `CUDAJIT_*` override variable.
    pub(crate) override_var: &'static str,
    /// Spots below a toolkit root (`CUDA_HOME`, `/usr/local/cuda`).
    pub(crate) toolkit: &'static [Spot],
    /// Spots below a Python site-packages directory.
    pub(crate) wheel: &'static [Spot],
    /// Names to look for in `LD_LIBRARY_PATH` directories and to `dlopen`.
    pub(crate) loader_names: &'static [&'static str],
    /// Executable name to look for in `PATH` directories.
    pub(crate) path_exe: Option<&'static str>,
    /// The one-line fix shown when nothing is found.
    pub(crate) fix: &'static str,
}

// Newest first: a CUDA 13 library is preferred over a CUDA 12 one found in
// the same directory; `.so` (dev symlink) sits between because it points at
// whatever that installation's current version is.
const NVVM: &[&str] = &["libnvvm.so.4", "libnvvm.so", "libnvvm.so.3"];
const LIBDEVICE: &[&str] = &["libdevice.10.bc"];
const NVJITLINK: &[&str] = &[
    "libnvJitLink.so.13",
    "libnvJitLink.so",
    "libnvJitLink.so.12",
];
const NVRTC: &[&str] = &["libnvrtc.so.13", "libnvrtc.so", "libnvrtc.so.12"];
const NVCC: &[&str] = &["nvcc"];

static NVVM_LAYOUT: Layout = Layout {
    override_var: "CUDAJIT_NVVM",
    toolkit: &[("nvvm/lib64", NVVM)],
    // cu13 wheels share one `nvidia/cu13` tree; cu12 shipped libNVVM inside
    // the nvcc wheel with a toolkit-like layout.
    wheel: &[("nvidia/cu13/lib", NVVM), ("nvidia/cuda_nvcc/nvvm/lib64", NVVM)],
    loader_names: NVVM,
    path_exe: None,
    fix: "install the wheel: `pip install nvidia-nvvm==13.*` (or set CUDA_HOME to a CUDA 12.x/13.x toolkit, or CUDAJIT_NVVM to libnvvm.so)",
};

static LIBDEVICE_LAYOUT: Layout = Layout {
    override_var: "CUDAJIT_LIBDEVICE",
    toolkit: &[("nvvm/libdevice", LIBDEVICE)],
    wheel: &[
        ("nvidia/cu13/nvvm/libdevice", LIBDEVICE),
        ("nvidia/cuda_nvcc/nvvm/libdevice", LIBDEVICE),
    ],
    // libdevice is a bitcode file, never a shared object on the loader path.
    loader_names: &[],
    path_exe: None,
    fix: "install the wheel: `pip install nvidia-nvvm==13.*` (it ships libdevice next to libNVVM; or set CUDA_HOME to a CUDA 12.x/13.x toolkit, or CUDAJIT_LIBDEVICE to libdevice.10.bc)",
};

static NVJITLINK_LAYOUT: Layout = Layout {
    override_var: "CUDAJIT_NVJITLINK",
    toolkit: &[("lib64", NVJITLINK)],
    wheel: &[("nvidia/cu13/lib", NVJITLINK), ("nvidia/nvjitlink/lib", NVJITLINK)],
    loader_names: NVJITLINK,
    path_exe: None,
    fix: "install the wheel: `pip install nvidia-nvjitlink==13.*` (or set CUDA_HOME to a CUDA 12.x/13.x toolkit, or CUDAJIT_NVJITLINK to libnvJitLink.so)",
};

static NVRTC_LAYOUT: Layout = Layout {
    override_var: "CUDAJIT_NVRTC",
    toolkit: &[("lib64", NVRTC)],
    wheel: &[("nvidia/cu13/lib", NVRTC), ("nvidia/cuda_nvrtc/lib", NVRTC)],
    loader_names: NVRTC,
    path_exe: None,
    fix: "install the wheel: `pip install nvidia-cuda-nvrtc==13.*` (or set CUDA_HOME to a CUDA 12.x/13.x toolkit, or CUDAJIT_NVRTC to libnvrtc.so)",
};

static NVCC_LAYOUT: Layout = Layout {
    override_var: "CUDAJIT_NVCC",
    toolkit: &[("bin", NVCC)],
    wheel: &[("nvidia/cu13/bin", NVCC), ("nvidia/cuda_nvcc/bin", NVCC)],
    loader_names: &[],
    path_exe: Some("nvcc"),
    fix: "install the wheel: `pip install nvidia-cuda-nvcc==13.*` (or set CUDA_HOME to a CUDA 12.x/13.x toolkit, or CUDAJIT_NVCC to the nvcc executable)",
};

/// The search table of `component`.
pub(crate) fn layout(component: Component) -> &'static Layout {
    match component {
        Component::Nvvm => &NVVM_LAYOUT,
        Component::Libdevice => &LIBDEVICE_LAYOUT,
        Component::NvJitLink => &NVJITLINK_LAYOUT,
        Component::Nvrtc => &NVRTC_LAYOUT,
        Component::Nvcc => &NVCC_LAYOUT,
    }
}
