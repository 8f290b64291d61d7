//! Device intrinsics, inline PTX, shared and device-address arrays, assertions.

use super::arrays::ArraySource;
use super::*;
use crate::intrinsics::{AtomicAccess, MemoryOrdering, OrderingArgument};
use crate::ir::PtxOperand;

/// What `array_parameter_copy` returns: the local array, the parameter's pointer, its
/// length and whether it may be written.
type ArrayParameterCopy = (Handle<LocalVariable>, Handle<Expression>, u32, bool);
/// An in/out register list standing for an array parameter: (the local copy, the
/// parameter's pointer, the length), copied back after the instruction.
type WriteBack = (Handle<LocalVariable>, Handle<Expression>, u32);

impl Lowerer<'_, '_> {
    /// An intrinsic with an effect runs as a statement; its value (if wanted) is read from
    /// a local.
    pub(super) fn intrinsic(
        &mut self,
        expr: &Expr,
        intrinsic: Intrinsic,
        args: &[Expr],
        block: &mut Block,
        wants_value: bool,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
        if intrinsic == Intrinsic::TensorMapAddress {
            return self.tensor_map_address(args, expr.span).map(Some);
        }
        let (intrinsic, args) = match intrinsic {
            Intrinsic::OrderedAtomic { access, .. } => {
                let (ordering, values) = memory_ordering(intrinsic, access, args, expr.span)?;
                let ordered = Intrinsic::OrderedAtomic {
                    access,
                    ordering: Some(ordering),
                };
                (ordered, values)
            }
            _ => (intrinsic, args),
        };
        let mut arguments = Vec::new();
        for arg in args {
            let handle = match &arg.kind {
                ExprKind::Reference { place, .. } => match &place.kind {
                    ExprKind::Index { base, index } => self.element_pointer(base, index, block)?,
                    _ => {
                        return Err(LowerError::new(
                            arg.span,
                            format!("`{}` applies to slice elements", intrinsic.name()),
                        ))
                    }
                },
                _ => self.expr(arg, block)?,
            };
            arguments.push(handle);
        }
        let result = match (
            wants_value && !intrinsic.is_statement(),
            self.types.expr(expr),
        ) {
            (true, Some(ty)) => {
                let ty = self.scalar_type(ty);
                Some(self.local(intrinsic.name(), ty, expr.span))
            }
            _ => None,
        };
        block.push(
            Statement::Intrinsic {
                intrinsic,
                arguments,
                result,
            },
            expr.span,
        );
        Ok(result.map(|local| self.load_local(local, expr.span)))
    }

    /// Inline PTX runs as a statement; its result (if any) goes to a local: a scalar, or a
    /// tuple whose fields are the instruction's output operands in order.
    pub(super) fn inline_ptx(
        &mut self,
        expr: &Expr,
        template: &str,
        args: &[Expr],
        block: &mut Block,
        wants_value: bool,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
        let mut arguments = Vec::new();
        let mut write_backs = Vec::new();
        for arg in args {
            arguments.push(self.ptx_operand(arg, block, &mut write_backs)?);
        }
        // A typed operation's text comes from the operation, once it is checked.
        let op = match &expr.kind {
            ExprKind::InlinePtx { op: Some(call), .. } => {
                Some(self.tensor_op(call, args, &mut arguments, expr.span)?)
            }
            _ => None,
        };
        let template = match &op {
            Some(op) => op.template(),
            None => template.to_owned(),
        };
        let template = template.as_str();
        let tuple = match &expr.kind {
            ExprKind::InlinePtx {
                result: Some(ast::ValueType::Tuple(elements)),
                ..
            } => Some(elements),
            _ => None,
        };
        let result = match (wants_value, tuple, self.types.expr(expr)) {
            // Several outputs: a tuple local, one field per output operand.
            (true, Some(elements), _) => {
                let library = self.program.library;
                let scalars = elements
                    .iter()
                    .map(|element| library.scalar(self.spec, element, expr.span))
                    .collect::<Result<Vec<_>, _>>()?;
                let layout = crate::layout::tuple_layout(&scalars).ok_or_else(|| {
                    LowerError::new(expr.span, "this `ptx!` has too many outputs for a tuple")
                })?;
                let ty = self.struct_type(layout.name, expr.span)?;
                Some(self.local("ptx.results", ty, expr.span))
            }
            (true, None, Some(ty)) => {
                let ty = self.scalar_type(ty);
                Some(self.local("ptx.result", ty, expr.span))
            }
            _ => None,
        };
        let results = match (tuple, result) {
            (Some(elements), _) if wants_value => elements.len(),
            (_, Some(_)) => 1,
            _ => 0,
        };
        check_ptx_operands(template, results + args.len(), expr.span)?;
        block.push(
            Statement::InlinePtx {
                template: template.to_owned(),
                arguments,
                result,
                op,
            },
            expr.span,
        );
        for (local, pointer, len) in write_backs {
            self.copy_array(ArraySource::Local(local), pointer, len, expr.span, block);
        }
        Ok(result.map(|local| self.load_local(local, expr.span)))
    }

