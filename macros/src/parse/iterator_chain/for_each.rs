//! `chain.for_each(|v| body);`: the `for` loop it means, `for v in chain { body; }`.
//!
//! The closure runs once per item in order, as the loop's body does; what it captures it
//! reads and writes in place, as the body does. Two closures would mean something else
//! as a loop, and are refused: a `move` closure (it writes its own copies of what it
//! captures) and one with `return` (which leaves the closure, where the loop's would
//! leave the function).

use syn::visit_mut::VisitMut;

use super::super::parser::Parser;
use cudajit_core::ast::Stmt;

/// Whether `call` is `chain.for_each(..)` on an iterator chain.
pub(in crate::parse) fn is_for_each(call: &syn::ExprMethodCall) -> bool {
    call.method == "for_each" && super::is_iterator(&call.receiver)
}

impl Parser<'_> {
    /// `chain.for_each(|v| body)` as a statement: the loop `for v in chain { body; }`.
    pub(in crate::parse) fn for_each(&mut self, call: &syn::ExprMethodCall) -> Option<Stmt> {
        let closure = match call.args.iter().collect::<Vec<_>>()[..] {
            [syn::Expr::Closure(closure)] if closure.inputs.len() == 1 => closure,
            _ => {
                self.errors.at(
                    &call.args,
                    "`for_each` in a kernel takes a closure of one parameter, `.for_each(|v| ..)`: write instead a `for` loop, `for v in x.iter() { .. }`",
                );
                return None;
            }
        };
        if let Some(token) = closure.capture {
            self.errors.at(
                token,
                "a `move` closure in `for_each` writes its own copies of what it captures: remove `move`, or write a `for` loop",
            );
            return None;
        }
        let mut returns = Returns(None);
        returns.visit_expr_mut(&mut (*closure.body).clone());
        if let Some(at) = returns.0 {
            self.errors.at(
                at,
                "`return` in a `for_each` closure goes on with the next item: write instead a `for` loop with `continue`",
            );
            return None;
        }
        // A typed parameter (`|v: &f32|`) binds as its pattern; rustc checked the type.
        let pat = match &closure.inputs[0] {
            syn::Pat::Type(typed) => &*typed.pat,
            other => other,
        };
        let (receiver, body) = (&call.receiver, &closure.body);
        // The loop's own tokens at `for_each`, so what it reports points there.
        let tokens = quote::quote_spanned!(call.method.span()=> for #pat in #receiver { #body; });
        let Ok(for_loop) = syn::parse2::<syn::ExprForLoop>(tokens) else {
            self.errors.at(
                call,
                "this `for_each` could not be read as a `for` loop: write the `for` loop",
            );
            return None;
        };
        self.for_loop(&for_loop)
    }
}

/// The first `return` of a closure's body, outside closures nested in it.
struct Returns(Option<syn::ExprReturn>);

impl VisitMut for Returns {
    fn visit_expr_return_mut(&mut self, node: &mut syn::ExprReturn) {
        self.0.get_or_insert_with(|| node.clone());
    }

    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
}
