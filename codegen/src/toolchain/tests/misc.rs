//! Small pieces: nvcc output parsing, names, lazy failures, the global.

use super::fake_tree::{s, TempTree};
use crate::toolchain::{
    parse_nvcc_version, Component, NvJitLink, Nvrtc, Nvvm, SearchEnv, Toolchain, ToolchainError,
};

#[test]
fn nvcc_version_output_is_parsed() {
    let out = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n\
               Built on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\n\
               Build cuda_13.0.r13.0/compiler.36424714_0\n";
    assert_eq!(parse_nvcc_version(out).as_deref(), Some("13.0.88"));
    assert_eq!(
        parse_nvcc_version("Cuda compilation tools, release 12.4\n").as_deref(),
        Some("12.4")
    );
    assert_eq!(parse_nvcc_version("no version here"), None);
}

#[test]
fn component_names() {
    let names: Vec<String> = Component::ALL.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        names,
        ["libNVVM", "libdevice", "nvJitLink", "NVRTC", "nvcc"]
    );
}

#[test]
fn loaded_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Nvvm>();
    assert_send_sync::<NvJitLink>();
    assert_send_sync::<Nvrtc>();
    assert_send_sync::<Toolchain>();
    assert_send_sync::<ToolchainError>();
}

#[test]
fn loading_a_bogus_file_is_a_typed_error_and_is_cached() {
    let t = TempTree::new("bogus");
    let env = SearchEnv::isolated([("CUDA_HOME", s(&t.toolkit("home")))]);
    let tc = Toolchain::discover(&env).expect("discover");
    let first = tc.nvvm().expect_err("a text file is not a library");
    assert!(
        matches!(
            first,
            ToolchainError::Load {
                component: Component::Nvvm,
                ..
            }
        ),
        "{first}"
    );
    let second = tc.nvvm().expect_err("still an error");
    assert_eq!(first.to_string(), second.to_string());
    assert!(matches!(tc.nvjitlink(), Err(ToolchainError::Load { .. })));
    assert!(matches!(tc.versions(), Err(ToolchainError::Load { .. })));
    // libdevice is just read, and NVRTC/nvcc are located lazily.
    assert_eq!(tc.libdevice_bytes().expect("read"), b"not a real library");
    assert!(tc
        .nvrtc_location()
        .expect("nvrtc")
        .path
        .ends_with("lib64/libnvrtc.so.13"));
    assert!(matches!(
        tc.nvrtc(),
        Err(ToolchainError::Load {
            component: Component::Nvrtc,
            ..
        })
    ));
}

#[test]
fn report_lists_every_component_with_its_origin() {
    let t = TempTree::new("report");
    let home = t.toolkit("home");
    std::fs::remove_file(home.join("bin/nvcc")).expect("remove nvcc");
    let env = SearchEnv::isolated([("CUDA_HOME", s(&home))]);
    let tc = Toolchain::discover(&env).expect("discover");
    let text = tc.report().to_string();
    println!("{text}");
    for c in Component::ALL {
        assert!(text.contains(&c.to_string()), "{c} missing:\n{text}");
    }
    assert!(
        text.contains(&s(&home.join("nvvm/lib64/libnvvm.so"))),
        "{text}"
    );
    assert!(text.contains("toolkit root CUDA_HOME"), "{text}");
    assert!(text.contains("nvcc       NOT AVAILABLE"), "{text}");
    assert!(
        text.contains("pip install nvidia-cuda-nvcc==13.*"),
        "{text}"
    );
}

#[test]
fn the_global_toolchain_is_discovered_once() {
    let a = Toolchain::global()
        .map(|t| t as *const Toolchain)
        .map_err(|e| e.to_string());
    let b = Toolchain::global()
        .map(|t| t as *const Toolchain)
        .map_err(|e| e.to_string());
    assert_eq!(a, b);
}
