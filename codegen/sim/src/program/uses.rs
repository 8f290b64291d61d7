//! What a compiled kernel uses among the instructions with bookkeeping of their own (PTX
//! instructions, clusters, warpgroup MMAs, the async proxy): a block of a kernel without them
//! skips that bookkeeping. Read once per launch by the scheduler.

use crate::isa::{CompiledFunction, Op};
use crate::ptx::PtxOp;

/// Whether the kernel runs any instruction of its own here (mbarriers, named barriers,
/// warpgroup instructions, TMA ...): a block of a kernel without one needs none of their
/// bookkeeping (the scheduler's scans for their waits, once per round of the block).
pub(crate) fn has_ptx_ops(functions: &[CompiledFunction]) -> bool {
    functions
        .iter()
        .any(|f| f.code.iter().any(|op| matches!(op, Op::Ptx(_))))
}

/// Whether the kernel reads shared memory through the asynchronous proxy (so stores must
/// be tracked).
pub(crate) fn reads_through_async_proxy(functions: &[CompiledFunction]) -> bool {
    functions.iter().any(|f| {
        f.code.iter().any(|op| {
            matches!(op, Op::Ptx(ptx) if matches!(**ptx, PtxOp::Wgmma(_) | PtxOp::TmaStore(_)))
        })
    })
}

/// Whether the kernel uses a cluster instruction, so that it runs with its blocks as
/// clusters (of one block each without a cluster launch, as on the GPU).
pub(crate) fn uses_clusters(functions: &[CompiledFunction]) -> bool {
    functions.iter().any(|f| {
        f.code.iter().any(|op| {
            matches!(op, Op::Ptx(ptx) if matches!(**ptx,
                PtxOp::ClusterArrive
                    | PtxOp::ClusterWait
                    | PtxOp::Mapa { .. }
                    | PtxOp::Dsmem(_)
                    | PtxOp::MbarrierArriveCluster { .. }
                    | PtxOp::TmaLoad(crate::ptx::tma::TmaLoad { multicast: Some(_), .. })))
        })
    })
}

/// Whether the kernel runs `wgmma.mma_async`, whose reads the swizzles of TMA's writes
/// are checked against.
pub(crate) fn runs_wgmma(functions: &[CompiledFunction]) -> bool {
    functions.iter().any(|f| {
        f.code
            .iter()
            .any(|op| matches!(op, Op::Ptx(ptx) if matches!(**ptx, PtxOp::Wgmma(_))))
    })
}
