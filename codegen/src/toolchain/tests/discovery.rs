//! Search order, overrides and the not-found report, on fake trees.

use std::path::PathBuf;

use super::fake_tree::{s, TempTree};
use crate::toolchain::{
    locate, Component, Origin, RootSource, SearchEnv, Toolchain, ToolchainError,
};

const LAYERS: [&str; 6] = [
    "override",
    "CUDA_HOME",
    "CUDA_PATH",
    "fixed",
    "wheel",
    "loader",
];

fn override_file(c: Component) -> &'static str {
    match c {
        Component::Nvvm => "override/libnvvm.so.4",
        Component::Libdevice => "override/libdevice.10.bc",
        Component::NvJitLink => "override/libnvJitLink.so.13",
        Component::Nvrtc => "override/libnvrtc.so.13",
        Component::Nvcc => "override/nvcc",
    }
}

/// An environment with every layer from `LAYERS[first..]` present.
fn layered_env(t: &TempTree, first: usize) -> SearchEnv {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut fixed = Vec::new();
    for layer in &LAYERS[first..] {
        match *layer {
            "override" => {
                for c in Component::ALL {
                    pairs.push((c.override_var().into(), s(&t.file(override_file(c)))));
                }
            }
            "CUDA_HOME" => pairs.push(("CUDA_HOME".into(), s(&t.toolkit("home")))),
            "CUDA_PATH" => pairs.push(("CUDA_PATH".into(), s(&t.toolkit("cudapath")))),
            "fixed" => fixed.push(t.toolkit("fixed")),
            "wheel" => pairs.push(("CUDAJIT_TOOLS_DIR".into(), s(&t.wheels("tools")))),
            _ => {
                let ld = s(&t.loader_dir("ld"));
                pairs.push(("LD_LIBRARY_PATH".into(), ld.clone()));
                pairs.push(("PATH".into(), ld));
            }
        }
    }
    SearchEnv::isolated(pairs).with_fixed_roots(fixed)
}

fn expected(t: &TempTree, layer: &str, c: Component) -> (Origin, PathBuf) {
    let (origin, dir) = match layer {
        "override" => {
            return (
                Origin::EnvOverride(c.override_var().into()),
                t.path(override_file(c)),
            )
        }
        "CUDA_HOME" => (
            Origin::ToolkitRoot(RootSource::Var("CUDA_HOME".into())),
            t.path("home"),
        ),
        "CUDA_PATH" => (
            Origin::ToolkitRoot(RootSource::Var("CUDA_PATH".into())),
            t.path("cudapath"),
        ),
        "fixed" => (
            Origin::ToolkitRoot(RootSource::Fixed(t.path("fixed"))),
            t.path("fixed"),
        ),
        "wheel" => (
            Origin::PythonWheel(t.path("tools")),
            t.path("tools/nvidia/cu13"),
        ),
        _ => (Origin::LoaderPath, t.path("ld")),
    };
    (origin, dir)
}

#[test]
fn each_rule_beats_the_ones_after_it() {
    let t = TempTree::new("ladder");
    for (first, layer) in LAYERS.iter().enumerate() {
        let env = layered_env(&t, first);
        for c in Component::ALL {
            let got = locate(c, &env);
            if *layer == "loader" && c == Component::Libdevice {
                // libdevice is never on the loader path.
                assert!(
                    matches!(got, Err(ToolchainError::NotFound { .. })),
                    "{got:?}"
                );
                continue;
            }
            let got = got.unwrap_or_else(|e| panic!("{c} with layers from {layer}: {e}"));
            let (origin, under) = expected(&t, layer, c);
            assert_eq!(got.origin, origin, "{c} with layers from {layer}");
            assert!(
                got.path.starts_with(&under),
                "{c}: {} not under {}",
                got.path.display(),
                under.display()
            );
            assert_eq!(got.component, c);
        }
    }
}