    /// An argument of `ptx!`: a local array (`acc`, or `&mut acc` read and written) or an
    /// array parameter (copied in, and for an in/out list added to `write_backs`) is a
    /// register list, anything else a scalar.
    fn ptx_operand(
        &mut self,
        arg: &Expr,
        block: &mut Block,
        write_backs: &mut Vec<WriteBack>,
    ) -> Result<PtxOperand, LowerError> {
        let (place, read_write) = match &arg.kind {
            ExprKind::Reference {
                mutable: true,
                place,
            } => (&**place, true),
            _ => (arg, false),
        };
        if let Some((local, _)) = self.array_binding(place) {
            return Ok(PtxOperand::Array { local, read_write });
        }
        if let Some((local, pointer, len, mutable)) = self.array_parameter_copy(place, block)? {
            // `acc` of an `acc: &mut [T; N]` parameter is the caller's array, in/out.
            let read_write = read_write || mutable;
            if read_write {
                // Written back once the instruction has replaced the registers.
                write_backs.push((local, pointer, len));
            }
            return Ok(PtxOperand::Array { local, read_write });
        }
        Ok(PtxOperand::Value(self.expr(arg, block)?))
    }

    /// An array parameter of a `#[device]` function (`acc: &mut [f32; 64]`) named as a
    /// `ptx!` register list: its elements copied into a local array, which the template
    /// names, the parameter's pointer, for the copy back of an in/out list, and whether
    /// the parameter may be written (`&mut [T; N]`, or `[T; N]`: the function's own copy). Once the
    /// call inlines, the copies are register moves the compiler removes (as CUTLASS's
    /// fragment references compile to the caller's registers).
    fn array_parameter_copy(
        &mut self,
        place: &Expr,
        block: &mut Block,
    ) -> Result<Option<ArrayParameterCopy>, LowerError> {
        let ExprKind::Var(name) = &place.kind else {
            return Ok(None);
        };
        let Some(Binding::ArrayArgument(index, len)) = self.scopes.lookup(name) else {
            return Ok(None);
        };
        let span = place.span;
        let argument_ty = self.function.arguments[index as usize].ty;
        let TypeInner::Pointer {
            base: array_ty,
            mutable,
            ..
        } = self.program.module.types[argument_ty].inner
        else {
            return Err(LowerError::new(
                span,
                "internal: an array parameter that is no pointer",
            ));
        };
        let pointer = self.expr_node(Expression::FunctionArgument(index), span);
        let local = self.local("ptx.registers", array_ty, span);
        let target = self.expr_node(Expression::LocalPointer(local), span);
        self.copy_array(ArraySource::Pointer(pointer), target, len, span, block);
        Ok(Some((local, pointer, len, mutable)))
    }

    /// `let name = shared_array::<T>(len);` or `dynamic_shared::<T>()`: a shared variable
    /// of the module, bound to `name`. The length must be a constant of the specialisation.
    pub(super) fn shared_let(
        &mut self,
        name: &str,
        intrinsic: Intrinsic,
        elem: &ast::ValueType,
        args: &[Expr],
        span: Span,
    ) -> Result<(), LowerError> {
        let elem = self.program.library.scalar(self.spec, elem, span)?;
        let elem = self.scalar_type(elem);
        let len = match (intrinsic, args.first()) {
            (Intrinsic::SharedArray, Some(len)) => {
                let value = self.constant_value(len)?;
                let len = u32::try_from(value)
                    .ok()
                    .filter(|&l| l > 0)
                    .ok_or_else(|| {
                        LowerError::new(
                            len.span,
                            format!("a shared array holds 1 to 2^32-1 elements, not {value}"),
                        )
                    })?;
                Some(len)
            }
            _ => None,
        };
        let shared = self.program.module.shared.append(SharedVariable {
            name: name.to_owned(),
            elem,
            len,
        });
        self.scopes.bind(name, Binding::Shared(shared));
        Ok(())
    }

