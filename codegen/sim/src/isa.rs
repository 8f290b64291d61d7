//! The simulator's instruction set: what a compiled function is made of. Register
//! operations over a frame of 64-bit registers, jumps, and the operations a thread stops
//! at (barriers, shuffles, votes); the compiler (`program.rs` and its rooms) emits them,
//! the interpreter (`thread.rs`) runs them.

use cudajit_core::ast::{Axis, FormatPiece};
use cudajit_core::intrinsics::{AtomicOp, ShuffleMode, VoteOp};
use cudajit_core::ir::BuiltinValue;
use cudajit_core::{Scalar, Span};

use crate::value::{BinaryFn, TernaryFn, UnaryFn};

pub(crate) use crate::thread_state::Reg;

/// The built-in values of a thread, in the order of [`Builtin::index`].
pub(crate) const BUILTINS: usize = 27;

/// A value the hardware gives each thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    Value(BuiltinValue),
    LaneId,
    /// A cluster special register (PTX's `%cluster_ctarank` ..).
    Cluster(ClusterRegister),
}

/// The special registers of a thread-block cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClusterRegister {
    /// `%cluster_ctarank`: the block's rank in its cluster.
    CtaRank,
    /// `%cluster_nctarank`: blocks per cluster.
    NCtaRank,
    /// `%clusterid.{x,y,z}`: the cluster's index in the grid.
    ClusterId(Axis),
    /// `%nclusterid.{x,y,z}`: clusters in the grid.
    NClusterId(Axis),
    /// `%cluster_ctaid.{x,y,z}`: the block's index in its cluster.
    CtaId(Axis),
    /// `%cluster_nctaid.{x,y,z}`: the cluster's dimensions.
    NCtaId(Axis),
}

impl Builtin {
    /// Its index among the thread's built-in values.
    pub(crate) fn index(self) -> usize {
        let axis = |a: Axis| match a {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        };
        match self {
            Builtin::Value(BuiltinValue::ThreadIdx(a)) => axis(a),
            Builtin::Value(BuiltinValue::BlockIdx(a)) => 3 + axis(a),
            Builtin::Value(BuiltinValue::BlockDim(a)) => 6 + axis(a),
            Builtin::Value(BuiltinValue::GridDim(a)) => 9 + axis(a),
            Builtin::LaneId => 12,
            Builtin::Cluster(register) => match register {
                ClusterRegister::CtaRank => 13,
                ClusterRegister::NCtaRank => 14,
                ClusterRegister::ClusterId(a) => 15 + axis(a),
                ClusterRegister::NClusterId(a) => 18 + axis(a),
                ClusterRegister::CtaId(a) => 21 + axis(a),
                ClusterRegister::NCtaId(a) => 24 + axis(a),
            },
        }
    }

    /// The built-in a PTX special register (`%name`) reads.
    pub(crate) fn special(name: &str) -> Option<Builtin> {
        let (register, axis) = match name.split_once('.') {
            Some((register, axis)) => (register, Some(axis)),
            None => (name, None),
        };
        let axis = match axis {
            None => None,
            Some("x") => Some(Axis::X),
            Some("y") => Some(Axis::Y),
            Some("z") => Some(Axis::Z),
            Some(_) => return None,
        };
        let cluster = |register| Some(Builtin::Cluster(register));
        match (register, axis) {
            ("laneid", None) => Some(Builtin::LaneId),
            ("cluster_ctarank", None) => cluster(ClusterRegister::CtaRank),
            ("cluster_nctarank", None) => cluster(ClusterRegister::NCtaRank),
            ("clusterid", Some(a)) => cluster(ClusterRegister::ClusterId(a)),
            ("nclusterid", Some(a)) => cluster(ClusterRegister::NClusterId(a)),
            ("cluster_ctaid", Some(a)) => cluster(ClusterRegister::CtaId(a)),
            ("cluster_nctaid", Some(a)) => cluster(ClusterRegister::NCtaId(a)),
            _ => None,
        }
    }
}

