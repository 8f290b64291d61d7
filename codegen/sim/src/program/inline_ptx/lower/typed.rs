//! Typed tensor-core operations ([`cudajit_core::tensor_op::TensorOp`]) selected into the
//! interpreter's operations directly: the operation says what it is, so its text is not
//! read. Lowering has checked the operands' shapes against the operation.

use cudajit_core::tensor_op::{TensorOp, WgmmaInput};

use super::Emit;
use crate::isa::{Op, Reg};
use crate::ptx::wgmma::{Wgmma, WgmmaA, WgmmaInputs};
use crate::ptx::{NamedBarrier, PtxOp};

/// Emits `op`, whose operand `N` has the registers `operands[N]`.
pub(crate) fn lower_typed(
    op: &TensorOp,
    operands: &[Vec<Reg>],
    out: &mut dyn Emit,
) -> Result<(), String> {
    let one = |index: usize| match operands.get(index).map(Vec::as_slice) {
        Some([reg]) => Ok(*reg),
        _ => Err(format!(
            "`{}`: operand {index} is not one register",
            op.ptx_name()
        )),
    };
    let ptx = match *op {
        TensorOp::MbarrierInit => PtxOp::MbarrierInit {
            barrier: one(0)?,
            count: one(1)?,
        },
        TensorOp::MbarrierArrive { expect_tx } => PtxOp::MbarrierArrive {
            state: None,
            barrier: one(0)?,
            bytes: if expect_tx { Some(one(1)?) } else { None },
            arrive: true,
        },
        // The simulator's proxies are one memory: a barrier's initialisation is a fence.
        TensorOp::FenceBarrierInit => {
            out.emit(Op::Fence);
            return Ok(());
        }
        TensorOp::FenceProxyAsync => PtxOp::ProxyFence,
        TensorOp::BulkCommit => PtxOp::BulkCommit,
        TensorOp::BulkWaitRead => PtxOp::BulkWait { keep: 0 },
        TensorOp::CpAsyncCommit => PtxOp::CpAsyncCommit,
        TensorOp::CpAsyncWaitAll => PtxOp::CpAsyncWait { keep: None },
        TensorOp::WgmmaFence => PtxOp::WgmmaFence,
        TensorOp::WgmmaCommitGroup => PtxOp::WgmmaCommit,
        TensorOp::WgmmaWaitGroup { keep } => PtxOp::WgmmaWait { keep },
        TensorOp::SetMaxNreg { .. } => PtxOp::SetMaxNreg,
        TensorOp::NamedBarrier { wait, threads } => {
            let id = match operands.first().map(Vec::as_slice) {
                Some([reg]) => *reg,
                _ => return Err("a named barrier's number is one register".into()),
            };
            PtxOp::NamedBarrier(NamedBarrier {
                id,
                count: Some(out.constant(u64::from(threads))),
                wait,
            })
        }
        TensorOp::Wgmma(form) => {
            let d = operands.first().cloned().unwrap_or_default();
            if d.len() != form.n as usize / 2 {
                return Err(format!(
                    "`{}` takes {} accumulators per thread, not {}",
                    op.ptx_name(),
                    form.n / 2,
                    d.len()
                ));
            }
            let a = if form.register_a {
                WgmmaA::Registers(operands.get(1).cloned().unwrap_or_default())
            } else {
                WgmmaA::Descriptor(one(1)?)
            };
            PtxOp::Wgmma(Wgmma {
                inputs: match form.input {
                    WgmmaInput::Bf16 => WgmmaInputs::Bf16,
                    WgmmaInput::F16 => WgmmaInputs::F16,
                    WgmmaInput::E4m3 => WgmmaInputs::E4m3,
                    WgmmaInput::E5m2 => WgmmaInputs::E5m2,
                },
                n: form.n,
                k: form.input.k(),
                d,
                a,
                b: one(2)?,
                scale_d: one(3)?,
                negate_a: false,
                negate_b: false,
                trans_a: form.trans_a,
                trans_b: form.trans_b,
            })
        }
    };
    out.emit(Op::Ptx(Box::new(ptx)));
    Ok(())
}
