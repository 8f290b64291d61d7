//! Typed tensor-core operations: what a call of `wgmma::<bf16, false, false>(..)` is, checked
//! before anything reaches ptxas or the simulator, and the one table that spells each
//! operation in PTX.
//!
//! A kernel names an operation like an intrinsic ([`TensorOpName`], recognised by the macro);
//! lowering resolves its type and const arguments for the specialisation and the shapes of
//! its operands, and [`TensorOp::of_call`] either accepts them — the shape of a `wgmma`
//! follows from its accumulator array: `N = 2 × len` — or says what is wrong, at the call's
//! span. The IR keeps the operation beside its PTX text ([`TensorOp::template`]): the NVVM
//! writer emits the text, the simulator runs the operation itself without reading text.
//! `ptx!` stays the escape hatch for the rest.

use serde::{Deserialize, Serialize};

use crate::types::Scalar;

/// The element type of a `wgmma`'s A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WgmmaInput {
    Bf16,
    F16,
    /// FP8 with 4 exponent and 3 mantissa bits (`cudajit::tensor::wgmma::E4m3`).
    E4m3,
    /// FP8 with 5 exponent and 2 mantissa bits (`cudajit::tensor::wgmma::E5m2`).
    E5m2,
}

impl WgmmaInput {
    /// The input of a type argument: `bf16`, `f16`, or the FP8 marker types by name.
    pub fn of_type(scalar: Option<Scalar>, name: &str) -> Option<WgmmaInput> {
        match (scalar, name) {
            (Some(Scalar::BF16), _) => Some(WgmmaInput::Bf16),
            (Some(Scalar::F16), _) => Some(WgmmaInput::F16),
            (None, "E4m3") => Some(WgmmaInput::E4m3),
            (None, "E5m2") => Some(WgmmaInput::E5m2),
            _ => None,
        }
    }

    /// The PTX type (`bf16`, `e4m3`).
    pub fn ptx(self) -> &'static str {
        match self {
            WgmmaInput::Bf16 => "bf16",
            WgmmaInput::F16 => "f16",
            WgmmaInput::E4m3 => "e4m3",
            WgmmaInput::E5m2 => "e5m2",
        }
    }

    /// The K of one instruction: 32 bytes of each row of A and B.
    pub fn k(self) -> u32 {
        match self {
            WgmmaInput::Bf16 | WgmmaInput::F16 => 16,
            WgmmaInput::E4m3 | WgmmaInput::E5m2 => 32,
        }
    }

    fn is_fp8(self) -> bool {
        matches!(self, WgmmaInput::E4m3 | WgmmaInput::E5m2)
    }
}

/// A tensor-core operation as a kernel names it: the macro recognises these names like the
/// intrinsics', with their generic arguments (resolved at lowering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TensorOpName {
    /// `wgmma_fence()`.
    WgmmaFence,
    /// `wgmma_commit_group()`.
    WgmmaCommitGroup,
    /// `wgmma_wait_group::<N>()`.
    WgmmaWaitGroup,
    /// `wgmma::<T, TRANS_A, TRANS_B>(acc, a_descriptor, b_descriptor, accumulate)`.
    Wgmma,
    /// `wgmma_register_a::<T, TRANS_B>(acc, a_fragment, b_descriptor, accumulate)`.
    WgmmaRegisterA,
    /// `setmaxnreg_inc::<N>()`: the warpgroup's threads grow to N registers each.
    SetMaxNregInc,
    /// `setmaxnreg_dec::<N>()`: the warpgroup's threads give registers back, down to N.
    SetMaxNregDec,
    /// `named_barrier_sync::<THREADS>(id)`: the warp arrives at named barrier `id` and
    /// waits until `THREADS` threads have.
    NamedBarrierSync,
    /// `named_barrier_arrive::<THREADS>(id)`: the warp arrives without waiting.
    NamedBarrierArrive,
    /// `mbarrier_init(barrier, count)`.
    MbarrierInit,
    /// `mbarrier_arrive(barrier)`.
    MbarrierArrive,
    /// `mbarrier_arrive_expect_tx(barrier, bytes)`.
    MbarrierArriveExpectTx,
    /// `fence_barrier_init()`.
    FenceBarrierInit,
    /// `fence_proxy_async_shared()`.
    FenceProxyAsync,
    /// `tma_store_commit()`.
    TmaStoreCommit,
    /// `tma_store_wait()`.
    TmaStoreWait,
    /// `cp_async_commit()`.
    CpAsyncCommit,
    /// `cp_async_wait_all()`.
    CpAsyncWaitAll,
}

