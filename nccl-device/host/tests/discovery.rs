//! Library discovery on fake installation trees, version discipline with the real
//! libraries and headers of the cached wheels, and layout selection.

mod common;

use std::path::{Path, PathBuf};

use cudajit_nccl::discover::{locate, Origin, SearchEnv};
use cudajit_nccl::sys::layout::{self, RequirementField};
use cudajit_nccl::{check_same_release, LoadedNccl, NcclError, NcclVersion};

struct Tree(PathBuf);

impl Tree {
    fn new(name: &str) -> Tree {
        let root = std::env::temp_dir().join(format!("cudajit-nccl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Tree(root)
    }
    fn file(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const HEADER: &str = "#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 3\n";

fn env(pairs: &[(&str, &Path)]) -> SearchEnv {
    SearchEnv::isolated(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned())),
    )
}

#[test]
fn search_order_is_override_home_wheel_loader_path() {
    let t = Tree::new("order");
    let over = t.file("over/lib/libnccl.so.2", "");
    let home_lib = t.file("home/lib/libnccl.so.2", "");
    let wheel_lib = t.file(
        "venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2",
        "",
    );
    let ld_lib = t.file("ld/libnccl.so.2", "");
    let (home, venv, ld) = (t.path("home"), t.path("venv"), t.path("ld"));
    let all = [
        ("CUDAJIT_NCCL_LIBRARY", over.as_path()),
        ("NCCL_HOME", &home),
        ("VIRTUAL_ENV", &venv),
        ("LD_LIBRARY_PATH", &ld),
    ];
    let expect = [
        (over.clone(), Origin::Override),
        (home_lib, Origin::NcclHome(home.clone())),
        (
            wheel_lib,
            Origin::PythonWheel(t.path("venv/lib/python3.12/site-packages")),
        ),
        (ld_lib, Origin::LdLibraryPath(ld.clone())),
    ];
    for (skip, (lib, origin)) in expect.into_iter().enumerate() {
        let found = locate(&env(&all[skip..])).unwrap();
        assert_eq!(found.library, lib);
        assert_eq!(found.origin, origin);
    }
}

#[test]
fn a_missing_library_lists_every_place_tried() {
    let t = Tree::new("missing");
    let (home, venv) = (t.path("home"), t.path("venv"));
    let err = locate(&env(&[("NCCL_HOME", &home), ("VIRTUAL_ENV", &venv)])).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, NcclError::LibraryNotFound { .. }));
    for needle in [
        "CUDAJIT_NCCL_LIBRARY: not set",
        "NCCL_HOME",
        "VIRTUAL_ENV",
        "LD_LIBRARY_PATH: not set",
        "dlopen probe",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

#[test]
fn a_wrong_override_is_an_error_not_a_fall_through() {
    let t = Tree::new("override");
    let home_lib = t.file("home/lib/libnccl.so.2", "");
    let bad = t.path("nope/libnccl.so.2");
    let e = locate(&env(&[
        ("CUDAJIT_NCCL_LIBRARY", &bad),
        ("NCCL_HOME", home_lib.parent().unwrap().parent().unwrap()),
    ]));
    assert!(
        matches!(
            e,
            Err(NcclError::BadOverride {
                var: "CUDAJIT_NCCL_LIBRARY",
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn headers_come_from_the_library_installation_only() {
    let t = Tree::new("headers");
    // Wheel layout: nvidia/nccl/lib + nvidia/nccl/include.
    let lib = t.file("a/nvidia/nccl/lib/libnccl.so.2", "");
    t.file("a/nvidia/nccl/include/nccl.h", HEADER);
    t.file("a/nvidia/nccl/lib/libnccl_device.ltoir", "");
    // Another installation's headers under NCCL_HOME must not be picked for it.
    t.file("b/include/nccl.h", HEADER);
    let b = t.path("b");
    let found = locate(&env(&[("CUDAJIT_NCCL_LIBRARY", &lib), ("NCCL_HOME", &b)])).unwrap();
    assert_eq!(found.include_dir, Some(t.path("a/nvidia/nccl/include")));
    assert_eq!(
        found.device_library,
        Some(t.path("a/nvidia/nccl/lib/libnccl_device.ltoir"))
    );

    // Library without headers beside it: none, even though NCCL_HOME has some.
    let lone = t.file("c/lib/libnccl.so.2", "");
    let found = locate(&env(&[("CUDAJIT_NCCL_LIBRARY", &lone), ("NCCL_HOME", &b)])).unwrap();
    assert_eq!(found.include_dir, None);
    assert!(found
        .headers_searched
        .iter()
        .any(|s| s.contains("c/include")));
}

#[test]
fn multiarch_library_pairs_with_prefix_include() {
    let t = Tree::new("multiarch");
    let lib = t.file("usr/lib/x86_64-linux-gnu/libnccl.so.2", "");
    t.file("usr/include/nccl.h", HEADER);
    let found = locate(&env(&[("CUDAJIT_NCCL_LIBRARY", &lib)])).unwrap();
    assert_eq!(found.include_dir, Some(t.path("usr/include")));
}

#[test]
fn nccl_home_headers_for_a_nccl_home_library() {
    let t = Tree::new("home");
    t.file("h/lib/libnccl.so.2", "");
    t.file("h/include/nccl.h", HEADER);
    let found = locate(&env(&[("NCCL_HOME", &t.path("h"))])).unwrap();
    assert_eq!(found.include_dir, Some(t.path("h/include")));
}

#[test]
fn version_codes_and_headers_parse() {
    assert_eq!(NcclVersion::from_code(22803), NcclVersion::new(2, 28, 3));
    assert_eq!(NcclVersion::from_code(23203).to_string(), "2.32.3");
    assert_eq!(NcclVersion::from_code(2804), NcclVersion::new(2, 8, 4));
    assert_eq!(
        NcclVersion::from_header_text(HEADER),
        Some(NcclVersion::new(2, 28, 3))
    );
    assert_eq!(
        NcclVersion::from_header_text("#define NCCL_VERSION_CODE 22809\n"),
        Some(NcclVersion::new(2, 28, 9))
    );
}

#[test]
fn any_digit_of_difference_is_refused_naming_both() {
    let (l, h) = (Path::new("/x/libnccl.so.2"), Path::new("/y/nccl.h"));
    let same = NcclVersion::new(2, 28, 3);
    assert!(check_same_release(l, same, h, same).is_ok());
    let err = check_same_release(l, same, h, NcclVersion::new(2, 28, 9)).unwrap_err();
    let text = err.to_string();
    for needle in ["/x/libnccl.so.2", "/y/nccl.h", "2.28.3", "2.28.9"] {
        assert!(text.contains(needle), "{needle} missing: {text}");
    }
}

#[test]
fn layout_selection_is_exact_or_host_only() {
    let v = NcclVersion::new;
    assert!(
        layout::select(v(2, 27, 7)).is_err(),
        "2.27 is older than supported"
    );
    let s = layout::select(v(2, 28, 3)).unwrap();
    assert!(s.exact);
    assert_eq!(s.generation.dev_comm.size, 88);
    assert_eq!(
        layout::select(v(2, 28, 9))
            .unwrap()
            .generation
            .dev_comm
            .size,
        200
    );
    assert_eq!(
        layout::select(v(2, 32, 3))
            .unwrap()
            .generation
            .dev_comm
            .size,
        248
    );
    let between = layout::select(v(2, 28, 5)).unwrap();
    assert!(!between.exact);
    assert_eq!(between.struct_version(), 22803);
    assert!(matches!(
        between.exact("ncclDevComm"),
        Err(NcclError::UnknownLayout { .. })
    ));
    let newer = layout::select(v(2, 99, 0)).unwrap();
    assert!(!newer.exact);
    assert_eq!(
        newer.generation.name,
        layout::generations().last().unwrap().name
    );
}

#[test]
fn requirements_use_each_generations_fields() {
    let g = layout::select(NcclVersion::new(2, 28, 3))
        .unwrap()
        .generation;
    let raw = (g.requirements)(&[(RequirementField::LsaBarrierCount, 7)], 22803).unwrap();
    let off = g
        .fields
        .iter()
        .find(|f| f.strukt == "ncclDevCommRequirements" && f.field == "lsaBarrierCount")
        .unwrap()
        .offset;
    assert_eq!(&raw.bytes()[off..off + 4], &7i32.to_ne_bytes());
    assert_eq!(
        (g.requirements)(&[(RequirementField::GinSignalCount, 1)], 22803).unwrap_err(),
        RequirementField::GinSignalCount
    );

    let g = layout::select(NcclVersion::new(2, 32, 3))
        .unwrap()
        .generation;
    let raw = (g.requirements)(&[(RequirementField::LsaBarrierCount, 3)], 23203).unwrap();
    let b = raw.bytes();
    assert_eq!(&b[0..8], &(b.len() as u64).to_ne_bytes(), "size");
    assert_eq!(&b[8..12], &0xcafe_beef_u32.to_ne_bytes(), "magic");
    assert_eq!(&b[12..16], &23203u32.to_ne_bytes(), "version");
    let cfg = (g.config)(false, 23203);
    let blocking = g
        .fields
        .iter()
        .find(|f| f.strukt == "ncclConfig_t" && f.field == "blocking")
        .unwrap()
        .offset;
    assert_eq!(&cfg.bytes()[blocking..blocking + 4], &0i32.to_ne_bytes());
}

/// The real libnccl.so.2 of a cached wheel, loaded on this (GPU-less) machine.
fn wheel_env(lib_version: &str, include_version: Option<&str>) -> Option<SearchEnv> {
    let lib = common::release_dir(lib_version)?.join("lib/libnccl.so.2");
    let mut pairs = vec![("CUDAJIT_NCCL_LIBRARY".to_string(), lib.into_os_string())];
    if let Some(h) = include_version {
        pairs.push((
            "CUDAJIT_NCCL_INCLUDE".into(),
            common::release_dir(h)?.join("include").into_os_string(),
        ));
    }
    lib_version_ok(&pairs).then(|| SearchEnv::isolated(pairs))
}

fn lib_version_ok(pairs: &[(String, std::ffi::OsString)]) -> bool {
    pairs.iter().all(|(_, p)| Path::new(p).exists())
}

#[test]
fn real_library_matching_headers_loads() {
    let Some(env) = wheel_env("2.28.3", None) else {
        common::skip("no cached NCCL 2.28.3 wheel");
        return;
    };
    let nccl = LoadedNccl::load(&env).unwrap();
    assert_eq!(nccl.version(), NcclVersion::new(2, 28, 3));
    assert!(nccl.layouts().exact);
    assert!(nccl.include_dir().unwrap().ends_with("nvidia/nccl/include"));
    assert!(
        nccl.sys().comm_query_properties.is_none(),
        "2.28 has no ncclCommQueryProperties"
    );
    println!("{}", nccl.report());
}

#[test]
fn real_library_with_other_release_headers_is_refused() {
    let Some(env) = wheel_env("2.28.3", Some("2.32.3")) else {
        common::skip("no cached NCCL 2.28.3 and 2.32.3 wheels");
        return;
    };
    let err = LoadedNccl::load(&env).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, NcclError::VersionMismatch { .. }), "{text}");
    assert!(text.contains("2.28.3") && text.contains("2.32.3"), "{text}");
    assert!(
        text.contains("libnccl.so.2") && text.contains("nccl.h"),
        "{text}"
    );
}
