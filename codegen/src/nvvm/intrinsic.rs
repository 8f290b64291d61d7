//! Writing device intrinsics: barriers, fences, warp votes and shuffles, and inline PTX.

use cudajit_core::intrinsics::{
    AddressSpace, AtomicScope, FenceScope, Intrinsic, ShuffleMode, VoteOp,
};
use cudajit_core::ir::{Expression, Handle, TypeInner};
use cudajit_core::valid::ExprType;
use cudajit_core::{Scalar, Span};

use super::function::{struct_type_name, WriteError, Writer};
use super::types;

impl Writer<'_> {
    /// A device intrinsic; returns its value and type, if it has one.
    pub(super) fn intrinsic(
        &mut self,
        intrinsic: Intrinsic,
        arguments: &[Handle<Expression>],
        span: Span,
    ) -> Result<Option<(String, Scalar)>, WriteError> {
        let mut values = Vec::new();
        for argument in arguments {
            values.push(self.expr(*argument)?.scalar());
        }
        Ok(match intrinsic {
            Intrinsic::SyncThreads => {
                self.declare("declare void @llvm.nvvm.barrier0() convergent nounwind".into());
                self.line("call void @llvm.nvvm.barrier0()".into());
                None
            }
            Intrinsic::GridSync => {
                self.grid_sync(span);
                None
            }
            Intrinsic::Fence(scope) => {
                let name = match scope {
                    FenceScope::Block => "cta",
                    FenceScope::Device => "gl",
                    FenceScope::System => "sys",
                };
                self.declare(format!("declare void @llvm.nvvm.membar.{name}() nounwind"));
                self.line(format!("call void @llvm.nvvm.membar.{name}()"));
                None
            }
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. } => {
                return Err(self.unsupported(span, "a shared array as a statement"))
            }
            Intrinsic::Atomic(op, AtomicScope::Device) => {
                let ty = self.scalar_of(arguments[1])?;
                Some((self.atomic(op, ty, &values), ty))
            }
            Intrinsic::Atomic(op, scope) => {
                let ty = self.scalar_of(arguments[1])?;
                Some((self.scoped_atomic(op, scope, ty, &values), ty))
            }
            Intrinsic::OrderedAtomic { access, ordering } => {
                let Some(ordering) = ordering else {
                    return Err(self.unsupported(span, "an ordered atomic without its ordering"));
                };
                let ty = self.pointee(arguments[0], span)?;
                self.ordered_atomic(access, ordering, ty, &values)
                    .map(|value| (value, ty))
            }
            Intrinsic::Volatile { store } => {
                let ty = self.pointee(arguments[0], span)?;
                let mem = types::memory(ty);
                let align = ty.size_bytes();
                let pointer = &values[0];
                if store {
                    let mut value = values[1].clone();
                    if ty == Scalar::Bool {
                        value = self.value(format!("zext i1 {value} to i8"));
                    }
                    self.line(format!(
                        "store volatile {mem} {value}, {mem}* {pointer}, align {align}"
                    ));
                    None
                } else {
                    // Through a pointer the optimiser cannot trace to a `noalias readonly`
                    // slice, which it would read with `ld.global.nc` (the read-only cache).
                    let address = self.value(format!("ptrtoint {mem}* {pointer} to i64"));
                    let opaque = self.value(format!(
                        "call i64 asm \"mov.b64 $0, $1;\", \"=l,l\"(i64 {address})"
                    ));
                    let pointer = self.value(format!("inttoptr i64 {opaque} to {mem}*"));
                    let mut value = self.value(format!(
                        "load volatile {mem}, {mem}* {pointer}, align {align}"
                    ));
                    if ty == Scalar::Bool {
                        value = self.value(format!("trunc i8 {value} to i1"));
                    }
                    Some((value, ty))
                }
            }
            // `asm volatile` as CUDA's `clock64()` reads it, so no read is merged or hoisted.
            Intrinsic::Clock64 => Some((
                self.value("call i64 asm sideeffect \"mov.u64 $0, %clock64;\", \"=l\"()".into()),
                Scalar::U64,
            )),
            Intrinsic::GlobalTimer => Some((
                self.value(
                    "call i64 asm sideeffect \"mov.u64 $0, %globaltimer;\", \"=l\"()".into(),
                ),
                Scalar::U64,
            )),
            Intrinsic::NanoSleep => {
                self.line(format!(
                    "call void asm sideeffect \"nanosleep.u32 $0;\", \"r\"(i32 {})",
                    values[0]
                ));
                None
            }
            Intrinsic::Shuffle(mode) => {
                let ty = self.scalar_of(arguments[1])?;
                let value = self.shuffle(mode, ty, &values[0], &values[1], &values[2]);
                Some((value, ty))
            }
            Intrinsic::Vote(op) => {
                let (name, result, ty) = match op {
                    VoteOp::Ballot => ("ballot", "i32", Scalar::U32),
                    VoteOp::All => ("all", "i1", Scalar::Bool),
                    VoteOp::Any => ("any", "i1", Scalar::Bool),
                };
                self.declare(format!(
                    "declare {result} @llvm.nvvm.vote.{name}.sync(i32, i1) convergent nounwind"
                ));
                let value = self.value(format!(
                    "call {result} @llvm.nvvm.vote.{name}.sync(i32 {}, i1 {})",
                    values[0], values[1]
                ));
                Some((value, ty))
            }
            Intrinsic::ActiveMask => {
                let value = self
                    .value("call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"()".to_owned());
                Some((value, Scalar::U32))
            }
            Intrinsic::VectorLoad(_)
            | Intrinsic::VectorStore(_)
            | Intrinsic::VectorLoadArray
            | Intrinsic::VectorStoreArray => {
                return Err(self.unsupported(span, "a vector access as an intrinsic statement"))
            }
            Intrinsic::TensorMapAddress => {
                return Err(self.unsupported(span, "a tensor map's address as a statement"))
            }
            Intrinsic::LaneId => {
                self.declare(
                    "declare i32 @llvm.nvvm.read.ptx.sreg.laneid() nounwind readnone".into(),
                );
                let value = self.value("call i32 @llvm.nvvm.read.ptx.sreg.laneid()".into());
                Some((value, Scalar::U32))
            }
            Intrinsic::Address(space) => {
                let mem = match self.info.type_of(arguments[0]) {
                    ExprType::Pointer { base, .. } => match &self.module.types[base].inner {
                        TypeInner::Scalar(s) => types::memory(*s).to_owned(),
                        TypeInner::Struct { name, .. } => struct_type_name(name),
                        _ => return Err(self.unsupported(span, "the address of this type")),
                    },
                    _ => return Err(self.unsupported(span, "the address of a non-pointer")),
                };
                let pointer = &values[0];
                match space {
                    // Back to the shared window (the optimiser folds the casts), where an
                    // address is 32 bits.
                    AddressSpace::Shared => {
                        let shared = self.value(format!(
                            "addrspacecast {mem}* {pointer} to {mem} addrspace(3)*"
                        ));
                        let wide =
                            self.value(format!("ptrtoint {mem} addrspace(3)* {shared} to i64"));
                        Some((self.value(format!("trunc i64 {wide} to i32")), Scalar::U32))
                    }
                    AddressSpace::Global => Some((
                        self.value(format!("ptrtoint {mem}* {pointer} to i64")),
                        Scalar::U64,
                    )),
                }
            }
        })
    }

    /// The scalar type `pointer` points to.
    fn pointee(&self, pointer: Handle<Expression>, span: Span) -> Result<Scalar, WriteError> {
        match self.info.type_of(pointer) {
            ExprType::Pointer { base, .. } => match &self.module.types[base].inner {
                TypeInner::Scalar(s) => Ok(*s),
                _ => Err(self.unsupported(span, "an access of a non-scalar element")),
            },
            _ => Err(self.unsupported(span, "an access through a non-pointer")),
        }
    }

    /// `shfl.sync` on 32-bit lanes: narrower values are widened, 64-bit values shuffled as
    /// two halves.
    pub(super) fn shuffle(
        &mut self,
        mode: ShuffleMode,
        ty: Scalar,
        mask: &str,
        value: &str,
        lane: &str,
    ) -> String {
        let (name, clamp) = match mode {
            ShuffleMode::Idx => ("idx", 31),
            ShuffleMode::Up => ("up", 0),
            ShuffleMode::Down => ("down", 31),
            ShuffleMode::Xor => ("bfly", 31),
        };
        let intrinsic = format!("llvm.nvvm.shfl.sync.{name}.i32");
        self.declare(format!(
            "declare i32 @{intrinsic}(i32, i32, i32, i32) convergent nounwind"
        ));
        let t = types::scalar(ty);
        let shuffle32 = |this: &mut Self, v: String| {
            this.value(format!(
                "call i32 @{intrinsic}(i32 {mask}, i32 {v}, i32 {lane}, i32 {clamp})"
            ))
        };
        match (ty.bits(), ty.is_float()) {
            (64, _) => {
                let bits = if ty.is_float() {
                    self.value(format!("bitcast {t} {value} to i64"))
                } else {
                    value.to_owned()
                };
                let low = self.value(format!("trunc i64 {bits} to i32"));
                let high_wide = self.value(format!("lshr i64 {bits}, 32"));
                let high = self.value(format!("trunc i64 {high_wide} to i32"));
                let low = shuffle32(self, low);
                let high = shuffle32(self, high);
                let low = self.value(format!("zext i32 {low} to i64"));
                let high = self.value(format!("zext i32 {high} to i64"));
                let high = self.value(format!("shl i64 {high}, 32"));
                let joined = self.value(format!("or i64 {high}, {low}"));
                if ty.is_float() {
                    self.value(format!("bitcast i64 {joined} to {t}"))
                } else {
                    joined
                }
            }
            (32, true) => {
                let bits = self.value(format!("bitcast float {value} to i32"));
                let moved = shuffle32(self, bits);
                self.value(format!("bitcast i32 {moved} to float"))
            }
            (32, false) => shuffle32(self, value.to_owned()),
            _ if ty == Scalar::F16 => {
                let bits = self.value(format!("bitcast half {value} to i16"));
                let wide = self.value(format!("zext i16 {bits} to i32"));
                let moved = shuffle32(self, wide);
                let narrow = self.value(format!("trunc i32 {moved} to i16"));
                self.value(format!("bitcast i16 {narrow} to half"))
            }
            _ => {
                let wide = self.value(format!("zext {t} {value} to i32"));
                let moved = shuffle32(self, wide);
                self.value(format!("trunc i32 {moved} to {t}"))
            }
        }
    }
}
