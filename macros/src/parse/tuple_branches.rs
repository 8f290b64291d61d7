//! Tuples given by `if`, `match` and blocks: the syntax is rewritten so that every branch
//! ends by assigning its tuple's elements to temporaries instead (see
//! [`Parser::branch_tuple`](super::parser::Parser)), which the kernel language can express.

/// What branches that give a tuple end in, and the two rewrites for a call's result.
pub(super) const BRANCH_CALL: &str = "the branches of an `if`, `match` or block that gives a tuple end in tuple expressions `(a, b)`: to give a call's result (`vload4(x, i)`, a `#[device]` function), bind it first and end the branch in its elements, `{ let v = vload4(x, i); (v.0, v.1, v.2, v.3) }`, or choose the argument instead, `vload4(x, if p { i } else { 0 })`";

/// The number of elements of the tuple that ends the branches of `expr` (the first found).
pub(super) fn tail_tuple_arity(expr: &syn::Expr) -> Option<usize> {
    match expr {
        syn::Expr::Tuple(tuple) if !tuple.elems.is_empty() => Some(tuple.elems.len()),
        syn::Expr::Paren(paren) => tail_tuple_arity(&paren.expr),
        syn::Expr::Block(block) => block_tail_arity(&block.block),
        syn::Expr::If(expr_if) => block_tail_arity(&expr_if.then_branch).or_else(|| {
            expr_if
                .else_branch
                .as_ref()
                .and_then(|(_, e)| tail_tuple_arity(e))
        }),
        syn::Expr::Match(expr_match) => expr_match
            .arms
            .iter()
            .find_map(|arm| tail_tuple_arity(&arm.body)),
        _ => None,
    }
}

fn block_tail_arity(block: &syn::Block) -> Option<usize> {
    match block.stmts.last()? {
        syn::Stmt::Expr(expr, None) => tail_tuple_arity(expr),
        _ => None,
    }
}

/// `expr` with every branch's final tuple `(x, y)` replaced by `names[0] = x; names[1] = y;`.
pub(super) fn assign_tails(
    expr: &syn::Expr,
    names: &[syn::Ident],
    errors: &mut crate::errors::Errors,
) -> Option<syn::Expr> {
    let mut expr = expr.clone();
    match &mut expr {
        syn::Expr::Block(block) => assign_block_tail(&mut block.block, names, errors)?,
        syn::Expr::If(expr_if) => {
            assign_block_tail(&mut expr_if.then_branch, names, errors)?;
            match &mut expr_if.else_branch {
                Some((_, else_branch)) => {
                    **else_branch = assign_tails(else_branch, names, errors)?;
                }
                None => {
                    errors.at(
                        &*expr_if,
                        "an `if` that gives a tuple needs an `else` that gives one too",
                    );
                    return None;
                }
            }
        }
        syn::Expr::Match(expr_match) => {
            for arm in &mut expr_match.arms {
                let body = &*arm.body;
                let block: syn::Block = syn::parse_quote!({ #body });
                let mut block = block;
                assign_block_tail(&mut block, names, errors)?;
                *arm.body = syn::Expr::Block(syn::ExprBlock {
                    attrs: Vec::new(),
                    label: None,
                    block,
                });
                arm.comma = Some(Default::default());
            }
        }
        syn::Expr::Paren(paren) => return assign_tails(&paren.expr, names, errors),
        other @ (syn::Expr::Call(_) | syn::Expr::MethodCall(_)) => {
            errors.at(&*other, BRANCH_CALL);
            return None;
        }
        other => {
            errors.at(
                &*other,
                "this branch must end in a tuple of the same length: `(a, b)`",
            );
            return None;
        }
    }
    Some(expr)
}

/// The block's final expression, a tuple or a nested `if`/`match`/block, made assignments.
fn assign_block_tail(
    block: &mut syn::Block,
    names: &[syn::Ident],
    errors: &mut crate::errors::Errors,
) -> Option<()> {
    let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() else {
        errors.at(
            &*block,
            "this branch must end in a tuple without `;`: `(a, b)`",
        );
        return None;
    };
    let tail = tail.clone();
    block.stmts.pop();
    match &tail {
        syn::Expr::Tuple(tuple) => {
            if tuple.elems.len() != names.len() {
                errors.at(
                    tuple,
                    format!(
                        "this tuple has {} elements, the other branches {}",
                        tuple.elems.len(),
                        names.len()
                    ),
                );
                return None;
            }
            for (name, value) in names.iter().zip(&tuple.elems) {
                block.stmts.push(syn::parse_quote!(#name = #value;));
            }
        }
        syn::Expr::Path(_) => {
            // A tuple local: its elements.
            for (index, name) in names.iter().enumerate() {
                let index = syn::Index::from(index);
                block.stmts.push(syn::parse_quote!(#name = #tail.#index;));
            }
        }
        other => {
            let rewritten = assign_tails(other, names, errors)?;
            block.stmts.push(syn::Stmt::Expr(rewritten, None));
        }
    }
    Some(())
}
