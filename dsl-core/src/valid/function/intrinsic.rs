//! Intrinsics: the argument and result types of each, atomics on the element types and
//! address spaces they support, vector accesses.

use super::Checker;
use crate::intrinsics::{
    AddressSpace as IntrinsicSpace, AtomicAccess, AtomicOp, Intrinsic, VoteOp,
};
use crate::ir::{AddressSpace, Expression, Handle};
use crate::valid::error::ValidationErrorKind as Kind;
use crate::valid::ExprType;
use crate::Scalar;

impl Checker<'_> {
    /// The element type of a vector access of `count` elements through `pointer`: scalars
    /// making 8 or 16 bytes in all.
    pub(super) fn vector_element(
        &self,
        pointer: Handle<Expression>,
        count: usize,
    ) -> Result<Scalar, Kind> {
        let ExprType::Pointer { base, .. } = self.ty(pointer) else {
            return Err(Kind::TypeMismatch {
                expected: "a pointer".into(),
                found: self.describe(self.ty(pointer)),
            });
        };
        let ExprType::Scalar(elem) = ExprType::of(self.module, base) else {
            return Err(Kind::Unsupported("vector access of non-scalars".into()));
        };
        let bytes = elem.size_bytes() as usize * count;
        if !(count == 2 || count == 4 || count == 8)
            || !(bytes == 8 || bytes == 16)
            || elem == Scalar::Bool
        {
            return Err(Kind::Unsupported(format!(
                "a vector access of {count} `{elem}` ({bytes} bytes); 8 or 16 bytes are supported"
            )));
        }
        Ok(elem)
    }

    /// The argument and result types of a device intrinsic.
    pub(super) fn intrinsic(
        &self,
        intrinsic: Intrinsic,
        arguments: &[Handle<Expression>],
        result: Option<Handle<crate::ir::LocalVariable>>,
    ) -> Result<(), Kind> {
        let name = intrinsic.name();
        let arity = |n: usize| {
            if arguments.len() == n {
                Ok(())
            } else {
                Err(Kind::TypeMismatch {
                    expected: format!("{n} argument(s) for `{name}`"),
                    found: arguments.len().to_string(),
                })
            }
        };
        let produced = match intrinsic {
            Intrinsic::SyncThreads | Intrinsic::GridSync | Intrinsic::Fence(_) => {
                arity(0)?;
                None
            }
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. } => {
                return Err(Kind::Unsupported(format!("`{name}` as a statement")))
            }
            Intrinsic::Atomic(op, _) => {
                arity(if op == AtomicOp::CompareExchange {
                    3
                } else {
                    2
                })?;
                let ty = self.atomic_element(name, arguments[0], true, atomic_takes_floats(op))?;
                for value in &arguments[1..] {
                    self.expect(*value, ty)?;
                }
                Some(ty)
            }
            Intrinsic::OrderedAtomic { access, ordering } => {
                let Some(ordering) = ordering else {
                    return Err(Kind::Unsupported(format!(
                        "`{name}` without its ordering (lowering moves it into the intrinsic)"
                    )));
                };
                if !access.allows(ordering.order) {
                    return Err(Kind::Unsupported(format!(
                        "`{name}` with `Ordering::{}`",
                        ordering.order.variant()
                    )));
                }
                let (count, writes, float_ok) = match access {
                    AtomicAccess::Load => (1, false, true),
                    AtomicAccess::Store => (2, true, true),
                    AtomicAccess::ReadModifyWrite(op) => (
                        if op == AtomicOp::CompareExchange {
                            3
                        } else {
                            2
                        },
                        true,
                        atomic_takes_floats(op),
                    ),
                };
                arity(count)?;
                let ty = self.atomic_element(name, arguments[0], writes, float_ok)?;
                for value in &arguments[1..] {
                    self.expect(*value, ty)?;
                }
                (access != AtomicAccess::Store).then_some(ty)
            }
            Intrinsic::Volatile { store } => {
                arity(if store { 2 } else { 1 })?;
                let ExprType::Pointer { base, mutable, .. } = self.ty(arguments[0]) else {
                    return Err(Kind::TypeMismatch {
                        expected: format!("a pointer for `{name}`"),
                        found: self.describe(self.ty(arguments[0])),
                    });
                };
                if store && !mutable {
                    return Err(Kind::StoreToImmutable);
                }
                let ExprType::Scalar(ty) = ExprType::of(self.module, base) else {
                    return Err(Kind::BadOperand {
                        op: name,
                        ty: "a non-scalar".into(),
                    });
                };
                if store {
                    self.expect(arguments[1], ty)?;
                }
                (!store).then_some(ty)
            }
            Intrinsic::Clock64 | Intrinsic::GlobalTimer => {
                arity(0)?;
                Some(Scalar::U64)
            }
            Intrinsic::NanoSleep => {
                arity(1)?;
                self.expect(arguments[0], Scalar::U32)?;
                None
            }
            Intrinsic::Address(wanted) => {
                arity(1)?;
                let ExprType::Pointer { space, .. } = self.ty(arguments[0]) else {
                    return Err(Kind::TypeMismatch {
                        expected: format!("a pointer for `{name}`"),
                        found: self.describe(self.ty(arguments[0])),
                    });
                };
                // An element of a shared array is in `.shared`. A slice parameter of a
                // `#[device]` function may hold a shared array too, so only what is known
                // here is refused (as CUDA's `__cvta_generic_to_shared`, a generic pointer
                // outside shared memory gives an undefined address).
                let shared = space == AddressSpace::Shared || self.is_shared_element(arguments[0]);
                let fits = match wanted {
                    IntrinsicSpace::Shared => space != AddressSpace::Local,
                    IntrinsicSpace::Global => !shared && space != AddressSpace::Local,
                };
                if !fits {
                    let what = if shared {
                        "a shared array"
                    } else {
                        "a local array"
                    };
                    return Err(Kind::Unsupported(format!(
                        "`{name}` of an element of {what}: `shared_address` takes elements of shared arrays (`shared_array`, `dynamic_shared`), `global_address` elements of slices in device memory"
                    )));
                }
                Some(match wanted {
                    IntrinsicSpace::Shared => Scalar::U32,
                    IntrinsicSpace::Global => Scalar::U64,
                })
            }
            Intrinsic::TensorMapAddress => {
                return Err(Kind::Unsupported(
                    "`tensor_map_address` as a statement: it is the expression `TensorMapAddress`"
                        .into(),
                ))
            }
            Intrinsic::Shuffle(_) => {
                arity(3)?;
                self.expect(arguments[0], Scalar::U32)?;
                self.expect(arguments[2], Scalar::U32)?;
                Some(self.scalar(arguments[1])?)
            }
            Intrinsic::Vote(op) => {
                arity(2)?;
                self.expect(arguments[0], Scalar::U32)?;
                self.expect(arguments[1], Scalar::Bool)?;
                Some(if op == VoteOp::Ballot {
                    Scalar::U32
                } else {
                    Scalar::Bool
                })
            }
            Intrinsic::ActiveMask | Intrinsic::LaneId => {
                arity(0)?;
                Some(Scalar::U32)
            }
            Intrinsic::VectorLoad(_)
            | Intrinsic::VectorStore(_)
            | Intrinsic::VectorLoadArray
            | Intrinsic::VectorStoreArray => {
                return Err(Kind::Unsupported(format!(
                    "`{name}` as an intrinsic statement (it has statements of its own)"
                )))
            }
        };
        match (result, produced) {
            (None, _) => Ok(()),
            (Some(local), Some(ty)) => self.same(
                ExprType::of(self.module, self.function.locals[local].ty),
                ExprType::Scalar(ty),
            ),
            (Some(_), None) => Err(Kind::TypeMismatch {
                expected: format!("a value from `{name}`"),
                found: "nothing".into(),
            }),
        }
    }

    /// The element type an atomic through `pointer` works on: a 32- or 64-bit integer, or
    /// (`float_ok`) an `f32`/`f64`; `writes` requires a mutable pointer.
    pub(super) fn atomic_element(
        &self,
        name: &'static str,
        pointer: Handle<Expression>,
        writes: bool,
        float_ok: bool,
    ) -> Result<Scalar, Kind> {
        let ExprType::Pointer { base, mutable, .. } = self.ty(pointer) else {
            return Err(Kind::TypeMismatch {
                expected: format!("a pointer for `{name}`"),
                found: self.describe(self.ty(pointer)),
            });
        };
        if writes && !mutable {
            return Err(Kind::StoreToImmutable);
        }
        let ExprType::Scalar(ty) = ExprType::of(self.module, base) else {
            return Err(Kind::BadOperand {
                op: name,
                ty: "a non-scalar".into(),
            });
        };
        let integer = matches!(
            ty,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize
        );
        let float = float_ok && ty.is_wide_float();
        if !(integer || float) {
            return Err(Kind::BadOperand { op: name, ty: format!("`{ty}` (atomics take 32- and 64-bit integers, and floats for loads, stores, add, sub, exchange and compare-exchange)") });
        }
        Ok(ty)
    }

    /// Whether `pointer` points at an element of a shared array (`&tile[i]`).
    pub(super) fn is_shared_element(&self, pointer: Handle<Expression>) -> bool {
        match self.function.expressions.try_get(pointer) {
            Some(Expression::ElementPointer { base, .. }) => matches!(
                self.function.expressions.try_get(self.slice_root(*base)),
                Some(Expression::SharedSlice(_))
            ),
            _ => false,
        }
    }
}

/// Whether the atomic `op` works on floats (`f32`, `f64`) as well as integers.
pub(super) fn atomic_takes_floats(op: AtomicOp) -> bool {
    matches!(
        op,
        AtomicOp::Add | AtomicOp::Sub | AtomicOp::Exchange | AtomicOp::CompareExchange
    )
}