impl TensorOpName {
    const ALL: [(TensorOpName, &'static str); 18] = [
        (TensorOpName::WgmmaFence, "wgmma_fence"),
        (TensorOpName::WgmmaCommitGroup, "wgmma_commit_group"),
        (TensorOpName::WgmmaWaitGroup, "wgmma_wait_group"),
        (TensorOpName::Wgmma, "wgmma"),
        (TensorOpName::WgmmaRegisterA, "wgmma_register_a"),
        (TensorOpName::SetMaxNregInc, "setmaxnreg_inc"),
        (TensorOpName::SetMaxNregDec, "setmaxnreg_dec"),
        (TensorOpName::NamedBarrierSync, "named_barrier_sync"),
        (TensorOpName::NamedBarrierArrive, "named_barrier_arrive"),
        (TensorOpName::MbarrierInit, "mbarrier_init"),
        (TensorOpName::MbarrierArrive, "mbarrier_arrive"),
        (
            TensorOpName::MbarrierArriveExpectTx,
            "mbarrier_arrive_expect_tx",
        ),
        (TensorOpName::FenceBarrierInit, "fence_barrier_init"),
        (TensorOpName::FenceProxyAsync, "fence_proxy_async_shared"),
        (TensorOpName::TmaStoreCommit, "tma_store_commit"),
        (TensorOpName::TmaStoreWait, "tma_store_wait"),
        (TensorOpName::CpAsyncCommit, "cp_async_commit"),
        (TensorOpName::CpAsyncWaitAll, "cp_async_wait_all"),
    ];

    /// The operation a function name stands for.
    pub fn from_name(name: &str) -> Option<TensorOpName> {
        Self::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(op, _)| *op)
    }

    /// The Rust name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(op, _)| *op == self)
            .map_or("?", |(_, n)| n)
    }

    /// The generic parameters, as the function declares them (a type first, if any).
    pub fn generics(self) -> &'static str {
        match self {
            TensorOpName::WgmmaFence
            | TensorOpName::WgmmaCommitGroup
            | TensorOpName::MbarrierInit
            | TensorOpName::MbarrierArrive
            | TensorOpName::MbarrierArriveExpectTx
            | TensorOpName::FenceBarrierInit
            | TensorOpName::FenceProxyAsync
            | TensorOpName::TmaStoreCommit
            | TensorOpName::TmaStoreWait
            | TensorOpName::CpAsyncCommit
            | TensorOpName::CpAsyncWaitAll => "",
            TensorOpName::WgmmaWaitGroup
            | TensorOpName::SetMaxNregInc
            | TensorOpName::SetMaxNregDec => "<const N: u32>",
            TensorOpName::NamedBarrierSync | TensorOpName::NamedBarrierArrive => {
                "<const THREADS: u32>"
            }
            TensorOpName::Wgmma => "<T, const TRANS_A: bool, const TRANS_B: bool>",
            TensorOpName::WgmmaRegisterA => "<T, const TRANS_B: bool>",
        }
    }

    /// Whether the first generic argument is the element type.
    pub fn takes_type(self) -> bool {
        matches!(self, TensorOpName::Wgmma | TensorOpName::WgmmaRegisterA)
    }

    /// The number of const generic arguments after the type.
    pub fn consts(self) -> usize {
        match self {
            TensorOpName::WgmmaWaitGroup
            | TensorOpName::WgmmaRegisterA
            | TensorOpName::SetMaxNregInc
            | TensorOpName::SetMaxNregDec
            | TensorOpName::NamedBarrierSync
            | TensorOpName::NamedBarrierArrive => 1,
            TensorOpName::Wgmma => 2,
            _ => 0,
        }
    }

    /// The value parameters, as the function declares them.
    pub fn parameters(self) -> &'static str {
        match self {
            TensorOpName::NamedBarrierSync | TensorOpName::NamedBarrierArrive => "(id: u32)",
            TensorOpName::MbarrierInit => "(barrier: u32, count: u32)",
            TensorOpName::MbarrierArrive => "(barrier: u32)",
            TensorOpName::MbarrierArriveExpectTx => "(barrier: u32, bytes: u32)",
            TensorOpName::Wgmma => "(acc: &mut [f32; N / 2], a: u64, b: u64, accumulate: bool)",
            TensorOpName::WgmmaRegisterA => {
                "(acc: &mut [f32; N / 2], a: [u32; 4], b: u64, accumulate: bool)"
            }
            _ => "()",
        }
    }

    /// The scalar type each value argument has (`None`: a register array), which inference
    /// gives literals (`wgmma::<..>(&mut acc, 0, 0, false)`).
    pub fn argument_scalars(self) -> &'static [Option<Scalar>] {
        match self {
            TensorOpName::Wgmma => &[
                None,
                Some(Scalar::U64),
                Some(Scalar::U64),
                Some(Scalar::Bool),
            ],
            TensorOpName::WgmmaRegisterA => &[None, None, Some(Scalar::U64), Some(Scalar::Bool)],
            TensorOpName::NamedBarrierSync
            | TensorOpName::NamedBarrierArrive
            | TensorOpName::MbarrierArrive => &[Some(Scalar::U32)],
            TensorOpName::MbarrierInit | TensorOpName::MbarrierArriveExpectTx => {
                &[Some(Scalar::U32), Some(Scalar::U32)]
            }
            _ => &[],
        }
    }

    /// The number of value arguments.
    pub fn arity(self) -> usize {
        match self {
            TensorOpName::Wgmma | TensorOpName::WgmmaRegisterA => 4,
            TensorOpName::NamedBarrierSync
            | TensorOpName::NamedBarrierArrive
            | TensorOpName::MbarrierArrive => 1,
            TensorOpName::MbarrierInit | TensorOpName::MbarrierArriveExpectTx => 2,
            _ => 0,
        }
    }
}

