//! Hopper's architecture-specific target (`sm_90a`) and TMA tensor maps: compiled to
//! cubins on the CPU; the GPU tests skip themselves without a GPU.

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileError};
use cudajit::codegen::cubin;
use cudajit::prelude::*;
use cudajit::{Arch, Error};

/// `wgmma.fence` exists only on `sm_90a`.
#[kernel(arch = "sm_90a")]
fn wgmma_fence_declared() {
    ptx!("wgmma.fence.sync.aligned;");
}

/// The same instruction in a kernel that does not declare the target.
#[kernel]
fn wgmma_fence_undeclared() {
    ptx!("wgmma.fence.sync.aligned;");
}

/// A kernel with portable instructions only.
#[kernel]
fn portable(x: &mut [u32]) {
    let i = global_index();
    if i < x.len() {
        x[i] += 1;
    }
}

#[test]
fn a_declared_kernel_compiles_to_an_sm_90a_cubin() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    // Asked for the H200's own architecture, the kernel gets its `a` target.
    for asked in [Arch::SM_90, Arch::SM_90A] {
        let compiled = wgmma_fence_declared::KERNEL
            .compile_for_arch(asked)
            .unwrap();
        assert_eq!(compiled.arch, Arch::SM_90A);
        let info = cubin::inspect(&compiled.cubin).unwrap();
        assert!(info.has_function(&compiled.entry));
    }
    let ptx = linked_ptx(
        wgmma_fence_declared::KERNEL.captured(),
        &Default::default(),
        Arch::SM_90,
        &Default::default(),
    )
    .unwrap();
    assert!(ptx.contains(".target sm_90a"), "{ptx}");
    assert!(ptx.contains("wgmma.fence.sync.aligned"), "{ptx}");
}

#[test]
fn sm_90_and_sm_90a_cubins_are_different_targets() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let plain = portable::KERNEL.compile_for_arch(Arch::SM_90).unwrap();
    let specific = portable::KERNEL.compile_for_arch(Arch::SM_90A).unwrap();
    assert_ne!(
        plain.key, specific.key,
        "the cache key must tell them apart"
    );
    // ptxas records its target in the cubin's `.note.nv.tkinfo` (`-arch sm_90a `).
    let records = |bytes: &[u8], option: &str| {
        bytes
            .windows(option.len())
            .any(|window| window == option.as_bytes())
    };
    assert!(records(&plain.cubin, "-arch sm_90 "));
    assert!(records(&specific.cubin, "-arch sm_90a "));
    assert!(!records(&plain.cubin, "-arch sm_90a"));
}

#[test]
fn an_undeclared_specific_instruction_names_the_fix() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let error = wgmma_fence_undeclared::KERNEL
        .compile_for_arch(Arch::SM_90)
        .unwrap_err();
    let Error::Compile(CompileError::NeedsSpecificArch {
        instructions,
        specific,
        ..
    }) = &error
    else {
        panic!("expected NeedsSpecificArch, got {error}");
    };
    assert_eq!(instructions, &["wgmma.fence"]);
    assert_eq!(*specific, Arch::SM_90A);
    let message = error.to_string();
    assert!(message.contains("`wgmma_fence_undeclared`"), "{message}");
    assert!(
        message.contains("#[kernel(arch = \"sm_90a\")]"),
        "{message}"
    );
    // Compiled for sm_90a explicitly, it links.
    let compiled = wgmma_fence_undeclared::KERNEL
        .compile_for_arch(Arch::SM_90A)
        .unwrap();
    assert_eq!(compiled.arch, Arch::SM_90A);
}

#[test]
fn a_declared_kernel_refuses_other_compute_capabilities() {
    for arch in [Arch::SM_80, Arch::new(10, 0)] {
        let error = wgmma_fence_declared::KERNEL
            .compile_for_arch(arch)
            .unwrap_err();
        assert!(
            matches!(error, Error::Compile(CompileError::ArchMismatch { .. })),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains("compute capability 9.0"), "{message}");
        assert!(message.contains(&arch.to_string()), "{message}");
    }
}

/// On an H100/H200 the declared kernel loads and runs (an `sm_90a` cubin).
#[test]
fn gpu_a_declared_kernel_runs_on_hopper() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: not a compute capability 9.0 GPU");
        return;
    }
    let stream = context.default_stream();
    wgmma_fence_declared::launch(&stream, LaunchConfig::for_elements(128)).unwrap();
    stream.synchronize().unwrap();
    let loaded = wgmma_fence_declared::KERNEL.compile(&context).unwrap();
    assert_eq!(loaded.compiled().arch, Arch::SM_90A);
}
