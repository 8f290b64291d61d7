//! The cluster instructions selected (sm_90): `barrier.cluster`, `mapa`,
//! `ld`/`st.shared::cluster` and `mbarrier.arrive` on a `.shared::cluster` barrier.

use super::super::template::{Instruction, Operand};
use super::Binder;
use crate::ptx::cluster::DsmemAccess;
use crate::ptx::PtxOp;

/// The cluster instruction `instruction`, or `None` for another one.
pub(super) fn select(
    binder: &mut Binder<'_>,
    instruction: &Instruction,
) -> Result<Option<PtxOp>, String> {
    let parts: Vec<&str> = instruction.opcode.split('.').collect();
    let operands = instruction.operands.as_slice();
    let no_operands = |op: PtxOp| {
        if operands.is_empty() {
            Ok(Some(op))
        } else {
            Err("takes no operands".to_owned())
        }
    };
    match parts.as_slice() {
        ["barrier", "cluster", "arrive", rest @ ..]
            if rest
                .iter()
                .all(|q| matches!(*q, "release" | "relaxed" | "aligned")) =>
        {
            no_operands(PtxOp::ClusterArrive)
        }
        ["barrier", "cluster", "wait", rest @ ..]
            if rest.iter().all(|q| matches!(*q, "acquire" | "aligned")) =>
        {
            no_operands(PtxOp::ClusterWait)
        }
        ["mapa", "shared::cluster", "u32" | "b32"] => {
            let [dst, address, rank] = operands else {
                return Err("takes d, a, rank".into());
            };
            Ok(Some(PtxOp::Mapa {
                dst: binder.output(dst)?,
                address: binder.input(address)?,
                rank: binder.input(rank)?,
            }))
        }
        [op @ ("ld" | "st"), "shared::cluster", ty] => {
            let size = match *ty {
                "u32" | "s32" | "b32" | "f32" => 4,
                "u64" | "s64" | "b64" | "f64" => 8,
                _ => {
                    return Err(format!(
                        "a `.{ty}` access: the simulator runs 32- and 64-bit `.shared::cluster` accesses (u32, s32, b32, f32, u64, s64, b64, f64)"
                    ))
                }
            };
            let store = *op == "st";
            let (address, value) = match operands {
                [value, address] if !store => (address, binder.output(value)?),
                [address, value] if store => (address, binder.input(value)?),
                _ => return Err("takes d, [a] (`ld`) or [a], b (`st`)".into()),
            };
            Ok(Some(PtxOp::Dsmem(DsmemAccess {
                address: binder.address(address)?,
                size,
                value,
                store,
            })))
        }
        ["mbarrier", "arrive", rest @ ..]
            if rest.ends_with(&["shared::cluster", "b64"])
                && rest[..rest.len() - 2]
                    .iter()
                    .all(|q| matches!(*q, "release" | "relaxed" | "cluster")) =>
        {
            let [Operand::Sink, barrier] = operands else {
                return Err(
                    "takes _, [barrier] (a `.shared::cluster` arrival returns no state)".into(),
                );
            };
            Ok(Some(PtxOp::MbarrierArriveCluster {
                barrier: binder.address(barrier)?,
            }))
        }
        _ => Ok(None),
    }
}
