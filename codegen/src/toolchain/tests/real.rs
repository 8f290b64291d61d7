//! Real libNVVM / nvJitLink / NVRTC / nvcc from NVIDIA's wheels.
//!
//! Uses `CUDAJIT_TOOLS_DIR` from the process environment, else
//! `/root/.cache/cudajit-tools/site-packages`. When that directory is missing
//! each test prints why it is skipped and passes, unless
//! `CUDAJIT_REQUIRE_TOOLCHAIN=1`, in which case it fails.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::toolchain::{
    invocation_counts, InputKind, LinkInput, NvvmModule, Origin, SearchEnv, Toolchain,
    ToolchainError,
};

const DEFAULT_WHEELS: &str = "/root/.cache/cudajit-tools/site-packages";

const SAXPY: &str = r#"target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define void @saxpy(float %a, float* noalias readonly %x, float* noalias %y, i64 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %c = icmp ult i64 %i, %n
  br i1 %c, label %body, label %done
body:
  %px = getelementptr float, float* %x, i64 %i
  %vx = load float, float* %px, align 4
  %py = getelementptr float, float* %y, i64 %i
  %vy = load float, float* %py, align 4
  %m = fmul float %a, %vx
  %s = fadd float %m, %vy
  store float %s, float* %py, align 4
  br label %done
done:
  ret void
}
@llvm.used = appending global [1 x i8*] [i8* bitcast (void (float, float*, float*, i64)* @saxpy to i8*)], section "llvm.metadata"
!nvvm.annotations = !{!0}
!0 = !{void (float, float*, float*, i64)* @saxpy, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
"#;

const SINE: &str = r#"target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
declare float @__nv_sinf(float)
define void @sine(float* %p) {
entry:
  %v = load float, float* %p, align 4
  %s = call float @__nv_sinf(float %v)
  store float %s, float* %p, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (float*)* @sine, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
"#;

/// The shared real toolchain, or `None` (with the reason printed) to skip.
fn toolchain(test: &str) -> Option<&'static Toolchain> {
    static TC: OnceLock<Option<Toolchain>> = OnceLock::new();
    let tc = TC.get_or_init(|| {
        let dir = std::env::var_os("CUDAJIT_TOOLS_DIR")
            .map_or_else(|| PathBuf::from(DEFAULT_WHEELS), PathBuf::from);
        if !dir.is_dir() {
            return None;
        }
        let env = SearchEnv::isolated([("CUDAJIT_TOOLS_DIR", dir)]);
        Some(Toolchain::discover(&env).unwrap_or_else(|e| panic!("wheel dir exists but: {e}")))
    });
    if tc.is_none() {
        let required = std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "{test}: no NVIDIA wheels found and CUDAJIT_REQUIRE_TOOLCHAIN=1"
        );
        eprintln!("skipping {test}: no NVIDIA wheels (set CUDAJIT_TOOLS_DIR, or CUDAJIT_REQUIRE_TOOLCHAIN=1 to fail)");
    }
    tc.as_ref()
}

fn saxpy_module() -> NvvmModule<'static> {
    NvvmModule::new("saxpy.ll", SAXPY.as_bytes())
}

