//! The block's named barriers selected: `bar{.cta}.sync a{, b}`, `bar{.cta}.arrive a, b`
//! and `barrier{.cta}.{sync,arrive}{.aligned}`, with the barrier and the thread count as
//! immediates or registers (checked when they run: the scheduler's `named_barriers`).

use super::super::template::{Instruction, Operand};
use super::Binder;
use crate::ptx::{NamedBarrier, PtxOp};

/// What [`select`] made of an instruction.
pub(super) enum Selection {
    Op(PtxOp),
    /// `bar.sync 0;`: exactly `sync_threads()` (CUDA's `__syncthreads()` is this
    /// instruction), so it meets the kernel language's barrier.
    SyncThreads,
    /// Not a named barrier.
    Other,
}

pub(super) fn select(
    binder: &mut Binder<'_>,
    instruction: &Instruction,
) -> Result<Selection, String> {
    let parts: Vec<&str> = instruction
        .opcode
        .split('.')
        .filter(|p| *p != "cta")
        .collect();
    // `bar.sync` and `bar.arrive` are `barrier.sync.aligned` and `barrier.arrive.aligned`;
    // the simulator requires every lane of a warp at the same instruction in both forms.
    let wait = match parts.as_slice() {
        ["bar", "sync"] | ["barrier", "sync"] | ["barrier", "sync", "aligned"] => true,
        ["bar", "arrive"] | ["barrier", "arrive"] | ["barrier", "arrive", "aligned"] => false,
        ["bar" | "barrier", "red", ..] => {
            return Err("`bar.red` (a barrier with a reduction) is not simulated: the simulator runs `bar.sync` and `bar.arrive` (and `barrier.sync`, `barrier.arrive`); reduce with warp votes and shared memory around a `bar.sync`".into())
        }
        _ => return Ok(Selection::Other),
    };
    let (id, count) = match instruction.operands.as_slice() {
        [id] => (id, None),
        [id, count] => (id, Some(count)),
        _ => {
            return Err("takes the barrier (0 to 15) and, optionally, the number of threads".into())
        }
    };
    if count.is_none() {
        if !wait {
            return Err("takes the barrier and the number of threads that arrive at it (`bar.arrive a, b;`: the count is required)".into());
        }
        if matches!(id, Operand::Immediate(0)) {
            return Ok(Selection::SyncThreads);
        }
    }
    Ok(Selection::Op(PtxOp::NamedBarrier(NamedBarrier {
        id: binder.input(id)?,
        count: count.map(|c| binder.input(c)).transpose()?,
        wait,
    })))
}
