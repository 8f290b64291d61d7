//! Compiling intrinsic calls: atomics (ordered ones too), shuffles and votes, barriers
//! (`sync_threads`, `grid_sync`), fences, clocks and timers, vector loads and stores,
//! shared arrays, and the addresses of `slice_at`, dynamic shared memory and tensor maps.

use cudajit_core::intrinsics::{AddressSpace, AtomicAccess, AtomicOp, Intrinsic};
use cudajit_core::ir::{Expression, Handle, LocalVariable};
use cudajit_core::Scalar;

use super::{Builtin, CompileResult, FunctionCompiler, Op};

impl FunctionCompiler<'_> {
    pub(super) fn intrinsic(
        &mut self,
        intrinsic: Intrinsic,
        arguments: &[Handle<Expression>],
        result: Option<Handle<LocalVariable>>,
    ) -> CompileResult<()> {
        let mut args = Vec::new();
        for argument in arguments {
            args.push(self.expr(*argument)?);
        }
        let result = match result {
            Some(local) => Some(self.local_register(local)?),
            None => None,
        };
        let dst = match result {
            Some(reg) => reg,
            None => self.register(1),
        };
        let span = self.span;
        let arg = |i: usize| {
            args.get(i)
                .copied()
                .ok_or((span, "missing argument".to_owned()))
        };
        match intrinsic {
            Intrinsic::SliceAt { .. } => return self.unsupported("`slice_at` as a statement"),
            Intrinsic::TensorMapAddress => {
                return self.unsupported("`tensor_map_address` as a statement")
            }
            Intrinsic::SyncThreads => self.emit(Op::Barrier),
            Intrinsic::GridSync => {
                self.program.grid_sync = true;
                self.emit(Op::GridBarrier)
            }
            // A block runs on one host thread, so within a block every access is already
            // sequentially consistent; across blocks (other host threads) global memory is
            // relaxed host atomics, which a host `SeqCst` fence orders.
            Intrinsic::Fence(_) => self.emit(Op::Fence),
            // Every ordered atomic is a host atomic between two `SeqCst` fences, whatever its
            // ordering and scope: sequentially consistent, which satisfies every ordering
            // (the simulator does not show what a weaker ordering would let the GPU do).
            Intrinsic::OrderedAtomic { access, .. } => {
                let kind = match access {
                    AtomicAccess::Load => self.pointee(arguments[0])?,
                    _ => self.scalar_of(arguments[1])?,
                };
                self.emit(Op::Fence);
                match access {
                    AtomicAccess::Load => self.emit(Op::AtomicLoad {
                        dst,
                        pointer: arg(0)?,
                        size: kind.size_bytes(),
                        mask: u64::MAX,
                    }),
                    AtomicAccess::Store => self.emit(Op::AtomicStore {
                        pointer: arg(0)?,
                        src: arg(1)?,
                        size: kind.size_bytes(),
                    }),
                    AtomicAccess::ReadModifyWrite(op) => {
                        let b = if op == AtomicOp::CompareExchange {
                            arg(2)?
                        } else {
                            arg(1)?
                        };
                        self.emit(Op::Atomic {
                            op,
                            kind,
                            dst,
                            pointer: arg(0)?,
                            a: arg(1)?,
                            b,
                        });
                    }
                }
                self.emit(Op::Fence);
            }
            // A volatile access is an atomic one on the simulator (never cached, never
            // torn), not ordered: the GPU does not order it either.
            Intrinsic::Volatile { store: false } => {
                let kind = self.pointee(arguments[0])?;
                self.emit(Op::AtomicLoad {
                    dst,
                    pointer: arg(0)?,
                    size: kind.size_bytes(),
                    mask: if kind == Scalar::Bool { 1 } else { u64::MAX },
                });
            }
            Intrinsic::Volatile { store: true } => {
                let kind = self.scalar_of(arguments[1])?;
                self.emit(Op::AtomicStore {
                    pointer: arg(0)?,
                    src: arg(1)?,
                    size: kind.size_bytes(),
                });
            }
            Intrinsic::Clock64 | Intrinsic::GlobalTimer => self.emit(Op::Timer { dst }),
            Intrinsic::NanoSleep => self.emit(Op::NanoSleep { ns: arg(0)? }),

            Intrinsic::Atomic(op, _scope) => {
                let kind = self.scalar_of(arguments[1])?;
                let b = if op == AtomicOp::CompareExchange {
                    arg(2)?
                } else {
                    arg(1)?
                };
                self.emit(Op::Atomic {
                    op,
                    kind,
                    dst,
                    pointer: arg(0)?,
                    a: arg(1)?,
                    b,
                });
            }
            Intrinsic::Shuffle(mode) => {
                let kind = self.scalar_of(arguments[1])?;
                self.emit(Op::Shuffle {
                    mode,
                    kind,
                    dst,
                    mask: arg(0)?,
                    value: arg(1)?,
                    lane: arg(2)?,
                });
            }
            Intrinsic::Vote(op) => self.emit(Op::Vote {
                op,
                dst,
                mask: arg(0)?,
                predicate: arg(1)?,
            }),
            Intrinsic::ActiveMask => self.emit(Op::ActiveMask { dst }),
            Intrinsic::LaneId => {
                let lane = self.builtin(Builtin::LaneId);
                self.emit(Op::Copy { dst, src: lane });
            }
            // A global element's address is its simulated pointer (which `slice_at` takes
            // back); a shared element's is its offset in the block's shared memory, as a
            // `.shared` address is on the GPU.
            Intrinsic::Address(AddressSpace::Global) => self.emit(Op::Copy { dst, src: arg(0)? }),
            Intrinsic::Address(AddressSpace::Shared) => {
                let pointer = arg(0)?;
                let mask = self.constant(u64::from(u32::MAX));
                self.emit(Op::Binary {
                    f: |pointer, mask| pointer & mask,
                    dst,
                    a: pointer,
                    b: mask,
                });
            }
            Intrinsic::SharedArray
            | Intrinsic::DynamicShared
            | Intrinsic::VectorLoad(_)
            | Intrinsic::VectorStore(_)
            | Intrinsic::VectorLoadArray
            | Intrinsic::VectorStoreArray => {
                return self.unsupported(format!("`{}` as a statement", intrinsic.name()))
            }
        }
        Ok(())
    }
}