#[test]
fn versions_are_plausible() {
    let Some(tc) = toolchain("versions_are_plausible") else {
        return;
    };
    println!("{}", tc.report());
    for l in [
        tc.nvvm_location(),
        tc.libdevice_location(),
        tc.nvjitlink_location(),
    ] {
        assert!(matches!(l.origin, Origin::PythonWheel(_)), "{l:?}");
    }
    let v = tc.versions().expect("versions");
    println!("versions: {v}");
    println!(
        "nvJitLink ABI suffix: {:?}",
        tc.nvjitlink().expect("nvJitLink").abi_suffix()
    );
    assert!(v.nvvm.0 >= 2, "libNVVM {:?}", v.nvvm);
    assert!(v.nvvm_ir.0 >= 2, "NVVM IR {:?}", v.nvvm_ir);
    assert!(v.nvjitlink.0 >= 12, "nvJitLink {:?}", v.nvjitlink);
    let nvrtc = tc.nvrtc().expect("NVRTC");
    println!(
        "NVRTC {:?}, LTO-IR capable: {}",
        nvrtc.version(),
        nvrtc.can_compile_to_ltoir()
    );
    assert!(nvrtc.version().0 >= 12);
    assert_eq!(nvrtc.error_string(6), "NVRTC_ERROR_COMPILATION");
    // cudarc's own NVRTC API now runs on the discovered library (a wheel that is on no
    // loader path, which cudarc alone cannot find).
    let ptx = cudarc::nvrtc::compile_ptx("extern \"C\" __global__ void probe() {}")
        .expect("cudarc::nvrtc::compile_ptx on the discovered NVRTC");
    assert!(ptx.to_src().contains(".entry probe"), "{}", ptx.to_src());
    let nvcc = tc.nvcc_version().expect("nvcc --version");
    println!("nvcc {nvcc}");
    assert!(nvcc.starts_with(&format!("{}.", v.nvjitlink.0)), "{nvcc}");
    assert_eq!(tc.libdevice_bytes().expect("libdevice")[..2], *b"BC");
}

#[test]
fn saxpy_compiles_to_ptx() {
    let Some(tc) = toolchain("saxpy_compiles_to_ptx") else {
        return;
    };
    let before = invocation_counts();
    let out = tc
        .nvvm()
        .expect("libNVVM")
        .compile(&[saxpy_module()], &["-arch=compute_90"])
        .expect("compile");
    let ptx = out.as_text().expect("PTX is text");
    assert!(ptx.contains(".entry saxpy"), "{ptx}");
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(!ptx.ends_with('\0'));
    assert!(invocation_counts().nvvm_compiles > before.nvvm_compiles);
    assert!(invocation_counts().libraries_loaded >= 1);
}

#[test]
fn lto_ir_links_into_a_cubin_with_ptx() {
    let Some(tc) = toolchain("lto_ir_links_into_a_cubin_with_ptx") else {
        return;
    };
    let nvvm = tc.nvvm().expect("libNVVM");
    let lto = nvvm
        .compile(&[saxpy_module()], &["-arch=compute_90", "-gen-lto"])
        .expect("LTO-IR");
    assert!(!lto.result.is_empty());
    println!(
        "LTO-IR: {} bytes, starts {:02x?}",
        lto.result.len(),
        &lto.result[..8.min(lto.result.len())]
    );

    let before = invocation_counts();
    let input = LinkInput {
        name: "saxpy.ltoir",
        kind: InputKind::LtoIr,
        bytes: &lto.result,
    };
    let linked = tc
        .nvjitlink()
        .expect("nvJitLink")
        .link(&[input], &["-arch=sm_90", "-lto"], true)
        .expect("link");
    assert_eq!(&linked.cubin[..4], b"\x7fELF");
    let ptx = linked.ptx.as_deref().expect("linked PTX");
    assert!(ptx.contains(".entry saxpy"), "{ptx}");
    assert!(invocation_counts().nvjitlink_links > before.nvjitlink_links);

    // The cubin does not depend on asking for PTX, and a stray `-ptx` in the
    // options (which would stop nvJitLink producing a cubin) is ignored.
    let again = tc.nvjitlink().expect("nvJitLink");
    let again = again
        .link(&[input], &["-arch=sm_90", "-lto", "-ptx"], false)
        .expect("link");
    assert_eq!(again.ptx, None);
    assert_eq!(again.cubin, linked.cubin);
}

