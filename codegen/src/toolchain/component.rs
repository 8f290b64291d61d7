//! The pieces of NVIDIA's toolchain a search looks for, and how a miss lists the places tried:
//! below both the search (`discover`) and its errors (`error`), which name them.

use std::fmt;

/// The places a search tried, one `  - ` bullet per line, as every "not
/// found" error lists them.
pub fn searched_list(places: &[String]) -> String {
    let lines: Vec<String> = places.iter().map(|s| format!("  - {s}")).collect();
    lines.join("\n")
}

/// One piece of the NVIDIA toolchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Component {
    /// libNVVM, the NVVM IR to PTX / LTO-IR compiler.
    Nvvm,
    /// `libdevice.10.bc`, the math library in NVVM IR bitcode.
    Libdevice,
    /// nvJitLink, the (LTO) linker producing cubins.
    NvJitLink,
    /// NVRTC, the CUDA C++ runtime compiler.
    Nvrtc,
    /// The `nvcc` compiler driver executable.
    Nvcc,
}

impl Component {
    /// Every component, in report order.
    pub const ALL: [Component; 5] = [
        Component::Nvvm,
        Component::Libdevice,
        Component::NvJitLink,
        Component::Nvrtc,
        Component::Nvcc,
    ];
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Component::Nvvm => "libNVVM",
            Component::Libdevice => "libdevice",
            Component::NvJitLink => "nvJitLink",
            Component::Nvrtc => "NVRTC",
            Component::Nvcc => "nvcc",
        })
    }
}
