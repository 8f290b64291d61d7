//! Without a GPU: every cudajit GEMM compiled for sm_90 and what its PTX holds, and the
//! CUDA C++ twin compiled by nvcc, so that both sides are known to build before a GPU run.

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::ir::Literal;
use cudajit::{Arch, Kernel, Specialization};

use super::options::{Algorithm, Layout, Output};
use super::twin;
use super::Result;
use super::{hopper, kernels};

/// The specialisation of a GEMM kernel for `layout`.
pub fn specialization(layout: Layout) -> Specialization {
    Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: vec![(
            "B_ROW_MAJOR".to_owned(),
            Literal::Bool(layout.b_row_major()),
        )],
    }
}

/// The forms of the Hopper GEMM: B's layout, bf16 or FP8 (e4m3) operands, clusters of two
/// blocks sharing B by multicast, persistent blocks walking the tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopperForm {
    pub layout: Layout,
    pub fp8: bool,
    pub cluster: bool,
    pub persistent: bool,
}

impl HopperForm {
    /// Every form the benchmark runs.
    pub const ALL: [HopperForm; 5] = [
        HopperForm {
            layout: Layout::Tn,
            fp8: false,
            cluster: false,
            persistent: false,
        },
        HopperForm {
            layout: Layout::Nn,
            fp8: false,
            cluster: false,
            persistent: false,
        },
        HopperForm {
            layout: Layout::Tn,
            fp8: true,
            cluster: false,
            persistent: false,
        },
        HopperForm {
            layout: Layout::Tn,
            fp8: false,
            cluster: true,
            persistent: false,
        },
        HopperForm {
            layout: Layout::Tn,
            fp8: false,
            cluster: false,
            persistent: true,
        },
    ];

    /// The specialisation writing C in f32.
    pub fn specialization(self) -> Specialization {
        self.specialization_for(Output::F32)
    }

    /// The specialisation writing C in `output`.
    pub fn specialization_for(self, output: Output) -> Specialization {
        let mut spec = specialization(self.layout);
        let bf16 = output == Output::Bf16;
        let c = if bf16 {
            cudajit::core::Scalar::BF16
        } else {
            cudajit::core::Scalar::F32
        };
        spec.types.push(("C".to_owned(), c));
        spec.consts
            .push(("FP8".to_owned(), Literal::Bool(self.fp8)));
        spec.consts
            .push(("CLUSTER".to_owned(), Literal::Bool(self.cluster)));
        spec.consts
            .push(("BF16_OUT".to_owned(), Literal::Bool(bf16)));
        spec.consts
            .push(("PERSISTENT".to_owned(), Literal::Bool(self.persistent)));
        spec
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

/// What the Hopper GEMM's sm_90a PTX must hold: per k-tile two TMA loads and four
/// `wgmma.m64n256k16` on the 128 accumulators, the producer's and consumers' `setmaxnreg`,
/// and nothing that leaves registers.
pub fn hopper_ptx_shape(ptx: &str, form: HopperForm) -> std::result::Result<String, String> {
    let HopperForm {
        layout,
        fp8,
        cluster,
        persistent: _,
    } = form;
    let count = |needle: &str| ptx.matches(needle).count();
    let wgmma = count(if fp8 {
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"
    } else {
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"
    });
    let tma = count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
    let multicast = count(".multicast::cluster");
    let cluster_barriers = count("barrier.cluster.arrive.release.aligned");
    let remote_arrivals = count("mbarrier.arrive.release.cluster.shared::cluster.b64");
    let setmaxnreg = count("setmaxnreg.");
    let shape = format!(
        "{wgmma} wgmma, {tma} TMA loads ({multicast} multicast), {cluster_barriers} cluster barriers, {remote_arrivals} remote arrivals, {setmaxnreg} setmaxnreg, {} .local, {} call, .maxntid {}",
        count(".local"),
        count("call"),
        ptx.contains(".maxntid 384")
    );
    // A's box, and B's: one box (TN) or four 64-column chunks (NN), their loop unrolled.
    let want_tma = match layout {
        Layout::Tn => 2,
        Layout::Nn => 5,
    };
    let want_cluster = if cluster { (1, 2, 1) } else { (0, 0, 0) };
    let fine = wgmma % 4 == 0
        && wgmma > 0
        && tma == want_tma
        && (multicast, cluster_barriers, remote_arrivals) == want_cluster
        && setmaxnreg == 2
        && count(".local") == 0
        && count("call") == 0
        && ptx.contains(".maxntid 384");
    if fine {
        Ok(shape)
    } else {
        Err(format!("unexpected PTX: {shape}"))
    }
}

/// The linked sm_90a PTX of the Hopper GEMM's `form`.
pub fn hopper_ptx(form: HopperForm) -> Result<String> {
    hopper_ptx_for(form, Output::F32)
}

/// The linked sm_90a PTX of the Hopper GEMM's `form` writing C in `output`.
pub fn hopper_ptx_for(form: HopperForm, output: Output) -> Result<String> {
    Ok(linked_ptx(
        hopper::gemm_wgmma::KERNEL.captured(),
        &form.specialization_for(output),
        Arch::SM_90A,
        &CompileOptions::default(),
    )?)
}

pub fn cpu_check() -> Result<bool> {
    let mut fine = true;
    for form in HopperForm::ALL {
        let name = format!(
            "gemm_wgmma::<{}, {}, {}>",
            form.layout.b_row_major(),
            form.fp8,
            form.cluster
        );
        let ptx = hopper_ptx(form)?;
        let started = std::time::Instant::now();
        hopper::gemm_wgmma::KERNEL.compile_for_arch_with(Arch::SM_90A, &form.specialization())?;
        let compile_ms = started.elapsed().as_secs_f64() * 1e3;
        let operands = if form.fp8 { "e4m3" } else { "bf16" };
        match hopper_ptx_shape(&ptx, form) {
            Ok(shape) => println!(
                "{name} ({}, {operands}, C f32) for sm_90a: {shape}; cubin (libNVVM + nvJitLink) in {compile_ms:.0} ms",
                form.layout.name()
            ),
            Err(error) => {
                println!("{name}: {error}");
                fine = false;
            }
        }
    }
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
    for algorithm in [Algorithm::Mma, Algorithm::Wgmma] {
        let name = algorithm.name();
        match twin::build(&dir, algorithm) {
            Ok(path) => println!("the {name} CUDA C++ twin compiles: {}", path.display()),
            Err(twin::BuildError::NoNvcc(why))
                if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1") =>
            {
                println!("the {name} CUDA C++ twin was not compiled: no nvcc ({why})");
            }
            Err(error) => {
                println!("the {name} CUDA C++ twin does not build: {error}");
                fine = false;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(fine)
}
