//! `#[extern_device]` against a device library provided at run time
//! (`DeviceLibrary::provided`), on the CPU: the provider compiles its LTO-IR with libNVVM
//! for the architecture asked; calls inline; a symbol no part defines is named with the
//! provider's origin; a provider's error is the kernel's compile error.

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileError, CompileOptions};
use cudajit::codegen::device_library::LibraryParts;
use cudajit::codegen::toolchain::{NvvmModule, Toolchain};
use cudajit::prelude::*;
use cudajit::{Arch, DeviceLibrary, LibraryKind, LibraryPart, ProvidedLibrary, Specialization};

/// `provided_scale(x) = 3x`, compiled by libNVVM `-gen-lto` for SM version `sm`.
fn provide_scale(sm: u32) -> Result<ProvidedLibrary, String> {
    let toolchain = Toolchain::global().map_err(|e| e.to_string())?;
    let source = "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n\
        target triple = \"nvptx64-nvidia-cuda\"\n\
        define float @provided_scale(float %x) {\n  %y = fmul float %x, 3.0\n  ret float %y\n}\n\
        !nvvmir.version = !{!0}\n!0 = !{i32 2, i32 0}\n";
    let arch = format!("-arch=compute_{sm}");
    let ltoir = toolchain
        .nvvm()
        .and_then(|nvvm| {
            nvvm.compile(
                &[NvvmModule::new("scale.ll", source.as_bytes())],
                &[arch.as_str(), "-gen-lto"],
            )
        })
        .map_err(|e| e.to_string())?
        .result;
    Ok(ProvidedLibrary {
        origin: format!("scale.ll compiled for sm_{sm} by the test"),
        parts: vec![LibraryPart {
            name: "scale.ltoir".into(),
            kind: LibraryKind::LtoIr,
            bytes: ltoir,
        }],
    })
}

fn refuse(sm: u32) -> Result<ProvidedLibrary, String> {
    Err(format!(
        "nothing for sm_{sm}. Fix: install the scale library"
    ))
}

static SCALE: DeviceLibrary = DeviceLibrary::provided("scale", provide_scale);
static REFUSED: DeviceLibrary = DeviceLibrary::provided("refused", refuse);

#[extern_device(library = SCALE)]
extern "C" {
    fn provided_scale(x: f32) -> f32;
    fn provided_absent(x: f32) -> f32;
}

#[extern_device(library = REFUSED)]
extern "C" {
    fn refused_scale(x: f32) -> f32;
}

#[kernel]
fn scale(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = provided_scale(y[i]);
    }
}

#[kernel]
fn calls_absent(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = provided_absent(y[i]);
    }
}

#[kernel]
fn calls_refused(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = refused_scale(y[i]);
    }
}

#[test]
fn calls_into_a_provided_library_are_inlined() {
    let Some(_) = common::toolchain_or_skip() else {
        return;
    };
    let ptx = linked_ptx(
        scale::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.contains(".entry scale"), "{ptx}");
    assert!(!ptx.contains("provided_scale"), "not inlined:\n{ptx}");
    // 3.0f
    assert!(ptx.contains("0f40400000"), "{ptx}");
    scale::KERNEL
        .compile_for_arch(Arch::SM_80)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        SCALE.origin_for(80),
        "scale.ll compiled for sm_80 by the test"
    );
}

#[test]
fn a_symbol_no_part_defines_names_the_provider_origin() {
    let Some(_) = common::toolchain_or_skip() else {
        return;
    };
    let error = match calls_absent::KERNEL.compile_for_arch(Arch::SM_90) {
        Ok(_) => panic!("a kernel calling an undefined symbol linked"),
        Err(cudajit::Error::Compile(error)) => error,
        Err(other) => panic!("unexpected error: {other}"),
    };
    assert!(
        matches!(error, CompileError::MissingExtern { .. }),
        "{error:?}"
    );
    let text = error.to_string();
    for needle in [
        "`provided_absent`",
        "`scale`",
        "scale.ll compiled for sm_90 by the test",
    ] {
        assert!(text.contains(needle), "{needle} not in: {text}");
    }
}

#[test]
fn a_provider_error_is_the_compile_error() {
    let Some(_) = common::toolchain_or_skip() else {
        return;
    };
    let error = match calls_refused::KERNEL.compile_for_arch(Arch::SM_90) {
        Ok(_) => panic!("a kernel calling into a refused library linked"),
        Err(cudajit::Error::Compile(error)) => error,
        Err(other) => panic!("unexpected error: {other}"),
    };
    assert!(matches!(error, CompileError::Library { .. }), "{error:?}");
    let text = error.to_string();
    for needle in [
        "kernel `calls_refused`",
        "device library `refused`",
        "provided at run time for sm_90",
        "nothing for sm_90. Fix: install the scale library",
    ] {
        assert!(text.contains(needle), "{needle} not in: {text}");
    }
}