/// The shape of an operand a call gives, for [`TensorOp::of_call`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandShape {
    Scalar(Scalar),
    /// A local array or an array parameter, `read_write` when passed as `&mut`.
    Array {
        element: Scalar,
        len: u32,
        read_write: bool,
    },
}

impl std::fmt::Display for OperandShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OperandShape::Scalar(s) => write!(f, "a `{s}`"),
            OperandShape::Array {
                element,
                len,
                read_write: true,
            } => write!(f, "`&mut [{element}; {len}]`"),
            OperandShape::Array { element, len, .. } => write!(f, "`[{element}; {len}]`"),
        }
    }
}

/// One `wgmma.mma_async`: `D (+)= A · B` for a warpgroup, A 64 × K, B K × N, D 64 × N f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WgmmaForm {
    pub input: WgmmaInput,
    pub n: u32,
    /// A from four registers per thread rather than a shared-memory descriptor.
    pub register_a: bool,
    /// MN-major (transposed) A and B.
    pub trans_a: bool,
    pub trans_b: bool,
}

/// A tensor-core operation, its shape and types resolved and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorOp {
    WgmmaFence,
    WgmmaCommitGroup,
    /// All but the newest `keep` committed groups complete.
    WgmmaWaitGroup {
        keep: u32,
    },
    Wgmma(WgmmaForm),
    /// `setmaxnreg.{inc,dec}`: the warpgroup's register count per thread becomes `count`.
    SetMaxNreg {
        increase: bool,
        count: u32,
    },
    /// `bar.sync` (`wait`) or `bar.arrive` of `threads` threads on the named barrier the
    /// operand gives.
    NamedBarrier {
        wait: bool,
        threads: u32,
    },
    /// `mbarrier.init` of the barrier at the first operand for the second's arrivals.
    MbarrierInit,
    /// `mbarrier.arrive`, with `expect_tx` announcing the second operand's bytes.
    MbarrierArrive {
        expect_tx: bool,
    },
    /// `fence.mbarrier_init.release.cluster`.
    FenceBarrierInit,
    /// `fence.proxy.async.shared::cta`: this thread's stores reach the asynchronous proxy.
    FenceProxyAsync,
    /// `cp.async.bulk.commit_group`.
    BulkCommit,
    /// `cp.async.bulk.wait_group.read 0`: the thread's TMA stores have read their sources.
    BulkWaitRead,
    /// `cp.async.commit_group`.
    CpAsyncCommit,
    /// `cp.async.wait_all`.
    CpAsyncWaitAll,
}