/// One operation of a compiled function.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Unary {
        f: UnaryFn,
        dst: Reg,
        a: Reg,
    },
    Binary {
        f: BinaryFn,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Ternary {
        f: TernaryFn,
        dst: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    Copy {
        dst: Reg,
        src: Reg,
    },
    Jump {
        to: u32,
    },
    JumpIf {
        cond: Reg,
        to: u32,
    },
    JumpIfNot {
        cond: Reg,
        to: u32,
    },
    /// `dst` = the pointer to element `index` of the slice in `base`, `base + 1`, after
    /// checking that elements `index .. index + extent` are inside it.
    SliceElement {
        dst: Reg,
        base: Reg,
        index: Reg,
        size: u32,
        extent: u32,
    },
    /// `dst`, `dst + 1` = the elements `start..end` of the slice in `base`, `base + 1`
    /// (`end` absent: to its end), after checking `start <= end <= len`.
    SubSlice {
        dst: Reg,
        base: Reg,
        start: Reg,
        end: Option<Reg>,
        size: u32,
    },
    /// `dst` = the pointer `index` elements of `size` bytes after the pointer `base`.
    PointerElement {
        dst: Reg,
        base: Reg,
        index: Reg,
        size: u32,
    },
    /// `dst` = the pointer to element `index` (below `len`, else a fault) of `size` bytes
    /// of the array at the pointer `base` (an array field of a struct).
    MemberElement {
        dst: Reg,
        base: Reg,
        index: Reg,
        size: u32,
        len: u32,
    },
    /// `dst` = the pointer to element `index` of the frame's local array at `offset`.
    ArrayElement {
        dst: Reg,
        offset: u32,
        len: u32,
        index: Reg,
        size: u32,
    },
    /// `dst` = the `size`-byte value at `pointer`, masked with `mask` (1 for `bool`).
    Load {
        dst: Reg,
        pointer: Reg,
        size: u32,
        mask: u64,
    },
    Store {
        pointer: Reg,
        src: Reg,
        size: u32,
    },
    /// Copies `size` bytes from the pointer `src` to the pointer `dst`: a struct value
    /// stored (struct values are pointers to their bytes).
    CopyBytes {
        dst: Reg,
        src: Reg,
        size: u32,
    },
    /// `dst`, `dst + 1` = the launch's dynamic shared memory as a slice of `size`-byte
    /// elements.
    DynamicShared {
        dst: Reg,
        offset: u32,
        size: u32,
    },
    Call {
        function: u32,
        args: Box<[Reg]>,
        result: Option<Reg>,
    },
    Return {
        value: Option<Reg>,
    },
    VectorLoad {
        pointer: Reg,
        results: Box<[Reg]>,
        size: u32,
    },
    VectorStore {
        pointer: Reg,
        values: Box<[Reg]>,
        size: u32,
    },
    Print {
        format: u32,
        args: Box<[Reg]>,
    },
    Trap {
        message: u32,
    },
    Atomic {
        op: AtomicOp,
        kind: Scalar,
        dst: Reg,
        pointer: Reg,
        a: Reg,
        b: Reg,
    },
    Barrier,
    /// `grid_sync()`: the thread waits until every thread of the grid does (the
    /// cooperative scheduler's grid barrier).
    GridBarrier,
    /// A host `SeqCst` fence: what fences and ordered atomics compile to (see
    /// `Intrinsic::OrderedAtomic` below).
    Fence,
    /// `dst` = the `size`-byte value at `pointer`, read as an atomic (a shared-memory
    /// access that neither races nor counts), masked with `mask`.
    AtomicLoad {
        dst: Reg,
        pointer: Reg,
        size: u32,
        mask: u64,
    },
    /// The `size`-byte `src` stored at `pointer` as an atomic.
    AtomicStore {
        pointer: Reg,
        src: Reg,
        size: u32,
    },
    /// `dst` = the host's monotonic clock in nanoseconds (`clock64()`, `globaltimer()`).
    Timer {
        dst: Reg,
    },
    /// Sleeps the host thread for `ns` nanoseconds (at most 1 ms).
    NanoSleep {
        ns: Reg,
    },
    Shuffle {
        mode: ShuffleMode,
        kind: Scalar,
        dst: Reg,
        mask: Reg,
        value: Reg,
        lane: Reg,
    },
    Vote {
        op: VoteOp,
        dst: Reg,
        mask: Reg,
        predicate: Reg,
    },
    ActiveMask {
        dst: Reg,
    },
    /// A call of the program's extern function `function` (see [`super::SimExterns`]),
    /// its result (of type `.1`) to `result`.
    CallExtern {
        function: u32,
        args: Box<[Reg]>,
        result: Option<(Reg, Scalar)>,
    },
    /// An inline PTX instruction with semantics of its own (`mma.sync`, `ldmatrix`,
    /// `cp.async`, ..; see [`super::ptx`]).
    Ptx(Box<crate::ptx::PtxOp>),
    /// The end of a function with a result, reached without `return`.
    FellOff,
    /// Stops the thread if `divisor` is zero: an integer `/` or `%` (or `div_euclid`,
    /// `rem_euclid`, `div_ceil`) by zero, where Rust panics (the GPU gives an unspecified
    /// value). `remainder` names the operation in the report.
    CheckDivisor {
        divisor: Reg,
        remainder: bool,
    },
}

/// An `#[extern_device]` function the program calls.
#[derive(Clone, Debug)]
pub(crate) struct ExternInfo {
    /// The Rust name, for messages.
    pub name: String,
    /// The link name the host resolves.
    pub symbol: String,
}

/// A function ready for the interpreter.
#[derive(Debug)]
pub(crate) struct CompiledFunction {
    pub name: String,
    /// The file its spans are in (the kernel's when the IR does not say).
    pub file: String,
    pub code: Vec<Op>,
    /// The span of each operation, for messages.
    pub spans: Vec<Span>,
    /// Registers of one frame.
    pub registers: u32,
    /// The registers at entry: constants in place, zeros elsewhere.
    pub init: Vec<u64>,
    /// Registers that receive a built-in value at entry.
    pub builtins: Vec<(Reg, usize)>,
    /// Bytes of local memory of one frame (local arrays).
    pub local_bytes: u32,
    /// Registers and local bytes of this function and its deepest chain of callees.
    pub stack_registers: u32,
    pub stack_local_bytes: u32,
}

/// A `print!`'s format, with the type of each argument.
#[derive(Clone, Debug)]
pub(crate) struct PrintFormat {
    pub pieces: Vec<FormatPiece>,
    pub types: Vec<Scalar>,
}

/// Where a shared variable lives in the block's shared memory.
#[derive(Clone, Debug)]
pub(crate) struct SharedLayout {
    pub name: String,
    pub offset: u32,
    pub elem: Scalar,
    /// `None` for the dynamic shared memory.
    pub len: Option<u32>,
}