#[test]
fn a_tools_dir_that_is_not_a_directory_is_an_error() {
    let t = TempTree::new("badtoolsdir");
    let missing = t.path("site-packagse");
    let env = SearchEnv::isolated([
        ("CUDAJIT_TOOLS_DIR", s(&missing)),
        ("CUDA_HOME", s(&t.toolkit("home"))),
    ]);
    let err = locate(Component::Nvvm, &env).expect_err("must not fall through to CUDA_HOME");
    assert!(
        matches!(&err, ToolchainError::BadToolsDir { path } if *path == missing),
        "{err}"
    );
    assert!(err
        .to_string()
        .starts_with(&format!("CUDAJIT_TOOLS_DIR={}", s(&missing))));
    // An existing directory without wheels is a place searched, not an error.
    let env = SearchEnv::isolated([
        ("CUDAJIT_TOOLS_DIR", s(&t.dir("empty"))),
        ("CUDA_HOME", s(&t.path("home"))),
    ]);
    assert!(locate(Component::Nvvm, &env).is_ok());
}

#[test]
fn an_override_naming_a_missing_file_is_an_error() {
    let t = TempTree::new("badoverride");
    let missing = t.path("nope/libnvvm.so.4");
    let env = SearchEnv::isolated([
        ("CUDAJIT_NVVM", s(&missing)),
        ("CUDA_HOME", s(&t.toolkit("home"))),
    ]);
    let err = locate(Component::Nvvm, &env).expect_err("must not fall through to CUDA_HOME");
    assert!(
        matches!(&err, ToolchainError::BadOverride { var, path, .. } if var == "CUDAJIT_NVVM" && *path == missing)
    );
    let text = err.to_string();
    assert!(
        text.contains("CUDAJIT_NVVM") && text.contains(&s(&missing)),
        "{text}"
    );
    // Toolchain discovery reports the same error rather than ignoring it.
    let err = Toolchain::discover(&env).expect_err("discover must fail");
    assert!(matches!(err, ToolchainError::BadOverride { .. }), "{err}");
    // A directory is not a file either.
    let env = SearchEnv::isolated([("CUDAJIT_NVCC", s(&t.dir("adir")))]);
    assert!(matches!(
        locate(Component::Nvcc, &env),
        Err(ToolchainError::BadOverride { .. })
    ));
}

#[test]
fn an_empty_variable_counts_as_unset() {
    let t = TempTree::new("emptyvar");
    let env = SearchEnv::isolated([
        ("CUDAJIT_NVVM", String::new()),
        ("CUDA_HOME", s(&t.toolkit("home"))),
    ]);
    let got = locate(Component::Nvvm, &env).expect("falls through to CUDA_HOME");
    assert_eq!(
        got.origin,
        Origin::ToolkitRoot(RootSource::Var("CUDA_HOME".into()))
    );
}