/// The most groups `wgmma_wait_group` may leave in flight.
const MAX_WGMMA_GROUPS: u64 = 7;

impl TensorOp {
    /// The operation of a call of `name` whose element type is `input` (for the ones that
    /// take one), whose const arguments are `consts` (bools as 0 or 1) and whose operands
    /// are `operands`; or what is wrong with it.
    pub fn of_call(
        name: TensorOpName,
        input: Option<WgmmaInput>,
        consts: &[u64],
        operands: &[OperandShape],
    ) -> Result<TensorOp, String> {
        let callee = name.name();
        if operands.len() != name.arity() {
            return Err(format!(
                "`{callee}{}` takes {} argument(s), not {}",
                name.parameters(),
                name.arity(),
                operands.len()
            ));
        }
        match name {
            TensorOpName::WgmmaFence => Ok(TensorOp::WgmmaFence),
            TensorOpName::WgmmaCommitGroup => Ok(TensorOp::WgmmaCommitGroup),
            TensorOpName::WgmmaWaitGroup => {
                let keep = consts.first().copied().unwrap_or(0);
                if keep > MAX_WGMMA_GROUPS {
                    return Err(format!(
                        "`wgmma_wait_group::<{keep}>()` leaves {keep} groups in flight: 0 to {MAX_WGMMA_GROUPS}"
                    ));
                }
                Ok(TensorOp::WgmmaWaitGroup { keep: keep as u32 })
            }
            TensorOpName::MbarrierInit
            | TensorOpName::MbarrierArrive
            | TensorOpName::MbarrierArriveExpectTx => {
                let names = ["the barrier's `.shared` address", "the second argument"];
                for (index, (operand, want)) in
                    operands.iter().zip(name.argument_scalars()).enumerate()
                {
                    if Some(*operand) != want.map(OperandShape::Scalar) {
                        return Err(format!(
                            "`{callee}{}`: {} is a `u32`, not {operand}",
                            name.parameters(),
                            names[index.min(1)]
                        ));
                    }
                }
                Ok(match name {
                    TensorOpName::MbarrierInit => TensorOp::MbarrierInit,
                    TensorOpName::MbarrierArrive => TensorOp::MbarrierArrive { expect_tx: false },
                    _ => TensorOp::MbarrierArrive { expect_tx: true },
                })
            }
            TensorOpName::FenceBarrierInit => Ok(TensorOp::FenceBarrierInit),
            TensorOpName::FenceProxyAsync => Ok(TensorOp::FenceProxyAsync),
            TensorOpName::TmaStoreCommit => Ok(TensorOp::BulkCommit),
            TensorOpName::TmaStoreWait => Ok(TensorOp::BulkWaitRead),
            TensorOpName::CpAsyncCommit => Ok(TensorOp::CpAsyncCommit),
            TensorOpName::CpAsyncWaitAll => Ok(TensorOp::CpAsyncWaitAll),
            TensorOpName::SetMaxNregInc | TensorOpName::SetMaxNregDec => {
                let count = consts.first().copied().unwrap_or(0);
                if count % 8 != 0 || !(24..=256).contains(&count) {
                    return Err(format!(
                        "`{callee}::<{count}>()`: a register count per thread is a multiple of 8 from 24 to 256"
                    ));
                }
                Ok(TensorOp::SetMaxNreg {
                    increase: name == TensorOpName::SetMaxNregInc,
                    count: count as u32,
                })
            }
            TensorOpName::NamedBarrierSync | TensorOpName::NamedBarrierArrive => {
                let threads = consts.first().copied().unwrap_or(0);
                if threads % 32 != 0 || !(32..=1024).contains(&threads) {
                    return Err(format!(
                        "`{callee}::<{threads}>`: a named barrier counts whole warps, a multiple of 32 threads from 32 to 1024"
                    ));
                }
                if operands[0] != OperandShape::Scalar(Scalar::U32) {
                    return Err(format!(
                        "`{callee}`'s argument is the barrier's number (1 to 15; 0 is `sync_threads()`'s), a `u32`, not {}",
                        operands[0]
                    ));
                }
                Ok(TensorOp::NamedBarrier {
                    wait: name == TensorOpName::NamedBarrierSync,
                    threads: threads as u32,
                })
            }
            TensorOpName::Wgmma | TensorOpName::WgmmaRegisterA => {
                let input = input.ok_or_else(|| {
                    format!("`{callee}`'s element type is `bf16`, `f16`, `E4m3` or `E5m2`")
                })?;
                let register_a = name == TensorOpName::WgmmaRegisterA;
                let (trans_a, trans_b) = match (register_a, consts) {
                    (false, [a, b]) => (*a != 0, *b != 0),
                    (true, [b]) => (false, *b != 0),
                    _ => return Err(format!("`{callee}` takes generics {}", name.generics())),
                };
                if input.is_fp8() && (trans_a || trans_b) {
                    return Err(format!(
                        "an FP8 (`{}`) `{callee}` reads A and B K-major only: TRANS_A and TRANS_B are false (transpose FP8 tiles in shared memory first)",
                        input.ptx()
                    ));
                }
                let n = accumulators(callee, input, operands[0])?;
                let a_ok = if register_a {
                    matches!(
                        operands[1],
                        OperandShape::Array {
                            element: Scalar::U32,
                            len: 4,
                            ..
                        }
                    )
                } else {
                    operands[1] == OperandShape::Scalar(Scalar::U64)
                };
                if !a_ok {
                    let want = if register_a {
                        "its fragment of A, `[u32; 4]` (two 16-bit or four FP8 elements a register)"
                    } else {
                        "A's shared-memory matrix descriptor, a `u64`"
                    };
                    return Err(format!(
                        "`{callee}`'s second argument is {want}, not {}",
                        operands[1]
                    ));
                }
                if operands[2] != OperandShape::Scalar(Scalar::U64) {
                    return Err(format!(
                        "`{callee}`'s third argument is B's shared-memory matrix descriptor, a `u64`, not {}",
                        operands[2]
                    ));
                }
                if operands[3] != OperandShape::Scalar(Scalar::Bool) {
                    return Err(format!(
                        "`{callee}`'s fourth argument says whether D accumulates (`true`) or is overwritten, a `bool`, not {}",
                        operands[3]
                    ));
                }
                Ok(TensorOp::Wgmma(WgmmaForm {
                    input,
                    n,
                    register_a,
                    trans_a,
                    trans_b,
                }))
            }
        }
    }

