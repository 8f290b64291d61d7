//! Which site-packages directories are searched for NVIDIA wheels.

use super::fake_tree::{s, TempTree};
use crate::toolchain::discover::site_packages::expand;
use crate::toolchain::{locate, Component, Origin, SearchEnv};

fn wheel_dir(env: &SearchEnv) -> std::path::PathBuf {
    let hit = locate(Component::Nvvm, env).expect("libNVVM in a wheel");
    match hit.origin {
        Origin::PythonWheel(dir) => dir,
        other => panic!("unexpected origin {other:?}"),
    }
}

#[test]
fn tools_dir_may_be_site_packages_or_a_prefix() {
    let t = TempTree::new("toolsdir");
    let direct = t.wheels("direct");
    let env = SearchEnv::isolated([("CUDAJIT_TOOLS_DIR", s(&direct))]);
    assert_eq!(wheel_dir(&env), direct);

    let nested = t.wheels("nested/site-packages");
    let env = SearchEnv::isolated([("CUDAJIT_TOOLS_DIR", s(&t.path("nested")))]);
    assert_eq!(wheel_dir(&env), nested);

    let prefix = t.wheels("prefix/lib/python3.13/site-packages");
    let env = SearchEnv::isolated([("CUDAJIT_TOOLS_DIR", s(&t.path("prefix")))]);
    assert_eq!(wheel_dir(&env), prefix);
}

#[test]
fn environment_derived_site_packages_are_searched_in_order() {
    let t = TempTree::new("envsp");
    let pp = t.wheels("pp");
    let venv = t.wheels("venv/lib/python3.11/site-packages");
    let conda = t.wheels("conda/lib/python3.10/site-packages");
    let bin_prefix = t.wheels("pyprefix/lib/python3.12/site-packages");
    t.dir("pyprefix/bin");
    let user = t.wheels("home/.local/lib/python3.9/site-packages");
    let system = t.wheels("usr/lib/python3.8/dist-packages");

    let path = std::env::join_paths([t.path("nothing/bin"), t.path("pyprefix/bin")]).expect("join");
    let full = [
        ("PYTHONPATH", pp.clone().into_os_string()),
        ("VIRTUAL_ENV", t.path("venv").into_os_string()),
        ("CONDA_PREFIX", t.path("conda").into_os_string()),
        ("PATH", path),
    ];
    let env_with = |n: usize| {
        SearchEnv::isolated(full[n..].to_vec())
            .with_home(Some(t.path("home")))
            .with_system_site_packages(vec![t.path("usr/lib/python3*/dist-packages")])
    };
    let expected = [pp, venv, conda, bin_prefix, user];
    for (n, want) in expected.iter().enumerate() {
        assert_eq!(
            &wheel_dir(&env_with(n)),
            want,
            "with the first {n} variables removed"
        );
    }
    let env = SearchEnv::isolated(Vec::<(String, String)>::new())
        .with_system_site_packages(vec![t.path("usr/lib/python3*/dist-packages")]);
    assert_eq!(wheel_dir(&env), system);
}

#[test]
fn cu12_wheel_layout_is_found() {
    let t = TempTree::new("cu12");
    for f in [
        "nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so",
        "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc",
        "nvidia/cuda_nvcc/bin/nvcc",
        "nvidia/nvjitlink/lib/libnvJitLink.so.12",
        "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    ] {
        t.file(&format!("sp/{f}"));
    }
    let env = SearchEnv::isolated([("PYTHONPATH", s(&t.path("sp")))]);
    for c in Component::ALL {
        let hit = locate(c, &env).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            hit.path.starts_with(t.path("sp/nvidia")),
            "{c}: {}",
            hit.path.display()
        );
    }
}

#[test]
fn prefix_globs_expand_to_sorted_existing_directories() {
    let t = TempTree::new("glob");
    t.dir("lib/python3.12/site-packages");
    t.dir("lib/python3.9/site-packages");
    t.dir("lib/python3.10"); // no site-packages inside
    t.file("lib/python3.11"); // a file, not a directory
    let got = expand(&t.path("lib/python3*/site-packages"));
    assert_eq!(
        got,
        vec![
            t.path("lib/python3.12/site-packages"),
            t.path("lib/python3.9/site-packages")
        ]
    );
    assert!(expand(&t.path("missing/python3*/site-packages")).is_empty());
    assert_eq!(expand(&t.path("lib")), vec![t.path("lib")]);
}
