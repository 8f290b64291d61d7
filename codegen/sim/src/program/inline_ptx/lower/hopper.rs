//! Hopper's instructions selected (sm_90/sm_90a): `mbarrier`, the proxy and barrier-init
//! fences, `setmaxnreg` and `wgmma`.

use super::super::template::{Instruction, Operand};
use super::Binder;
use crate::isa::Op;
use crate::ptx::tma::{TmaLoad, TmaStore};
use crate::ptx::wgmma::{Wgmma, WgmmaA, WgmmaInputs};
use crate::ptx::PtxOp;

/// Qualifiers of memory ordering and scope, which the simulator's accesses satisfy
/// whatever they say (every access is ordered; see docs/simulator.md).
const ORDERING: [&str; 8] = [
    "release", "acquire", "relaxed", "cta", "cluster", "gpu", "sys", "sem",
];

/// What [`select`] made of an instruction.
pub(super) enum Selection {
    /// The operation to emit.
    Op(PtxOp),
    /// Lowered already (a fence), or nothing to run (a prefetch).
    Done,
    /// Not a Hopper instruction.
    Other,
}

/// The Hopper instruction `instruction`.
pub(super) fn select(
    binder: &mut Binder<'_>,
    instruction: &Instruction,
) -> Result<Selection, String> {
    let parts: Vec<&str> = instruction
        .opcode
        .split('.')
        .filter(|p| !ORDERING.contains(p))
        .collect();
    let operands = instruction.operands.as_slice();
    let shared_b64 = |rest: &[&str]| matches!(rest, ["shared::cta" | "shared", "b64"]);
    Ok(Selection::Op(match parts.as_slice() {
        ["mbarrier", "init", rest @ ..] if shared_b64(rest) => {
            let [barrier, count] = operands else {
                return Err("takes [barrier], count".into());
            };
            PtxOp::MbarrierInit {
                barrier: binder.address(barrier)?,
                count: binder.input(count)?,
            }
        }
        ["mbarrier", "arrive", rest @ ..] if shared_b64(rest) => {
            let [state, barrier] = operands else {
                return Err("takes state, [barrier] (an arrival count is not simulated)".into());
            };
            PtxOp::MbarrierArrive {
                state: state_register(binder, state)?,
                barrier: binder.address(barrier)?,
                bytes: None,
                arrive: true,
            }
        }
        ["mbarrier", "arrive", "expect_tx", rest @ ..] if shared_b64(rest) => {
            let [state, barrier, bytes] = operands else {
                return Err("takes state, [barrier], bytes".into());
            };
            PtxOp::MbarrierArrive {
                state: state_register(binder, state)?,
                barrier: binder.address(barrier)?,
                bytes: Some(binder.input(bytes)?),
                arrive: true,
            }
        }
        ["mbarrier", "expect_tx", rest @ ..] if shared_b64(rest) => {
            let [barrier, bytes] = operands else {
                return Err("takes [barrier], bytes".into());
            };
            PtxOp::MbarrierArrive {
                state: None,
                barrier: binder.address(barrier)?,
                bytes: Some(binder.input(bytes)?),
                arrive: false,
            }
        }
        ["mbarrier", wait @ ("try_wait" | "test_wait"), "parity", rest @ ..]
            if shared_b64(rest) =>
        {
            let (done, barrier, parity) = match operands {
                [done, barrier, parity] | [done, barrier, parity, _] => (done, barrier, parity),
                _ => return Err("takes done, [barrier], parity".into()),
            };
            PtxOp::MbarrierWait {
                done: binder.output(done)?,
                barrier: binder.address(barrier)?,
                parity: binder.input(parity)?,
                suspend: *wait == "try_wait",
            }
        }
        // The generic proxy's stores reach the asynchronous proxy (checked, `proxy.rs`).
        ["fence", "proxy", "async", ..] if operands.is_empty() => PtxOp::ProxyFence,
        // Orderings of barrier initialisations and of tensor maps written by the host:
        // the simulator's proxies are one memory, so a host fence.
        ["fence", "mbarrier_init"] | ["fence", "proxy", "tensormap::generic"] => {
            binder.emit(Op::Fence);
            return Ok(Selection::Done);
        }
        // A hint: the simulator reads a map where a copy uses it.
        ["prefetch", "tensormap"] => return Ok(Selection::Done),
        // A prefetch of a box into L2: a hint, with nothing to simulate but its operands.
        ["cp", "async", "bulk", "prefetch", "tensor", dims, "L2", "global"] => {
            let rank = rank_of(dims)?;
            let [source] = operands else {
                return Err("takes [map, {coordinates}]".into());
            };
            map_and_coordinates(binder, source, rank)?;
            return Ok(Selection::Done);
        }
        ["setmaxnreg", "inc" | "dec", "sync", "aligned", "u32"] => {
            let [count] = operands else {
                return Err("takes the register count".into());
            };
            let count = Binder::immediate(count)?;
            if !(24..=256).contains(&count) || count % 8 != 0 {
                return Err(format!(
                    "asks for {count} registers: the count is a multiple of 8 from 24 to 256"
                ));
            }
            PtxOp::SetMaxNreg
        }
        ["cp", "async", "bulk", "tensor", dims, "shared::cluster" | "shared::cta", "global", "mbarrier::complete_tx::bytes"] =>
        {
            let rank = rank_of(dims)?;
            let [destination, source, barrier] = operands else {
                return Err("takes [shared], [map, {coordinates}], [barrier] (cache hints are not simulated)".into());
            };
            let (map, coordinates) = map_and_coordinates(binder, source, rank)?;
            PtxOp::TmaLoad(TmaLoad {
                destination: binder.address(destination)?,
                map,
                coordinates,
                barrier: binder.address(barrier)?,
                multicast: None,
            })
        }
        ["cp", "async", "bulk", "tensor", dims, "shared::cluster", "global", "mbarrier::complete_tx::bytes", "multicast::cluster"] =>
        {
            let rank = rank_of(dims)?;
            let [destination, source, barrier, mask] = operands else {
                return Err("takes [shared], [map, {coordinates}], [barrier], cta_mask (cache hints are not simulated)".into());
            };
            let (map, coordinates) = map_and_coordinates(binder, source, rank)?;
            PtxOp::TmaLoad(TmaLoad {
                destination: binder.address(destination)?,
                map,
                coordinates,
                barrier: binder.address(barrier)?,
                multicast: Some(binder.input(mask)?),
            })
        }
        ["cp", "async", "bulk", "tensor", dims, "global", "shared::cta", "bulk_group"] => {
            let rank = rank_of(dims)?;
            let [destination, source] = operands else {
                return Err("takes [map, {coordinates}], [shared]".into());
            };
            let (map, coordinates) = map_and_coordinates(binder, destination, rank)?;
            PtxOp::TmaStore(TmaStore {
                map,
                coordinates,
                source: binder.address(source)?,
            })
        }
        // The simulator's TMA stores write global memory when issued; their sources count
        // as read until a wait retires their group.
        ["cp", "async", "bulk", "commit_group"] if operands.is_empty() => PtxOp::BulkCommit,
        ["cp", "async", "bulk", "wait_group", ..] => PtxOp::BulkWait {
            keep: groups_left(operands)?,
        },
        ["wgmma", "fence", "sync", "aligned"] if operands.is_empty() => PtxOp::WgmmaFence,
        ["wgmma", "commit_group", "sync", "aligned"] if operands.is_empty() => PtxOp::WgmmaCommit,
        ["wgmma", "wait_group", "sync", "aligned"] => PtxOp::WgmmaWait {
            keep: groups_left(operands)?,
        },
        ["wgmma", "mma_async", "sync", "aligned", shape, "f32", x, y] if x == y => {
            PtxOp::Wgmma(wgmma(binder, shape, x, operands)?)
        }
        _ => return Ok(Selection::Other),
    }))
}

