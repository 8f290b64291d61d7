//! The first pass: every handle points into its arena, and expressions only refer to
//! earlier expressions (so expression trees are acyclic). Later passes rely on this and
//! index arenas without checking.

use super::error::ValidationErrorKind as Kind;
use crate::ir::{Block, Expression, Function, Module, Statement, TypeInner};

pub(super) fn check_types(module: &Module) -> Result<(), Kind> {
    for (handle, ty) in module.types.iter() {
        let bases = match &ty.inner {
            TypeInner::Scalar(_) | TypeInner::TensorMap => vec![],
            TypeInner::Pointer { base, .. }
            | TypeInner::Slice { base, .. }
            | TypeInner::Array { base, .. } => vec![*base],
            TypeInner::Struct { members, .. } => members.iter().map(|m| m.ty).collect(),
        };
        for base in bases {
            // Types refer only to earlier types, so the type graph is acyclic.
            if base.index() >= handle.index() {
                return Err(Kind::BadHandle {
                    what: "type",
                    handle: base.index(),
                });
            }
        }
    }
    Ok(())
}

pub(super) fn check_function(module: &Module, function: &Function) -> Result<(), Kind> {
    let type_ok = |h: crate::ir::Handle<crate::ir::Type>| {
        if module.types.try_get(h).is_some() {
            Ok(())
        } else {
            Err(Kind::BadHandle {
                what: "type",
                handle: h.index(),
            })
        }
    };
    for argument in &function.arguments {
        type_ok(argument.ty)?;
    }
    if let Some(result) = function.result {
        type_ok(result)?;
    }
    for (_, local) in function.locals.iter() {
        type_ok(local.ty)?;
    }
    for (handle, expression) in function.expressions.iter() {
        for operand in operands(expression) {
            if operand.index() >= handle.index() {
                return Err(Kind::ForwardReference {
                    expression: handle.index(),
                    operand: operand.index(),
                });
            }
        }
        match expression {
            Expression::FunctionArgument(index)
            | Expression::TensorMapAddress { argument: index }
                if *index as usize >= function.arguments.len() =>
            {
                return Err(Kind::BadArgument { index: *index })
            }
            Expression::SharedSlice(shared) if !module.shared.contains(*shared) => {
                return Err(Kind::BadHandle {
                    what: "shared variable",
                    handle: shared.index(),
                })
            }
            Expression::LocalLoad(local)
            | Expression::LocalPointer(local)
            | Expression::ArrayElement { local, .. }
                if !function.locals.contains(*local) =>
            {
                return Err(Kind::BadHandle {
                    what: "local variable",
                    handle: local.index(),
                })
            }
            _ => {}
        }
    }
    check_block(module, function, &function.body)
}

fn check_block(module: &Module, function: &Function, block: &Block) -> Result<(), Kind> {
    let expr_ok = |h: crate::ir::Handle<Expression>| {
        if function.expressions.contains(h) {
            Ok(())
        } else {
            Err(Kind::BadHandle {
                what: "expression",
                handle: h.index(),
            })
        }
    };
    // A call's or intrinsic's optional result local.
    let result_ok = |result: &Option<crate::ir::Handle<crate::ir::LocalVariable>>| match result {
        Some(local) if !function.locals.contains(*local) => Err(Kind::BadHandle {
            what: "local variable",
            handle: local.index(),
        }),
        _ => Ok(()),
    };
    for statement in &block.statements {
        match statement {
            Statement::LocalStore { local, value } => {
                expr_ok(*value)?;
                if !function.locals.contains(*local) {
                    return Err(Kind::BadHandle {
                        what: "local variable",
                        handle: local.index(),
                    });
                }
            }
            Statement::Store { pointer, value } => {
                expr_ok(*pointer)?;
                expr_ok(*value)?;
            }
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                expr_ok(*condition)?;
                check_block(module, function, accept)?;
                check_block(module, function, reject)?;
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                check_block(module, function, body)?;
                check_block(module, function, continuing)?;
            }
            Statement::Return { value: Some(value) } => expr_ok(*value)?,
            Statement::VectorLoad { pointer, results } => {
                expr_ok(*pointer)?;
                for local in results {
                    if !function.locals.contains(*local) {
                        return Err(Kind::BadHandle {
                            what: "local variable",
                            handle: local.index(),
                        });
                    }
                }
            }
            Statement::VectorStore { pointer, values } => {
                expr_ok(*pointer)?;
                for value in values {
                    expr_ok(*value)?;
                }
            }
            Statement::Print { arguments, .. } => {
                for argument in arguments {
                    expr_ok(*argument)?;
                }
            }
            Statement::Trap { .. } => {}
            Statement::InlinePtx {
                arguments, result, ..
            } => {
                for argument in arguments {
                    match argument {
                        crate::ir::PtxOperand::Value(value) => expr_ok(*value)?,
                        crate::ir::PtxOperand::Array { local, .. } => result_ok(&Some(*local))?,
                    }
                }
                result_ok(result)?;
            }
            Statement::Intrinsic {
                arguments, result, ..
            } => {
                for argument in arguments {
                    expr_ok(*argument)?;
                }
                result_ok(result)?;
            }
            Statement::Call {
                function: callee,
                arguments,
                result,
            } => {
                if !module.functions.contains(*callee) {
                    return Err(Kind::BadHandle {
                        what: "function",
                        handle: callee.index(),
                    });
                }
                for argument in arguments {
                    expr_ok(*argument)?;
                }
                result_ok(result)?;
            }
            Statement::CallExtern {
                function: callee,
                arguments,
                result,
            } => {
                if !module.externs.contains(*callee) {
                    return Err(Kind::BadHandle {
                        what: "extern function",
                        handle: callee.index(),
                    });
                }
                for argument in arguments {
                    expr_ok(*argument)?;
                }
                result_ok(result)?;
            }
            Statement::Block(inner) => check_block(module, function, inner)?,
            Statement::Break { .. } | Statement::Continue { .. } | Statement::Return { .. } => {}
        }
    }
    Ok(())
}

/// The expressions an expression reads.
pub(super) fn operands(
    expression: &Expression,
) -> impl Iterator<Item = crate::ir::Handle<Expression>> {
    let (a, b, c) = match *expression {
        Expression::Load { pointer } => (Some(pointer), None, None),
        Expression::ElementPointer { base, index } => (Some(base), Some(index), None),
        Expression::SliceLength { slice } => (Some(slice), None, None),
        Expression::Unary { operand, .. } => (Some(operand), None, None),
        Expression::Binary { left, right, .. } | Expression::Logical { left, right, .. } => {
            (Some(left), Some(right), None)
        }
        Expression::Cast { value, .. } => (Some(value), None, None),
        Expression::Math {
            argument,
            arg1,
            arg2,
            ..
        } => (Some(argument), arg1, arg2),
        Expression::ArrayElement { index, .. } => (Some(index), None, None),
        Expression::MemberElement { array, index } => (Some(array), Some(index), None),
        Expression::FieldPointer { base, .. } => (Some(base), None, None),
        Expression::ValuePointer { value } => (Some(value), None, None),
        Expression::RawSlice {
            address, length, ..
        } => (Some(address), Some(length), None),
        Expression::SubSlice { base, start, end } => (Some(base), Some(start), end),
        Expression::Literal(_)
        | Expression::FunctionArgument(_)
        | Expression::TensorMapAddress { .. }
        | Expression::LocalLoad(_)
        | Expression::SharedSlice(_)
        | Expression::LocalPointer(_)
        | Expression::CompileFlag(_)
        | Expression::Builtin(_) => (None, None, None),
    };
    a.into_iter().chain(b).chain(c)
}
