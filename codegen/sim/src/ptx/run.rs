//! The [`PtxOp`]s one thread runs alone: `cp.async` and its groups.

use super::super::memory::{
    AccessFault, MemoryView, LOCAL_REGION, OFFSET_BITS, OFFSET_MASK, SHARED_REGION,
};
use super::super::thread::FaultKind;
use super::async_copy::PendingCopy;
use super::PtxOp;

/// Runs `op` for the thread whose frame registers are `regs`; `site` is the operation's
/// (packed), for race records.
pub(crate) fn run_thread(
    op: &PtxOp,
    regs: &mut [u64],
    memory: &mut MemoryView<'_, '_>,
    site: u32,
) -> Result<(), FaultKind> {
    let thread = memory.thread;
    match op {
        PtxOp::CpAsync {
            shared,
            global,
            bytes,
            source_bytes,
        } => {
            let offset = regs[*shared as usize] & u64::from(u32::MAX);
            let source = regs[*global as usize];
            let bytes = *bytes;
            let read = match source_bytes {
                Some(reg) => {
                    let read = regs[*reg as usize] & u64::from(u32::MAX);
                    if read > u64::from(bytes) {
                        return Err(FaultKind::Instruction {
                            detail: format!(
                                "`cp.async` of {bytes} bytes with a source size of {read}: the source size is 0 to {bytes}"
                            ),
                        });
                    }
                    read as u32
                }
                None => bytes,
            };
            let region = source >> OFFSET_BITS;
            if region == SHARED_REGION || region == LOCAL_REGION {
                return Err(FaultKind::Instruction {
                    detail: format!(
                        "`cp.async` reads global memory, but its source {source:#x} is a shared or local address (give `global_address(&x[i])`)"
                    ),
                });
            }
            let align = u64::from(bytes);
            if !(source & OFFSET_MASK).is_multiple_of(align) {
                return Err(FaultKind::Access(AccessFault::Misaligned {
                    offset: source & OFFSET_MASK,
                    align: bytes,
                }));
            }
            memory
                .shared
                .check_async_destination(offset, bytes)
                .map_err(FaultKind::Access)?;
            let mut data = [0u8; 16];
            if read == bytes {
                let chunk = bytes.min(8);
                for at in (0..bytes).step_by(chunk as usize) {
                    let value = memory
                        .load(source + u64::from(at), chunk, site)
                        .map_err(FaultKind::Access)?;
                    data[at as usize..(at + chunk) as usize]
                        .copy_from_slice(&value.to_le_bytes()[..chunk as usize]);
                }
            } else {
                // The zero-fill form reads its `read` bytes one by one (any count is allowed).
                for at in 0..read {
                    let value = memory
                        .load(source + u64::from(at), 1, site)
                        .map_err(FaultKind::Access)?;
                    data[at as usize] = value as u8;
                }
            }
            memory
                .shared
                .issue_async_copy(
                    thread,
                    PendingCopy {
                        offset: offset as u32,
                        bytes,
                        data,
                        site,
                    },
                )
                .map_err(FaultKind::Access)?;
        }
        PtxOp::CpAsyncCommit => memory.shared.copies.commit(thread),
        PtxOp::CpAsyncWait { keep } => memory
            .shared
            .land_async_copies(thread, *keep)
            .map_err(FaultKind::Access)?,
        PtxOp::Mma(_) | PtxOp::LdMatrix(_) => {
            unreachable!("warp-collective instructions run in the scheduler")
        }
    }
    Ok(())
}