#[test]
fn libdevice_is_linked_lazily() {
    let Some(tc) = toolchain("libdevice_is_linked_lazily") else {
        return;
    };
    let libdevice = tc.libdevice_bytes().expect("libdevice");
    let modules = [
        NvvmModule::new("sine.ll", SINE.as_bytes()),
        NvvmModule::lazy("libdevice.10.bc", libdevice),
    ];
    let out = tc
        .nvvm()
        .expect("libNVVM")
        .compile(&modules, &["-arch=compute_90"])
        .expect("compile");
    let ptx = out.as_text().expect("text");
    assert!(ptx.contains(".entry sine"), "{ptx}");
    // Lazy addition keeps only what is used: __nv_sinf got inlined, and
    // none of libdevice's hundreds of other functions were emitted.
    assert!(
        !ptx.contains("__nv_cosf") && !ptx.contains(".func"),
        "{ptx}"
    );
}

#[test]
fn garbage_ir_fails_with_the_libnvvm_log() {
    let Some(tc) = toolchain("garbage_ir_fails_with_the_libnvvm_log") else {
        return;
    };
    let before = invocation_counts();
    let bad = NvvmModule::new("garbage.ll", b"this is not NVVM IR at all");
    let err = tc
        .nvvm()
        .expect("libNVVM")
        .compile(&[bad], &["-arch=compute_90"])
        .expect_err("garbage must fail");
    let ToolchainError::NvvmCompile(failure) = &err else {
        panic!("{err:?}")
    };
    assert!(!failure.log.trim().is_empty(), "empty log: {err}");
    let text = err.to_string();
    println!("{text}");
    assert!(
        text.contains(failure.log.trim())
            && text.contains("garbage.ll")
            && text.contains("-arch=compute_90")
    );
    assert!(
        invocation_counts().nvvm_compiles > before.nvvm_compiles,
        "failed compiles count too"
    );
}

#[test]
fn link_failure_names_the_inputs() {
    let Some(tc) = toolchain("link_failure_names_the_inputs") else {
        return;
    };
    let bad = LinkInput {
        name: "broken.ltoir",
        kind: InputKind::LtoIr,
        bytes: b"not LTO-IR",
    };
    let err = tc
        .nvjitlink()
        .expect("nvJitLink")
        .link(&[bad], &["-arch=sm_90", "-lto"], false)
        .expect_err("must fail");
    let text = err.to_string();
    println!("{text}");
    assert!(matches!(err, ToolchainError::NvJitLinkFailed(_)), "{err:?}");
    assert!(text.contains("broken.ltoir (LTO-IR)"), "{text}");

    // A bad option fails in nvJitLinkCreate, whose error log still explains it.
    let err = tc
        .nvjitlink()
        .expect("nvJitLink")
        .link(&[bad], &["-arch=sm_90", "-bogus"], false)
        .expect_err("bad option");
    let ToolchainError::NvJitLinkFailed(failure) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(failure.function, "nvJitLinkCreate");
    assert!(failure.error_log.contains("-bogus"), "{err}");
}

#[test]
fn nul_in_an_option_is_rejected_before_calling_c() {
    let Some(tc) = toolchain("nul_in_an_option_is_rejected_before_calling_c") else {
        return;
    };
    let err = tc
        .nvvm()
        .expect("libNVVM")
        .compile(&[saxpy_module()], &["-arch=compute_90\0"])
        .expect_err("NUL");
    assert!(
        matches!(err, ToolchainError::InvalidArgument { .. }),
        "{err:?}"
    );
}

#[test]
fn compiles_run_concurrently_from_many_threads() {
    let Some(tc) = toolchain("compiles_run_concurrently_from_many_threads") else {
        return;
    };
    let nvvm = tc.nvvm().expect("libNVVM");
    let jl = tc.nvjitlink().expect("nvJitLink");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let lto = nvvm
                    .compile(&[saxpy_module()], &["-arch=compute_90", "-gen-lto"])
                    .expect("compile");
                let input = LinkInput {
                    name: "saxpy",
                    kind: InputKind::LtoIr,
                    bytes: &lto.result,
                };
                let linked = jl
                    .link(&[input], &["-arch=sm_90", "-lto"], false)
                    .expect("link");
                assert_eq!(&linked.cubin[..4], b"\x7fELF");
            });
        }
    });
}