    /// The PTX instruction's name, for messages.
    pub fn ptx_name(&self) -> String {
        match self {
            TensorOp::WgmmaFence => "wgmma.fence.sync.aligned".into(),
            TensorOp::WgmmaCommitGroup => "wgmma.commit_group.sync.aligned".into(),
            TensorOp::WgmmaWaitGroup { .. } => "wgmma.wait_group.sync.aligned".into(),
            TensorOp::Wgmma(form) => format!(
                "wgmma.mma_async.sync.aligned.m64n{}k{}.f32.{input}.{input}",
                form.n,
                form.input.k(),
                input = form.input.ptx()
            ),
            TensorOp::SetMaxNreg { increase, .. } => format!(
                "setmaxnreg.{}.sync.aligned.u32",
                if *increase { "inc" } else { "dec" }
            ),
            TensorOp::NamedBarrier { wait: true, .. } => "bar.sync".into(),
            TensorOp::NamedBarrier { wait: false, .. } => "bar.arrive".into(),
            TensorOp::MbarrierInit => "mbarrier.init.shared::cta.b64".into(),
            TensorOp::MbarrierArrive { expect_tx: false } => {
                "mbarrier.arrive.shared::cta.b64".into()
            }
            TensorOp::MbarrierArrive { expect_tx: true } => {
                "mbarrier.arrive.expect_tx.shared::cta.b64".into()
            }
            TensorOp::FenceBarrierInit => "fence.mbarrier_init.release.cluster".into(),
            TensorOp::FenceProxyAsync => "fence.proxy.async.shared::cta".into(),
            TensorOp::BulkCommit => "cp.async.bulk.commit_group".into(),
            TensorOp::BulkWaitRead => "cp.async.bulk.wait_group.read".into(),
            TensorOp::CpAsyncCommit => "cp.async.commit_group".into(),
            TensorOp::CpAsyncWaitAll => "cp.async.wait_all".into(),
        }
    }