/// The `N` of a `wait_group N`: the groups left in flight, an immediate.
fn groups_left(operands: &[Operand]) -> Result<u32, String> {
    let [n] = operands else {
        return Err("takes the number of groups left in flight".into());
    };
    u32::try_from(Binder::immediate(n)?)
        .map_err(|_| "the number of groups left in flight is 0 or more".into())
}

/// The rank of a `.Nd` tensor copy.
fn rank_of(dims: &str) -> Result<usize, String> {
    match dims {
        "1d" => Ok(1),
        "2d" => Ok(2),
        "3d" => Ok(3),
        "4d" => Ok(4),
        "5d" => Ok(5),
        _ => Err(format!("a `.{dims}` copy (1d to 5d)")),
    }
}

/// The `[map, {x, ..}]` operand of a tensor copy of `rank`.
fn map_and_coordinates(
    binder: &mut Binder<'_>,
    operand: &Operand,
    rank: usize,
) -> Result<(crate::isa::Reg, Vec<crate::isa::Reg>), String> {
    let Operand::Address(parts) = operand else {
        return Err("takes its map and coordinates as `[map, {x, ..}]`".into());
    };
    let [map, coordinates] = parts.as_slice() else {
        return Err("takes its map and coordinates as `[map, {x, ..}]`".into());
    };
    let coordinates = binder.inputs(coordinates)?;
    if coordinates.len() != rank {
        return Err(format!(
            "a {rank}-d copy takes {rank} coordinates, not {}",
            coordinates.len()
        ));
    }
    Ok((binder.input(map)?, coordinates))
}