#[test]
fn not_found_lists_every_place_searched_and_the_fix() {
    let t = TempTree::new("notfound");
    let home = t.dir("empty-home");
    let fixed = t.dir("empty-fixed");
    let tools = t.dir("empty-tools");
    let pp1 = t.dir("pp1");
    let pp2 = t.path("pp2-missing");
    let ld = t.dir("empty-ld");
    let pythonpath = std::env::join_paths([&pp1, &pp2]).expect("join");
    let env = SearchEnv::isolated([
        ("CUDA_HOME", home.clone().into_os_string()),
        ("CUDAJIT_TOOLS_DIR", tools.clone().into_os_string()),
        ("PYTHONPATH", pythonpath),
        ("LD_LIBRARY_PATH", ld.clone().into_os_string()),
    ])
    .with_fixed_roots(vec![fixed.clone()]);

    let wheels = [
        (Component::Nvvm, "pip install nvidia-nvvm==13.*"),
        (Component::Libdevice, "pip install nvidia-nvvm==13.*"),
        (Component::NvJitLink, "pip install nvidia-nvjitlink==13.*"),
        (Component::Nvrtc, "pip install nvidia-cuda-nvrtc==13.*"),
        (Component::Nvcc, "pip install nvidia-cuda-nvcc==13.*"),
    ];
    for (c, pip) in wheels {
        let err = locate(c, &env).expect_err("nothing is installed");
        let ToolchainError::NotFound {
            component,
            searched,
            fix,
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(*component, c);
        assert!(fix.contains(pip), "{fix}");
        let text = err.to_string();
        assert!(text.starts_with(&format!("{c} not found")), "{text}");
        // One line per place, each of them in the message.
        assert_eq!(
            text.lines().filter(|l| l.starts_with("  - ")).count(),
            searched.len(),
            "{text}"
        );
        for place in searched {
            assert!(
                text.contains(place.as_str()),
                "{place} missing from:\n{text}"
            );
        }
        let mut must_mention = vec![
            format!("{}: not set", c.override_var()),
            "CUDA_PATH: not set".to_owned(),
            s(&home),
            s(&fixed),
            s(&tools.join("nvidia")),
            s(&pp1.join("nvidia")),
            format!("{} (no such directory)", s(&pp2)),
        ];
        if matches!(c, Component::Nvvm | Component::NvJitLink | Component::Nvrtc) {
            must_mention.push(s(&ld));
        }
        if c == Component::Nvcc {
            must_mention.push("PATH: not set".to_owned());
        }
        for m in must_mention {
            assert!(text.contains(&m), "{c}: `{m}` missing from:\n{text}");
        }
        println!("{text}\n");
    }
}

#[test]
fn the_loader_probe_either_finds_the_library_or_says_it_tried() {
    let env = SearchEnv::isolated(Vec::<(String, String)>::new()).with_loader_probe(true);
    match locate(Component::Nvvm, &env) {
        Ok(hit) => assert_eq!(hit.origin, Origin::LoaderPath),
        Err(err) => {
            let text = err.to_string();
            assert!(
                text.contains("dlopen(\"libnvvm.so.4\")")
                    && text.contains("dlopen(\"libnvvm.so\")"),
                "{text}"
            );
        }
    }
}

#[test]
fn libdevice_comes_from_the_installation_of_the_chosen_libnvvm() {
    let t = TempTree::new("sameinstall");
    let home = t.toolkit("home");
    // Wheel layout: X/lib/libnvvm.so.4 pairs with X/nvvm/libdevice.
    let wheel = t.wheels("sp").join("nvidia/cu13");
    let env = SearchEnv::isolated([
        ("CUDAJIT_NVVM", s(&wheel.join("lib/libnvvm.so.4"))),
        ("CUDA_HOME", s(&home)),
    ]);
    let got = locate(Component::Libdevice, &env).expect("libdevice");
    assert_eq!(got.path, wheel.join("nvvm/libdevice/libdevice.10.bc"));
    assert_eq!(got.origin, Origin::EnvOverride("CUDAJIT_NVVM".into()));

    // Toolkit layout: X/nvvm/lib64/libnvvm.so pairs with X/nvvm/libdevice.
    let other = t.toolkit("other");
    let env = SearchEnv::isolated([
        ("CUDAJIT_NVVM", s(&other.join("nvvm/lib64/libnvvm.so"))),
        ("CUDA_HOME", s(&home)),
    ]);
    let tc = Toolchain::discover(&env).expect("discover");
    assert_eq!(
        tc.libdevice_location().path,
        other.join("nvvm/libdevice/libdevice.10.bc")
    );

    // The libdevice override still wins.
    let own = t.file("own/libdevice.10.bc");
    let env = SearchEnv::isolated([
        ("CUDAJIT_NVVM", s(&other.join("nvvm/lib64/libnvvm.so"))),
        ("CUDAJIT_LIBDEVICE", s(&own)),
    ]);
    assert_eq!(
        locate(Component::Libdevice, &env).expect("override").path,
        own
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_libnvvm_finds_the_libdevice_of_its_real_installation() {
    let t = TempTree::new("symlink");
    let real = t.toolkit("real");
    let link = t.dir("linkdir").join("libnvvm.so");
    std::os::unix::fs::symlink(real.join("nvvm/lib64/libnvvm.so"), &link).expect("symlink");
    let env = SearchEnv::isolated([("LD_LIBRARY_PATH", s(&t.path("linkdir")))]);
    let nvvm = locate(Component::Nvvm, &env).expect("nvvm via LD_LIBRARY_PATH");
    assert_eq!(nvvm.path, link);
    let libdevice = crate::toolchain::locate_libdevice(&env, Some(&nvvm)).expect("libdevice");
    assert_eq!(libdevice.path, real.join("nvvm/libdevice/libdevice.10.bc"));
    assert_eq!(libdevice.origin, Origin::LoaderPath);
}