    /// The operation in PTX, with the operands of the call as `$0`.. (a register array's
    /// number standing for all its registers): the one table from operation to text.
    pub fn template(&self) -> String {
        match self {
            TensorOp::WgmmaFence
            | TensorOp::WgmmaCommitGroup
            | TensorOp::FenceBarrierInit
            | TensorOp::FenceProxyAsync
            | TensorOp::BulkCommit
            | TensorOp::CpAsyncCommit
            | TensorOp::CpAsyncWaitAll => format!("{};", self.ptx_name()),
            TensorOp::BulkWaitRead => format!("{} 0;", self.ptx_name()),
            TensorOp::MbarrierInit => format!("{} [$0], $1;", self.ptx_name()),
            TensorOp::MbarrierArrive { expect_tx: false } => {
                format!("{} _, [$0];", self.ptx_name())
            }
            TensorOp::MbarrierArrive { expect_tx: true } => {
                format!("{} _, [$0], $1;", self.ptx_name())
            }
            TensorOp::WgmmaWaitGroup { keep } => format!("{} {keep};", self.ptx_name()),
            TensorOp::SetMaxNreg { count, .. } => format!("{} {count};", self.ptx_name()),
            TensorOp::NamedBarrier { threads, .. } => format!("{} $0, {threads};", self.ptx_name()),
            TensorOp::Wgmma(form) => {
                let a = if form.register_a { "{$1}" } else { "$1" };
                // `imm-trans-a/b` exist for the 16-bit inputs only; register A has no
                // `imm-trans-a`.
                let trans = match (form.input.is_fp8(), form.register_a) {
                    (true, _) => String::new(),
                    (false, true) => format!(", {}", u8::from(form.trans_b)),
                    (false, false) => {
                        format!(", {}, {}", u8::from(form.trans_a), u8::from(form.trans_b))
                    }
                };
                format!(
                    "{{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\n{} {{$0}}, {a}, $2, p, 1, 1{trans};\n}}",
                    self.ptx_name()
                )
            }
        }
    }
}

