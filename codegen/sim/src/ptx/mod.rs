//! Inline PTX on the simulator: the text of each `ptx!` template is read as PTX
//! ([`template`]), its instructions are selected into the interpreter's operations
//! ([`lower`]), and the ones with no plain counterpart run here with the PTX ISA's
//! semantics.
//!
//! The template with its operands bound is exactly what the GPU runs, so the simulator
//! keeps one source of truth: `cudajit::tensor`'s `#[device]` functions are simulated
//! from the same text the NVVM writer emits, never from a second description of them.
//!
//! - Scalar instructions (`mov`, `add`, `setp`, `selp`, `cvt.rn.bf16x2.f32`, `ex2.approx`,
//!   ..) become the interpreter's ordinary register operations.
//! - Warp-collective ones (`mma.sync` [`mma`], `ldmatrix`, `stmatrix`) stop the thread like a shuffle does;
//!   once all 32 lanes of the warp are at the instruction, [`warp`] runs it over their
//!   registers at once.
//! - `cp.async` and its groups ([`async_copy`]) copy into shared memory only at the wait
//!   that completes their group; until then their destination bytes are marked, and any
//!   access to them is reported.
//! - Hopper: transaction barriers ([`mbarrier`]), whose waits suspend the thread until the
//!   phase completes (a wait that never can is reported); warpgroup-collective `wgmma`
//!   ([`wgmma`]) and `setmaxnreg`, run once all 128 threads of the warpgroup are there;
//!   TMA loads and stores ([`tma`]) through the simulator's tensor maps.
//! - Clusters ([`cluster`]): `barrier.cluster`, `mapa`, distributed shared memory and
//!   arrivals on other blocks' mbarriers; TMA multicast ([`tma`]).
//! - Named barriers (`bar.sync`, `bar.arrive`): a warp arrives once all its lanes are at
//!   the instruction; the scheduler counts warps per barrier and releases the waiting ones
//!   when the count is reached.

pub(crate) mod cluster;
pub(crate) mod mma;
pub(crate) mod numeric;
mod run;
pub(crate) mod tma;
pub(crate) mod warp;
pub(crate) mod wgmma;

pub(crate) use run::{run_thread, Step};

use crate::thread_state::Reg;
use crate::thread_state::{Frame, Site};

/// Where in the kernel itself an instruction runs: the call of the outermost `#[device]`
/// function on the way to `innermost` (the instructions of `cudajit::tensor` live in
/// device functions of another file, whose lines mean little in the kernel's), or
/// `innermost` when the kernel runs it directly. Memory records of copies and loads name
/// this site.
pub(crate) fn kernel_site(frames: &[Frame], innermost: Site) -> Site {
    match frames {
        [entry, _, ..] => Site {
            function: entry.function,
            pc: entry.pc.saturating_sub(1),
        },
        _ => innermost,
    }
}

/// One lane of a warp-collective instruction (`mma`, `ldmatrix`, `wgmma`): its frame registers
/// (from the frame's first), its linear thread index in the block and the instruction's site
/// (packed), for memory records.
pub(crate) struct Lane<'a> {
    pub regs: &'a mut [u64],
    pub thread: u32,
    pub site: u32,
}

/// A PTX instruction the interpreter runs with semantics of its own (the others lower to
/// its ordinary operations). Registers are the function frame's.
#[derive(Clone, Debug)]
pub(crate) enum PtxOp {
    /// `mma.sync.aligned.m16n8kK.row.col`, every form of [`mma`]: warp-collective.
    Mma(mma::Mma),
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`: warp-collective.
    LdMatrix(LdMatrix),
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`: warp-collective.
    StMatrix(LdMatrix),
    /// `cp.async.{ca,cg}.shared.global [shared], [global], bytes[, source_bytes];`
    CpAsync {
        shared: Reg,
        global: Reg,
        bytes: u32,
        /// The zero-fill form: only this many bytes are read, the rest are zeros.
        source_bytes: Option<Reg>,
    },
    /// `cp.async.commit_group;`
    CpAsyncCommit,
    /// `cp.async.wait_group N;` (`keep: Some(N)`) or `cp.async.wait_all;` (`None`).
    CpAsyncWait { keep: Option<u32> },
    /// `mbarrier.init.shared::cta.b64 [barrier], count;`
    MbarrierInit { barrier: Reg, count: Reg },
    /// `mbarrier.arrive[.expect_tx].shared::cta.b64 state, [barrier][, bytes];`, or
    /// `mbarrier.expect_tx` alone (`arrive: false`).
    MbarrierArrive {
        state: Option<Reg>,
        barrier: Reg,
        bytes: Option<Reg>,
        arrive: bool,
    },
    /// `mbarrier.{try,test}_wait.parity.shared::cta.b64 done, [barrier], parity;`: a
    /// `try_wait` that is not yet satisfied suspends the thread until it is.
    MbarrierWait {
        done: Reg,
        barrier: Reg,
        parity: Reg,
        suspend: bool,
    },
    /// `wgmma.mma_async`: warpgroup-collective.
    Wgmma(wgmma::Wgmma),
    /// `wgmma.fence.sync.aligned`: warpgroup-collective.
    WgmmaFence,
    /// `wgmma.commit_group.sync.aligned`: warpgroup-collective. The simulator's wgmmas
    /// compute when issued; their operand tiles count as read until a wait retires their
    /// group ([`crate::memory::async_reads`]).
    WgmmaCommit,
    /// `wgmma.wait_group.sync.aligned N`: warpgroup-collective; all but the newest `keep`
    /// committed groups are retired.
    WgmmaWait { keep: u32 },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 N`: warpgroup-collective, no effect here.
    SetMaxNreg,
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`.
    TmaLoad(tma::TmaLoad),
    /// `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`.
    TmaStore(tma::TmaStore),
    /// `cp.async.bulk.commit_group`: the thread's TMA stores since the last one form a group.
    BulkCommit,
    /// `cp.async.bulk.wait_group[.read] N`: all but the newest `keep` of the thread's bulk
    /// groups are retired (their sources may be written again).
    BulkWait { keep: u32 },
    /// `fence.proxy.async[.space]`: this thread's stores so far reach the asynchronous
    /// proxy ([`proxy`]).
    ProxyFence,
    /// `bar.sync`, `bar.arrive`, `barrier.sync`, `barrier.arrive`: a warp's arrival at one
    /// of the block's 16 named barriers (the scheduler's `named_barriers`).
    NamedBarrier(NamedBarrier),
    /// `barrier.cluster.arrive[.release][.aligned]` ([`cluster`]).
    ClusterArrive,
    /// `barrier.cluster.wait[.acquire][.aligned]`: waits until every thread of the
    /// cluster has arrived.
    ClusterWait,
    /// `mapa.shared::cluster.u32 dst, address, rank`.
    Mapa { dst: Reg, address: Reg, rank: Reg },
    /// `ld.shared::cluster` / `st.shared::cluster`.
    Dsmem(cluster::DsmemAccess),
    /// `mbarrier.arrive[.release.cluster].shared::cluster.b64 _, [barrier]`: an arrival on
    /// a barrier anywhere in the cluster.
    MbarrierArriveCluster { barrier: Reg },
}

