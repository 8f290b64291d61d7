//! Calls of typed tensor-core operations (`wgmma::<bf16, false, false>(&mut acc, a, b,
//! true)`, `wgmma_wait_group::<1>()`): their generic arguments and operands, kept for
//! lowering, which resolves and checks them ([`cudajit_core::tensor_op`]).

use cudajit_core::ast::{Expr, ExprKind, TensorOpCall};
use cudajit_core::tensor_op::TensorOpName;

use super::parser::Parser;

impl Parser<'_> {
    pub(super) fn tensor_op(
        &mut self,
        call: &syn::ExprCall,
        name: TensorOpName,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        let callee = name.name();
        let arguments = match &*call.func {
            syn::Expr::Path(path) => path
                .path
                .segments
                .last()
                .map(|s| s.arguments.clone())
                .unwrap_or_default(),
            _ => syn::PathArguments::None,
        };
        let generic_args = self.generic_arguments(&arguments)?;
        let expected = usize::from(name.takes_type()) + name.consts();
        if generic_args.len() != expected {
            self.errors.at(
                &call.func,
                format!(
                    "`{callee}` is declared `{callee}{}{}`: give its {expected} generic argument(s)",
                    name.generics(),
                    name.parameters()
                ),
            );
            return None;
        }
        if call.args.len() != name.arity() {
            self.errors.at(
                call,
                format!(
                    "`{callee}` takes {} argument(s): `{callee}{}`",
                    name.arity(),
                    name.parameters()
                ),
            );
            return None;
        }
        // `&mut acc` passes a local array (or an array parameter) as in/out registers.
        let args: Vec<Option<Expr>> = call.args.iter().map(|e| self.call_argument(e)).collect();
        Some(Expr {
            kind: ExprKind::InlinePtx {
                result: None,
                template: String::new(),
                args: args.into_iter().collect::<Option<_>>()?,
                op: Some(Box::new(TensorOpCall { name, generic_args })),
            },
            span,
        })
    }
}
