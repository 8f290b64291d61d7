//! The reshard kernels every link test checks, with their specialisations (shared by
//! `tests/m2n_device.rs` and `tests/m2n_device_2_32.rs`).

use cudajit::core::ir::Literal;
use cudajit::core::types::Scalar;
use cudajit::core::CapturedKernel;
use cudajit::nccl::m2n::kernels;
use cudajit::Specialization;

/// Every reshard kernel specialisation: (kernel, specialisation, whether it moves 16-byte
/// vectors). The pull kernel of each element type (0 bf16, 1 f16, 2 f32, 3–4 FP8) with
/// each reduction (0 sum, 1 max; FP8 is never reduced).
pub fn every_kernel() -> Vec<(&'static CapturedKernel, Specialization, bool)> {
    let u32 = |v: u32| Literal::Int {
        bits: v as u64,
        ty: Scalar::U32,
    };
    let pull = |dtype: u32, op: u32| Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: vec![("dtype".into(), u32(dtype)), ("op".into(), u32(op))],
    };
    let mut all = vec![(
        kernels::m2n_pack::KERNEL.captured(),
        Specialization::default(),
        true,
    )];
    for (dtype, ops) in [(0, 2), (1, 2), (2, 2), (3, 1), (4, 1)] {
        for op in 0..ops {
            all.push((kernels::m2n_pull::KERNEL.captured(), pull(dtype, op), true));
        }
    }
    all
}