    /// `let name = unsafe { slice_at::<T>(address, len) };` (or `slice_at_mut`): the slice
    /// of `len` elements at `address`, both evaluated once, here.
    pub(super) fn slice_at_let(
        &mut self,
        name: &str,
        intrinsic: Intrinsic,
        elem: &ast::ValueType,
        args: &[Expr],
        span: Span,
        block: &mut Block,
    ) -> Result<(), LowerError> {
        let Intrinsic::SliceAt { mutable } = intrinsic else {
            return Err(LowerError::new(span, "not a `slice_at`"));
        };
        let [address, length] = args else {
            return Err(LowerError::new(
                span,
                "`slice_at` takes the address and the number of elements",
            ));
        };
        let elem = self.program.library.scalar(self.spec, elem, span)?;
        let elem = self.scalar_type(elem);
        let address = self.expr(address, block)?;
        let address = self.temporary(
            &format!("{name}.address"),
            address,
            Scalar::Usize,
            span,
            block,
        );
        let length = self.expr(length, block)?;
        let length = self.temporary(&format!("{name}.len"), length, Scalar::Usize, span, block);
        self.scopes.bind(
            name,
            Binding::RawSlice {
                address,
                length,
                elem,
                mutable,
            },
        );
        Ok(())
    }

    /// `assert!(cond, ..)`: if `cond` is false (and, for `debug_assert!`, debug assertions
    /// are on), print the user's message and trap.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn assertion(
        &mut self,
        cond: &Expr,
        text: &str,
        message: &Option<(Vec<ast::FormatPiece>, Vec<Expr>)>,
        debug_only: bool,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let holds = self.expr(cond, out)?;
        let mut failed = self.expr_node(
            Expression::Unary {
                op: ast::UnaryOp::Not,
                operand: holds,
            },
            span,
        );
        if debug_only {
            let enabled =
                self.expr_node(Expression::CompileFlag(CompileFlag::DebugAssertions), span);
            failed = self.expr_node(
                Expression::Logical {
                    and: true,
                    left: enabled,
                    right: failed,
                },
                span,
            );
        }
        let mut report = Block::new();
        if let Some((pieces, args)) = message {
            let mut arguments = Vec::new();
            for arg in args {
                arguments.push(self.expr(arg, &mut report)?);
            }
            let mut pieces = pieces.clone();
            pieces.push(ast::FormatPiece::Text("\n".into()));
            report.push(Statement::Print { pieces, arguments }, span);
        }
        report.push(
            Statement::Trap {
                message: format!("assertion failed: {text}"),
            },
            span,
        );
        out.push(
            Statement::If {
                condition: failed,
                accept: report,
                reject: Block::new(),
            },
            span,
        );
        Ok(())
    }
}

/// The ordering and scope of an ordered atomic, its last two arguments, which must name
/// variants (`Ordering::Acquire`, `Scope::Device`): they choose the instruction. Returns them
/// with the other arguments.
fn memory_ordering<'a>(
    intrinsic: Intrinsic,
    access: AtomicAccess,
    args: &'a [Expr],
    span: Span,
) -> Result<(MemoryOrdering, &'a [Expr]), LowerError> {
    let name = intrinsic.name();
    let [values @ .., order, scope] = args else {
        return Err(LowerError::new(
            span,
            format!("`{name}` takes the ordering and the scope last: `{name}(.., Ordering::Acquire, Scope::Device)`"),
        ));
    };
    let variant = |arg: &'a Expr| match &arg.kind {
        ExprKind::EnumVariant { variant, .. } => Some(variant.as_str()),
        _ => None,
    };
    let ordering = crate::intrinsics::memory_ordering(name, access, variant(order), variant(scope))
        .map_err(|error| {
            let at = match error.argument {
                OrderingArgument::Order => order.span,
                OrderingArgument::Scope => scope.span,
            };
            LowerError::new(at, error.message)
        })?;
    Ok((ordering, values))
}

/// Every `$N` of a `ptx!` template names an operand: the result's first (one per tuple
/// element), then one per argument (a register array is one).
fn check_ptx_operands(template: &str, operands: usize, span: Span) -> Result<(), LowerError> {
    for piece in crate::ptx_template::pieces(template) {
        let crate::ptx_template::TemplatePiece::Operand(number, text) = piece else {
            continue;
        };
        if number.is_none_or(|n| n >= operands) {
            return Err(LowerError::new(
                span,
                format!(
                    "`${text}` names no operand of this `ptx!`: it has {operands} (`$0`..`${}`: the result first, one per tuple element, then one per argument, a local array counting as one register list)",
                    operands.saturating_sub(1)
                ),
            ));
        }
    }
    Ok(())
}