/// An arrival at named barrier `id` (0–15) of `count` threads (`None`: every thread of
/// the block); with `wait`, the warp waits until the barrier completes.
#[derive(Clone, Debug)]
pub(crate) struct NamedBarrier {
    pub id: Reg,
    pub count: Option<Reg>,
    pub wait: bool,
}

/// Which threads run an instruction together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Participants {
    /// Not collective.
    Thread,
    Warp,
    /// The 128 threads of warps `4w..4w+4`.
    Warpgroup,
}

impl PtxOp {
    /// Which threads run it together.
    pub(crate) fn participants(&self) -> Participants {
        match self {
            // A named barrier counts warps: the lanes of a warp arrive together.
            PtxOp::Mma(_) | PtxOp::LdMatrix(_) | PtxOp::StMatrix(_) | PtxOp::NamedBarrier(_) => {
                Participants::Warp
            }
            PtxOp::Wgmma(_)
            | PtxOp::WgmmaFence
            | PtxOp::WgmmaCommit
            | PtxOp::WgmmaWait { .. }
            | PtxOp::SetMaxNreg => Participants::Warpgroup,
            _ => Participants::Thread,
        }
    }

    /// Whether a group of threads runs it together.
    pub(crate) fn is_collective(&self) -> bool {
        self.participants() != Participants::Thread
    }

    /// The instruction's name, for messages.
    pub(crate) fn name(&self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(match self {
            PtxOp::Mma(mma) => return std::borrow::Cow::Owned(mma.name()),
            PtxOp::LdMatrix(_) => "ldmatrix.sync.aligned.m8n8",
            PtxOp::StMatrix(_) => "stmatrix.sync.aligned.m8n8",
            PtxOp::CpAsync { .. } => "cp.async",
            PtxOp::CpAsyncCommit => "cp.async.commit_group",
            PtxOp::CpAsyncWait { .. } => "cp.async.wait_group",
            PtxOp::MbarrierInit { .. } => "mbarrier.init",
            PtxOp::MbarrierArrive { arrive: false, .. } => "mbarrier.expect_tx",
            PtxOp::MbarrierArrive { .. } => "mbarrier.arrive",
            PtxOp::MbarrierWait { .. } => "mbarrier.try_wait",
            PtxOp::Wgmma(_) => "wgmma.mma_async",
            PtxOp::WgmmaFence => "wgmma.fence",
            PtxOp::WgmmaCommit => "wgmma.commit_group",
            PtxOp::WgmmaWait { .. } => "wgmma.wait_group",
            PtxOp::SetMaxNreg => "setmaxnreg",
            PtxOp::TmaLoad(_) | PtxOp::TmaStore(_) => "cp.async.bulk.tensor",
            PtxOp::BulkCommit => "cp.async.bulk.commit_group",
            PtxOp::BulkWait { .. } => "cp.async.bulk.wait_group",
            PtxOp::ProxyFence => "fence.proxy.async",
            PtxOp::NamedBarrier(NamedBarrier { wait: true, .. }) => "bar.sync",
            PtxOp::NamedBarrier(NamedBarrier { wait: false, .. }) => "bar.arrive",
            PtxOp::ClusterArrive => "barrier.cluster.arrive",
            PtxOp::ClusterWait => "barrier.cluster.wait",
            PtxOp::Mapa { .. } => "mapa.shared::cluster",
            PtxOp::Dsmem(access) if access.store => "st.shared::cluster",
            PtxOp::Dsmem(_) => "ld.shared::cluster",
            PtxOp::MbarrierArriveCluster { .. } => "mbarrier.arrive.shared::cluster",
        })
    }
}

/// `matrices` 8×8 matrices of 16-bit elements at the rows whose shared addresses lanes
/// `0..8 * matrices` give, and `registers[..matrices]` of every lane: loaded into them
/// (`ldmatrix`) or stored from them (`stmatrix`).
#[derive(Clone, Debug)]
pub(crate) struct LdMatrix {
    pub matrices: u32,
    pub trans: bool,
    pub registers: [Reg; 4],
    pub address: Reg,
}
