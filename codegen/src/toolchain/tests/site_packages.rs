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

/// `PATH` of the given directories of `t`.
fn path_of(t: &TempTree, dirs: &[&str]) -> std::ffi::OsString {
    std::env::join_paths(dirs.iter().map(|d| t.path(d))).expect("join")
}

/// pyenv: `<root>/shims` on PATH (not a `bin`), wheels in a version's site-packages.
#[test]
fn pyenv_shims_on_path_find_the_versions_wheels() {
    let t = TempTree::new("pyenv-shims");
    t.dir(".pyenv/shims");
    t.dir(".pyenv/bin");
    let wheels = t.wheels(".pyenv/versions/3.11.7/lib/python3.11/site-packages");
    let env = SearchEnv::isolated([("PATH", path_of(&t, &[".pyenv/bin", ".pyenv/shims"]))]);
    assert_eq!(wheel_dir(&env), wheels);
}

/// pyenv: the active version (`PYENV_VERSION`, else `<root>/version`) comes before the
/// others; `PYENV_ROOT` alone finds them too.
#[test]
fn pyenv_prefers_the_active_version() {
    let t = TempTree::new("pyenv-active");
    t.dir("pyenv/shims");
    let older = t.wheels("pyenv/versions/3.10.4/lib/python3.10/site-packages");
    let active = t.wheels("pyenv/versions/3.12.1/lib/python3.12/site-packages");
    let shims = path_of(&t, &["pyenv/shims"]);
    // Without a choice: every version, sorted.
    let env = SearchEnv::isolated([("PATH", shims.clone())]);
    assert_eq!(wheel_dir(&env), older);
    // The global version file.
    std::fs::write(t.path("pyenv/version"), "3.12.1\n").unwrap();
    let env = SearchEnv::isolated([("PATH", shims.clone())]);
    assert_eq!(wheel_dir(&env), active);
    // PYENV_VERSION wins over the file.
    let env = SearchEnv::isolated([("PATH", shims), ("PYENV_VERSION", "3.10.4:3.12.1".into())]);
    assert_eq!(wheel_dir(&env), older);
    // PYENV_ROOT without shims on PATH.
    let env = SearchEnv::isolated([("PYENV_ROOT", t.path("pyenv").into_os_string())]);
    assert_eq!(wheel_dir(&env), active);
}

/// A pyenv without a version holding a site-packages is named in the "searched" list;
/// one whose site-packages lacks the wheels has its directories listed.
#[test]
fn an_empty_pyenv_is_listed_as_searched() {
    let t = TempTree::new("pyenv-empty");
    t.dir("pyenv/shims");
    t.dir("pyenv/versions/3.11.7/bin");
    let env = SearchEnv::isolated([("PATH", path_of(&t, &["pyenv/shims"]))]);
    let error = locate(Component::Nvvm, &env).expect_err("no wheels");
    let text = error.to_string();
    let listed = format!("pyenv at {}", t.path("pyenv").display());
    assert!(text.contains(&listed), "{text}");
    t.dir("pyenv/versions/3.11.7/lib/python3.11/site-packages");
    let text = locate(Component::Nvvm, &env)
        .expect_err("no wheels")
        .to_string();
    assert!(
        text.contains("pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia"),
        "{text}"
    );
}

/// conda: an activated environment (`CONDA_PREFIX`) and one whose `bin` is on PATH.
#[test]
fn conda_environments_are_found() {
    let t = TempTree::new("conda");
    let wheels = t.wheels("miniconda3/envs/cu/lib/python3.12/site-packages");
    t.dir("miniconda3/envs/cu/bin");
    let env = SearchEnv::isolated([(
        "CONDA_PREFIX",
        t.path("miniconda3/envs/cu").into_os_string(),
    )]);
    assert_eq!(wheel_dir(&env), wheels);
    let env = SearchEnv::isolated([("PATH", path_of(&t, &["miniconda3/envs/cu/bin"]))]);
    assert_eq!(wheel_dir(&env), wheels);
}

/// virtualenv / `python -m venv` and uv's project `.venv`: `VIRTUAL_ENV` or its `bin`.
#[test]
fn virtual_environments_and_uv_are_found() {
    let t = TempTree::new("venvs");
    let venv = t.wheels("project/.venv/lib/python3.11/site-packages");
    t.dir("project/.venv/bin");
    let env = SearchEnv::isolated([("VIRTUAL_ENV", t.path("project/.venv").into_os_string())]);
    assert_eq!(wheel_dir(&env), venv);
    let env = SearchEnv::isolated([("PATH", path_of(&t, &["project/.venv/bin"]))]);
    assert_eq!(wheel_dir(&env), venv);
    // A Python uv installed (`uv python install`), its `bin` on PATH.
    let uv = t.wheels(
        "home/.local/share/uv/python/cpython-3.12.8-linux-x86_64-gnu/lib/python3.12/site-packages",
    );
    t.dir("home/.local/share/uv/python/cpython-3.12.8-linux-x86_64-gnu/bin");
    let env = SearchEnv::isolated([(
        "PATH",
        path_of(
            &t,
            &["home/.local/share/uv/python/cpython-3.12.8-linux-x86_64-gnu/bin"],
        ),
    )]);
    assert_eq!(wheel_dir(&env), uv);
}

/// `pip install --user`: `~/.local`, or `PYTHONUSERBASE` when set.
#[test]
fn user_installs_are_found_under_the_user_base() {
    let t = TempTree::new("user");
    let home = t.wheels("home/.local/lib/python3.12/site-packages");
    let env = SearchEnv::isolated(Vec::<(String, String)>::new()).with_home(Some(t.path("home")));
    assert_eq!(wheel_dir(&env), home);
    let base = t.wheels("userbase/lib/python3.11/site-packages");
    let env = SearchEnv::isolated([("PYTHONUSERBASE", t.path("userbase").into_os_string())])
        .with_home(Some(t.path("home")));
    assert_eq!(wheel_dir(&env), base);
}