/// N of a wgmma whose accumulators are `acc`: N/2 f32 per thread, N a multiple of 8 from 8
/// to 256.
fn accumulators(callee: &str, input: WgmmaInput, acc: OperandShape) -> Result<u32, String> {
    let shape = format!("m64nNk{}", input.k());
    let OperandShape::Array {
        element: Scalar::F32,
        len,
        read_write: true,
    } = acc
    else {
        return Err(format!(
            "`{callee}`'s first argument is the accumulators, `&mut acc` of an f32 array of N/2 per thread ({shape}, N a multiple of 8 from 8 to 256), not {acc}"
        ));
    };
    let n = 2 * len;
    if n % 8 != 0 || !(8..=256).contains(&n) {
        return Err(format!(
            "`{callee}` ({shape}) takes N/2 f32 accumulators per thread, N a multiple of 8 from 8 to 256: an array of {len} is N = {n} (write `[0.0f32; 64]` for N = 128, `[0.0f32; 128]` for N = 256)"
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(len: u32) -> OperandShape {
        OperandShape::Array {
            element: Scalar::F32,
            len,
            read_write: true,
        }
    }
    const U64: OperandShape = OperandShape::Scalar(Scalar::U64);
    const BOOL: OperandShape = OperandShape::Scalar(Scalar::Bool);

    #[test]
    fn the_templates_are_the_instructions_the_examples_wrote() {
        let op = TensorOp::of_call(
            TensorOpName::Wgmma,
            Some(WgmmaInput::Bf16),
            &[0, 1],
            &[acc(128), U64, U64, BOOL],
        )
        .unwrap();
        assert_eq!(
            op.template(),
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 1;\n}"
        );
        let fp8 = TensorOp::of_call(
            TensorOpName::Wgmma,
            Some(WgmmaInput::E4m3),
            &[0, 0],
            &[acc(128), U64, U64, BOOL],
        )
        .unwrap();
        assert_eq!(
            fp8.template(),
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {$0}, $1, $2, p, 1, 1;\n}"
        );
        let registers = OperandShape::Array {
            element: Scalar::U32,
            len: 4,
            read_write: false,
        };
        let ra = TensorOp::of_call(
            TensorOpName::WgmmaRegisterA,
            Some(WgmmaInput::F16),
            &[1],
            &[acc(32), registers, U64, BOOL],
        )
        .unwrap();
        assert_eq!(
            ra.template(),
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0}, {$1}, $2, p, 1, 1, 1;\n}"
        );
        let wait = TensorOp::of_call(TensorOpName::WgmmaWaitGroup, None, &[1], &[]).unwrap();
        assert_eq!(wait.template(), "wgmma.wait_group.sync.aligned 1;");
        // The library's texts before they were operations.
        const U32: OperandShape = OperandShape::Scalar(Scalar::U32);
        for (name, operands, text) in [
            (
                TensorOpName::MbarrierInit,
                &[U32, U32][..],
                "mbarrier.init.shared::cta.b64 [$0], $1;",
            ),
            (
                TensorOpName::MbarrierArrive,
                &[U32][..],
                "mbarrier.arrive.shared::cta.b64 _, [$0];",
            ),
            (
                TensorOpName::MbarrierArriveExpectTx,
                &[U32, U32][..],
                "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
            ),
            (
                TensorOpName::FenceBarrierInit,
                &[][..],
                "fence.mbarrier_init.release.cluster;",
            ),
            (
                TensorOpName::FenceProxyAsync,
                &[][..],
                "fence.proxy.async.shared::cta;",
            ),
            (
                TensorOpName::TmaStoreCommit,
                &[][..],
                "cp.async.bulk.commit_group;",
            ),
            (
                TensorOpName::TmaStoreWait,
                &[][..],
                "cp.async.bulk.wait_group.read 0;",
            ),
            (
                TensorOpName::CpAsyncCommit,
                &[][..],
                "cp.async.commit_group;",
            ),
            (TensorOpName::CpAsyncWaitAll, &[][..], "cp.async.wait_all;"),
            (
                TensorOpName::SetMaxNregDec,
                &[][..],
                "setmaxnreg.dec.sync.aligned.u32 40;",
            ),
            (
                TensorOpName::NamedBarrierSync,
                &[U32][..],
                "bar.sync $0, 256;",
            ),
        ] {
            let consts: &[u64] = match name {
                TensorOpName::SetMaxNregDec => &[40],
                TensorOpName::NamedBarrierSync => &[256],
                _ => &[],
            };
            let op = TensorOp::of_call(name, None, consts, operands).unwrap();
            assert_eq!(op.template(), text, "{name:?}");
        }
        let wrong = TensorOp::of_call(TensorOpName::MbarrierInit, None, &[], &[U64, U32]);
        assert!(wrong.unwrap_err().contains("is a `u32`, not a `u64`"));
    }

    #[test]
    fn shapes_types_and_counts_are_checked() {
        let call = |input, consts: &[u64], operands: &[OperandShape]| {
            TensorOp::of_call(TensorOpName::Wgmma, Some(input), consts, operands).unwrap_err()
        };
        let wrong_count = call(WgmmaInput::Bf16, &[0, 0], &[acc(18), U64, U64, BOOL]);
        assert!(wrong_count.contains("N = 36"), "{wrong_count}");
        let too_many = call(WgmmaInput::Bf16, &[0, 0], &[acc(256), U64, U64, BOOL]);
        assert!(too_many.contains("N = 512"), "{too_many}");
        let fp8_trans = call(WgmmaInput::E5m2, &[0, 1], &[acc(64), U64, U64, BOOL]);
        assert!(fp8_trans.contains("K-major only"), "{fp8_trans}");
        let not_mut = OperandShape::Array {
            element: Scalar::F32,
            len: 64,
            read_write: false,
        };
        let read_only = call(WgmmaInput::F16, &[0, 0], &[not_mut, U64, U64, BOOL]);
        assert!(read_only.contains("`&mut acc`"), "{read_only}");
        let u32_desc = call(
            WgmmaInput::F16,
            &[0, 0],
            &[acc(64), OperandShape::Scalar(Scalar::U32), U64, BOOL],
        );
        assert!(u32_desc.contains("a `u64`, not a `u32`"), "{u32_desc}");
        let scale = call(
            WgmmaInput::F16,
            &[0, 0],
            &[acc(64), U64, U64, OperandShape::Scalar(Scalar::U32)],
        );
        assert!(scale.contains("a `bool`"), "{scale}");
        let wait = TensorOp::of_call(TensorOpName::WgmmaWaitGroup, None, &[9], &[]).unwrap_err();
        assert!(wait.contains("0 to 7"), "{wait}");
    }
}
