//! Intrinsics and math functions: the argument and result types each one fixes.

use super::{Binding, Constraint, InferTy, Inference};
use crate::ast::{Expr, ExprKind, ValueType};
use crate::intrinsics::{Intrinsic, VoteOp};
use crate::lower::error::LowerError;
use crate::lower::spec::Resolved;
use crate::math::MathFunction;
use crate::{Scalar, Span};

impl Inference<'_> {
    /// The types of an intrinsic's arguments and result (`None`: no value).
    pub(super) fn intrinsic(
        &mut self,
        intrinsic: Intrinsic,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<usize>, LowerError> {
        Ok(match intrinsic {
            Intrinsic::SyncThreads | Intrinsic::GridSync | Intrinsic::Fence(_) => None,
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. } => {
                return Err(LowerError::new(
                    span,
                    format!(
                        "bind `{}` to a name: `let tile = {}::<f32>(..);`",
                        intrinsic.name(),
                        intrinsic.name()
                    ),
                ))
            }
            Intrinsic::Atomic(..) => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(span, "an atomic takes `&mut x[i]` first"));
                };
                let target = self.scalar(place)?;
                for value in &args[1..] {
                    let v = self.scalar(value)?;
                    self.unify(v, target, value.span)?;
                }
                Some(target)
            }
            Intrinsic::OrderedAtomic { access, .. } => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(
                        span,
                        format!("`{}` takes the element first (`&x[i]` or `&mut x[i]`)", intrinsic.name()),
                    ));
                };
                let target = self.scalar(place)?;
                // The ordering and scope, last, are variants read by lowering.
                let values = args.len().saturating_sub(2);
                for value in args.get(1..values).unwrap_or_default() {
                    let v = self.scalar(value)?;
                    self.unify(v, target, value.span)?;
                }
                (access != crate::intrinsics::AtomicAccess::Store).then_some(target)
            }
            Intrinsic::Volatile { store } => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(
                        span,
                        format!("`{}` takes the element first (`&x[i]` or `&mut x[i]`)", intrinsic.name()),
                    ));
                };
                let target = self.scalar(place)?;
                for value in &args[1..] {
                    let v = self.scalar(value)?;
                    self.unify(v, target, value.span)?;
                }
                (!store).then_some(target)
            }
            Intrinsic::Clock64 | Intrinsic::GlobalTimer => Some(self.known(Scalar::U64)),
            Intrinsic::NanoSleep => {
                let [ns] = args else {
                    return Err(LowerError::new(span, "`nanosleep` takes the nanoseconds (`u32`)"));
                };
                let n = self.scalar(ns)?;
                self.require(n, Scalar::U32, ns.span)?;
                None
            }
            Intrinsic::Address(space) => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(
                        span,
                        format!("`{}` takes `&x[i]`", intrinsic.name()),
                    ));
                };
                self.scalar(place)?;
                Some(self.known(match space {
                    crate::intrinsics::AddressSpace::Shared => Scalar::U32,
                    crate::intrinsics::AddressSpace::Global => Scalar::U64,
                }))
            }
            Intrinsic::TensorMapAddress => {
                let map = match args {
                    [Expr {
                        kind: ExprKind::Reference { place, .. },
                        ..
                    }] => match &place.kind {
                        ExprKind::Var(name) => Some(name),
                        _ => None,
                    },
                    _ => None,
                };
                match map.map(|name| self.scopes.lookup(name)) {
                    Some(Some(Binding::TensorMap)) => Some(self.known(Scalar::U64)),
                    _ => {
                        return Err(LowerError::new(
                            span,
                            "`tensor_map_address` takes a tensor-map parameter of the kernel: `tensor_map_address(&map)` with `map: TensorMap`",
                        ))
                    }
                }
            }
            Intrinsic::Shuffle(_) => {
                let [mask, value, lane] = args else {
                    return Err(LowerError::new(span, "a shuffle takes (mask, value, lane)"));
                };
                let m = self.scalar(mask)?;
                self.require(m, Scalar::U32, mask.span)?;
                let l = self.scalar(lane)?;
                self.require(l, Scalar::U32, lane.span)?;
                Some(self.scalar(value)?)
            }
            Intrinsic::Vote(op) => {
                let [mask, predicate] = args else {
                    return Err(LowerError::new(span, "a vote takes (mask, predicate)"));
                };
                let m = self.scalar(mask)?;
                self.require(m, Scalar::U32, mask.span)?;
                let p = self.scalar(predicate)?;
                self.require(p, Scalar::Bool, predicate.span)?;
                Some(self.known(if op == VoteOp::Ballot {
                    Scalar::U32
                } else {
                    Scalar::Bool
                }))
            }
            Intrinsic::ActiveMask | Intrinsic::LaneId => Some(self.known(Scalar::U32)),
            Intrinsic::VectorLoad(n) => {
                return Err(LowerError::new(
                    span,
                    format!("bind the values of `vload{n}` with a tuple: `let (a, b, ..) = vload{n}(x, i);`"),
                ))
            }
            Intrinsic::VectorLoadArray => {
                return Err(LowerError::new(
                    span,
                    "bind the array of `vload` to a name: `let a: [f32; 4] = vload(x, i);`",
                ))
            }
            Intrinsic::VectorStoreArray => {
                let [slice, index, values] = args else {
                    return Err(LowerError::new(span, "`vstore` takes (slice, index, array)"));
                };
                let elem = self.vector_slice(slice, index)?;
                let elem = self.known(elem);
                self.array_value(values, InferTy::Array(elem))?;
                None
            }
            Intrinsic::VectorStore(n) => {
                let elem = self.vector_access(&args[..2.min(args.len())], n, span)?;
                let Some(Expr { kind: ExprKind::Tuple(values), .. }) = args.get(2) else {
                    return Err(LowerError::new(span, format!("`vstore{n}` takes its values as a tuple: `vstore{n}(y, i, (a, b, ..))`")));
                };
                if values.len() != usize::from(n) {
                    return Err(LowerError::new(span, format!("`vstore{n}` stores {n} values, {} given", values.len())));
                }
                for value in values {
                    let v = self.scalar(value)?;
                    self.require(v, elem, value.span)?;
                }
                None
            }
        })
    }

    /// The slice and index arguments of a vector access; returns the element type, which
    /// must make `n` elements 16 bytes (or 8 for two 32-bit values).
    pub(super) fn vector_access(
        &mut self,
        args: &[Expr],
        n: u8,
        span: Span,
    ) -> Result<Scalar, LowerError> {
        let [slice, index] = args else {
            return Err(LowerError::new(
                span,
                "a vector access takes (slice, index)",
            ));
        };
        let elem = self.vector_slice(slice, index)?;
        vector_width(elem, u32::from(n), span)?;
        Ok(elem)
    }

    /// The element type of a vector access's slice; the index is a `usize`.
    fn vector_slice(&mut self, slice: &Expr, index: &Expr) -> Result<Scalar, LowerError> {
        let InferTy::Slice { elem, .. } = self.expr(slice)? else {
            return Err(LowerError::new(
                slice.span,
                "vector accesses apply to slices",
            ));
        };
        let i = self.scalar(index)?;
        self.require(i, Scalar::Usize, index.span)?;
        Ok(elem)
    }

    /// `vload::<T, N>(x, i)`: an array of `N` elements of the slice's type.
    pub(super) fn vector_array_load(
        &mut self,
        ty: Option<&ValueType>,
        args: &[Expr],
        span: Span,
    ) -> Result<InferTy, LowerError> {
        let [slice, index] = args else {
            return Err(LowerError::new(span, "`vload` takes (slice, index)"));
        };
        let given = self.vector_slice(slice, index)?;
        // Without its type (`acc = vload(x, i);`), lowering takes the place's.
        let Some(ValueType::Array { elem, len }) = ty else {
            return Ok(InferTy::Array(self.known(given)));
        };
        let Resolved::Scalar(wanted) = self.library.resolve_value(self.spec, elem, span)? else {
            return Err(LowerError::new(span, "`vload` loads scalars"));
        };
        if given != wanted {
            return Err(LowerError::new(
                span,
                format!("`vload::<{wanted}, _>` of a slice of `{given}`: the element types differ"),
            ));
        }
        vector_width(given, self.spec.array_len(len, span)?, span)?;
        Ok(InferTy::Array(self.known(given)))
    }

    /// `receiver.function(args)`: arguments have the receiver's type, except `powi`'s
    /// (`i32`) and the shift amounts and exponents (`u32`); the result is the receiver's
    /// type, `bool`, `u32`, or one derived from the receiver's (`abs_diff`, `to_bits`).
    pub(super) fn math(
        &mut self,
        function: MathFunction,
        receiver: &Expr,
        args: &[Expr],
        span: Span,
    ) -> Result<usize, LowerError> {
        let r = self.scalar(receiver)?;
        if let MathFunction::FromBits(float) = function {
            if let Some(bits) = crate::math::bits_type(float) {
                self.require(r, bits, receiver.span)?;
            }
            return Ok(self.known(float));
        }
        for arg in args {
            let a = self.scalar(arg)?;
            match function {
                MathFunction::Powi => self.require(a, Scalar::I32, arg.span)?,
                MathFunction::WrappingShl
                | MathFunction::WrappingShr
                | MathFunction::RotateLeft
                | MathFunction::RotateRight
                | MathFunction::Pow => self.require(a, Scalar::U32, arg.span)?,
                _ => self.unify(a, r, arg.span)?,
            }
        }
        Ok(match function {
            MathFunction::IsNan => self.known(Scalar::Bool),
            MathFunction::CountOnes | MathFunction::LeadingZeros | MathFunction::TrailingZeros => {
                self.known(Scalar::U32)
            }
            MathFunction::AbsDiff | MathFunction::ToBits => {
                // The result's type follows from the receiver's, which must be known here,
                // as rustc requires of a method call on a number.
                let root = self.find(r);
                let Constraint::Known(ty) = self.constraint[root] else {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "`{}` needs the type of its value: give it a suffix (`1.5f32`) or a typed `let`",
                            function.name()
                        ),
                    ));
                };
                let result = function.result(ty);
                self.known(result)
            }
            _ => r,
        })
    }
}

/// Checks that `n` elements of `elem` make one 8- or 16-byte access (or are one element,
/// an ordinary access: `vload::<T, 1>`, so a function generic over the width also serves
/// the elements past the last whole vector).
pub(in crate::lower) fn vector_width(elem: Scalar, n: u32, span: Span) -> Result<(), LowerError> {
    let bytes = elem.size_bytes() * n;
    if n != 1 && (!(bytes == 16 || bytes == 8) || elem == Scalar::Bool) {
        return Err(LowerError::new(
            span,
            format!("`{n}` elements of `{elem}` are {bytes} bytes; vector accesses move 8 or 16 bytes (`vload8` of 16-bit values, `vload4` of 32-bit values, `vload2` of 64-bit values, `vload::<T, N>` with `N` elements making 8 or 16 bytes, or `N` = 1)"),
        ));
    }
    Ok(())
}