/// The `state` operand of an arrival: `_`, or a register that receives the phase.
fn state_register(
    binder: &mut Binder<'_>,
    state: &Operand,
) -> Result<Option<crate::isa::Reg>, String> {
    match state {
        Operand::Sink => Ok(None),
        other => binder.output(other).map(Some),
    }
}

fn wgmma(
    binder: &mut Binder<'_>,
    shape: &str,
    inputs: &str,
    operands: &[Operand],
) -> Result<Wgmma, String> {
    let (inputs, k) = match inputs {
        "bf16" => (WgmmaInputs::Bf16, 16),
        "f16" => (WgmmaInputs::F16, 16),
        "e4m3" => (WgmmaInputs::E4m3, 32),
        "e5m2" => (WgmmaInputs::E5m2, 32),
        other => {
            return Err(format!(
            "`{other}` inputs (the simulator runs bf16, f16, e4m3 and e5m2 with f32 accumulators)"
        ))
        }
    };
    let n = shape
        .strip_prefix("m64n")
        .and_then(|rest| rest.strip_suffix(&format!("k{k}")))
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| (8..=256).contains(n) && n % 8 == 0)
        .ok_or_else(|| {
            format!("the shape `{shape}`: m64nNk{k} with N a multiple of 8 up to 256")
        })?;
    let transposable = k == 16;
    let (d, a, b, scale_d, rest) = match operands {
        [d, a, b, scale_d, rest @ ..] => (d, a, b, scale_d, rest),
        _ => return Err("takes {d}, a-desc or {a}, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b]".into()),
    };
    // `{a0, a1, a2, a3}`: A from registers (the register-A form, which has no imm-trans-a).
    let registers_a = matches!(a, Operand::Vector(_));
    let immediates: Vec<i64> = rest
        .iter()
        .map(Binder::immediate)
        .collect::<Result<_, _>>()?;
    let (scale_a, scale_b, trans_a, trans_b) =
        match (immediates.as_slice(), transposable, registers_a) {
            ([sa, sb], _, _) => (*sa, *sb, 0, 0),
            ([sa, sb, ta, tb], true, false) => (*sa, *sb, *ta, *tb),
            ([sa, sb, tb], true, true) => (*sa, *sb, 0, *tb),
            _ => {
                return Err(format!(
                    "takes imm-scale-a, imm-scale-b{} after scale-d",
                    match (transposable, registers_a) {
                        (false, _) => " (FP8 has no transpose)",
                        (true, false) => "[, imm-trans-a, imm-trans-b]",
                        (true, true) => "[, imm-trans-b] (A from registers has no imm-trans-a)",
                    }
                ))
            }
        };
    let scale = |s: i64| match s {
        1 => Ok(false),
        -1 => Ok(true),
        other => Err(format!("an imm-scale of {other}: 1 or -1")),
    };
    let trans = |t: i64| match t {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(format!("an imm-trans of {other}: 0 or 1")),
    };
    let d = binder.outputs(d)?;
    if d.len() != n as usize / 2 {
        return Err(format!(
            "takes {} accumulators per thread for N = {n}, not {}",
            n / 2,
            d.len()
        ));
    }
    let a = if registers_a {
        let registers = binder.inputs(a)?;
        if registers.len() != 4 {
            return Err(format!(
                "takes A from four registers per thread (`{{a0, a1, a2, a3}}`), not {}",
                registers.len()
            ));
        }
        WgmmaA::Registers(registers)
    } else {
        WgmmaA::Descriptor(binder.input(a)?)
    };
    Ok(Wgmma {
        inputs,
        n,
        k,
        d,
        a,
        b: binder.input(b)?,
        scale_d: binder.input(scale_d)?,
        negate_a: scale(scale_a)?,
        negate_b: scale(scale_b)?,
        trans_a: trans(trans_a)?,
        trans_b: trans(trans_b)?,
    })
}
