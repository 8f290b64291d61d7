//! A thread's state as the interpreter (`thread.rs`) and the PTX instructions it runs
//! (`ptx/`) both see it: its frames, the sites of its operations, its status (ready,
//! waiting in a barrier or a warp operation, exited) and why it stopped with an error.

use cudajit_core::intrinsics::{ShuffleMode, VoteOp};
use cudajit_core::Scalar;

use super::memory::AccessFault;

/// A register number, relative to its function's frame.
pub(crate) type Reg = u32;

/// An activation of a function on a thread's stack.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub function: u32,
    /// The next operation to run.
    pub pc: u32,
    /// The frame's first register in the thread's registers.
    pub base: u32,
    /// The frame's first byte in the thread's local memory.
    pub local_base: u32,
    /// The caller's register that receives the result.
    pub result: Option<Reg>,
}

/// An operation of the program: function and operation index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    pub function: u32,
    pub pc: u32,
}

impl Site {
    /// A compact identity, for shared-memory access records.
    #[inline(always)]
    pub(crate) fn pack(self) -> u32 {
        (self.function << 20) | (self.pc & 0xf_ffff)
    }

    pub(crate) fn unpack(packed: u32) -> Site {
        Site {
            function: packed >> 20,
            pc: packed & 0xf_ffff,
        }
    }
}

/// A warp-level operation a thread waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WarpOp {
    Shuffle(ShuffleMode, Scalar),
    Vote(VoteOp),
    /// `activemask()`: the lanes at the same operation, so it is identified by its site.
    ActiveMask(Site),
    /// A warp-collective inline PTX instruction (`mma.sync`, `ldmatrix`) at this site,
    /// which reads and writes the lanes' registers itself (`WarpWait::dst` is the frame's
    /// first register).
    Collective(Site),
}

/// A thread waiting in a warp operation, with its operands.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WarpWait {
    pub op: WarpOp,
    pub mask: u32,
    /// The value shuffled, or the predicate voted.
    pub value: u64,
    /// The shuffle's lane operand.
    pub lane: u32,
    /// The register (in the thread's registers, absolute) that receives the result.
    pub dst: usize,
    pub site: Site,
}

/// Where a thread is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Status {
    /// Can run.
    Ready,
    /// Waiting at the `sync_threads()` at `site`.
    Barrier { site: Site },
    /// Waiting in a warp operation.
    Warp(WarpWait),
    /// Waiting at the `barrier.cluster.wait` at `site` until every thread of the cluster
    /// has arrived.
    ClusterWait { site: Site },
    /// Waiting in `mbarrier.try_wait` at `site` until the barrier at shared byte `barrier`
    /// completes the phase of parity `parity`; then `dst` (absolute) receives 1.
    Mbarrier {
        site: Site,
        barrier: u32,
        parity: u32,
        dst: usize,
    },
    /// Waiting at named barrier `id` (`bar.sync` at `site`) until it completes the phase
    /// its warp arrived in, `generation`.
    NamedBarrier {
        site: Site,
        id: u32,
        generation: u32,
    },
    /// Waiting at a group barrier, in a call of the program's extern function `function`
    /// at `site` (see [`super::ExternOutcome::GroupBarrier`]).
    Group { site: Site, function: u32 },
    /// Waiting at the `grid_sync()` at `site`, until every thread of the grid does.
    Grid { site: Site },
    /// Returned from the kernel.
    Exited,
}

/// A thread's stack and status; its registers and local memory live in the block's.
#[derive(Clone, Debug)]
pub(crate) struct ThreadState {
    pub frames: Vec<Frame>,
    pub status: Status,
}

/// Why a thread stopped with an error, and where.
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    pub kind: FaultKind,
    pub site: Site,
}

#[derive(Clone, Debug)]
pub(crate) enum FaultKind {
    OutOfBounds {
        index: u64,
        len: u64,
    },
    RangeOutOfBounds {
        start: u64,
        end: u64,
        len: u64,
    },
    Access(AccessFault),
    Misaligned {
        offset: u64,
        align: u64,
    },
    Assertion {
        message: u32,
    },
    FellOff,
    /// An extern function failed, or has no host implementation.
    Extern {
        detail: String,
    },
    /// The thread ran past the watchdog's limit without stopping.
    Hang {
        elapsed: std::time::Duration,
    },
    /// An inline PTX instruction used against the PTX ISA's rules.
    Instruction {
        detail: String,
    },
    /// An integer division (`remainder`: a remainder) by zero.
    DivisionByZero {
        remainder: bool,
    },
}
