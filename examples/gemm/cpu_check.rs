//! Without a GPU: every cudajit GEMM compiled for sm_90 and what its PTX holds, and the
//! CUDA C++ twin compiled by nvcc, so that both sides are known to build before a GPU run.

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::ir::Literal;
use cudajit::{Arch, Kernel, Specialization};

use super::kernels;
use super::options::{Layout, Output};
use super::twin;
use super::Result;

/// The specialisation of a GEMM kernel for `layout`.
pub fn specialization(layout: Layout) -> Specialization {
    Specialization {
        types: Vec::new(),
        consts: vec![(
            "B_ROW_MAJOR".to_owned(),
            Literal::Bool(layout.b_row_major()),
        )],
    }
}

/// The cudajit kernel for `output` (specialised for the layout by [`specialization`]).
pub fn kernel(output: Output) -> &'static Kernel {
    match output {
        Output::F32 => &kernels::gemm_bf16::KERNEL,
        Output::Bf16 => &kernels::gemm_bf16_to_bf16::KERNEL,
    }
}

/// The linked sm_90 PTX of the GEMM for `layout` and `output`.
pub fn ptx(layout: Layout, output: Output) -> Result<String> {
    Ok(linked_ptx(
        kernel(output).captured(),
        &specialization(layout),
        Arch::SM_90,
        &CompileOptions::default(),
    )?)
}

/// What the PTX of one GEMM must hold: the instructions of `kernels.rs` and nothing that
/// leaves registers (local memory, calls). Returns the counts, or what is wrong.
pub fn ptx_shape(ptx: &str, layout: Layout, output: Output) -> std::result::Result<String, String> {
    let count = |needle: &str| ptx.matches(needle).count();
    let mma = count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
    let ldmatrix = count("ldmatrix.sync.aligned.m8n8.x4.shared.b16");
    let trans = count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16");
    let copies = count("cp.async.cg.shared.global");
    let packs = count("cvt.rn.bf16x2.f32");
    let shape = format!(
        "{mma} mma.sync, {ldmatrix} ldmatrix.x4, {trans} ldmatrix.x4.trans, {copies} cp.async, \
         {packs} cvt.rn.bf16x2, {} .local, {} call",
        count(".local"),
        count("call")
    );
    // The i and j loops are unrolled (the accumulators are registers); libNVVM unrolls the
    // four k steps of a k-tile or keeps them a loop (it keeps TN's, unrolls NN's; nvcc's
    // NVVM decides the same for the twin). Each k step: 32 MMAs, 4 ldmatrix.x4 for A and 4
    // for B, `.trans` for NN.
    let steps = mma / 32;
    let (plain, transposed) = match layout {
        Layout::Tn => (8 * steps, 0),
        Layout::Nn => (4 * steps, 4 * steps),
    };
    let want_packs = match output {
        Output::F32 => 0,
        Output::Bf16 => 64,
    };
    let fine = (steps == 1 || steps == 4)
        && mma == 32 * steps
        && ldmatrix == plain
        && trans == transposed
        && copies >= 16
        && packs == want_packs
        && count(".local") == 0
        && count("call") == 0;
    if fine {
        Ok(shape)
    } else {
        Err(format!("unexpected PTX: {shape}"))
    }
}

pub fn cpu_check() -> Result<bool> {
    let mut fine = true;
    for layout in Layout::ALL {
        for output in Output::ALL {
            let name = format!("{}::<{}>", kernel(output).name(), layout.b_row_major());
            match ptx_shape(&ptx(layout, output)?, layout, output) {
                Ok(shape) => println!(
                    "{name} ({}, C {}) for sm_90: {shape}",
                    layout.name(),
                    output.name()
                ),
                Err(error) => {
                    println!("{name}: {error}");
                    fine = false;
                }
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("cudajit-gemm-twin-{}", std::process::id()));
    match twin::build(&dir) {
        Ok(path) => println!(
            "the CUDA C++ twin compiles: {} (nvcc -O3 -arch=sm_90 -cubin)",
            path.display()
        ),
        Err(twin::BuildError::NoNvcc(why))
            if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1") =>
        {
            println!("the CUDA C++ twin was not compiled: no nvcc ({why})");
        }
        Err(error) => {
            println!("the CUDA C++ twin does not build: {error}");
            fine = false;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(fine)
}
