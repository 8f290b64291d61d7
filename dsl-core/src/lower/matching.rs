//! `match` on integers and enums: arms become a chain of tests.

use super::expr::contains_call;
use super::*;

impl Lowerer<'_, '_> {
    /// `match`: the scrutinee is evaluated once, then the arms are tested in order as an
    /// `if`/`else if` chain; the chosen arm's value (if any) goes to `result`.
    pub(super) fn lower_match(
        &mut self,
        scrutinee: &Expr,
        arms: &[ast::MatchArm],
        result: Option<Handle<LocalVariable>>,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let ty = self.type_of(scrutinee)?;
        let value = self.expr(scrutinee, out)?;
        let subject = self.temporary("match.subject", value, ty, span, out);
        let mut chain = Block::new();
        for arm in arms.iter().rev() {
            let mut body = Block::new();
            self.scopes.push();
            let lowered = match result {
                Some(result) => self.block_value_into(&arm.body, &mut body).map(|value| {
                    body.push(
                        Statement::LocalStore {
                            local: result,
                            value,
                        },
                        arm.span,
                    );
                }),
                None => self.block_into(&arm.body, &mut body),
            };
            self.scopes.pop();
            lowered?;
            let mut test_block = Block::new();
            let mut condition = self.arm_test(subject, ty, &arm.patterns, arm.span)?;
            if let Some(guard) = &arm.guard {
                condition = if contains_call(guard) {
                    self.guarded_logical(true, condition, guard, arm.span, &mut test_block)?
                } else {
                    let g = self.expr(guard, &mut test_block)?;
                    self.expr_node(
                        Expression::Logical {
                            and: true,
                            left: condition,
                            right: g,
                        },
                        arm.span,
                    )
                };
            }
            test_block.push(
                Statement::If {
                    condition,
                    accept: body,
                    reject: chain,
                },
                arm.span,
            );
            chain = test_block;
        }
        out.push(Statement::Block(chain), span);
        Ok(())
    }

    /// Whether `subject` matches any of `patterns`.
    pub(super) fn arm_test(
        &mut self,
        subject: Handle<LocalVariable>,
        ty: Scalar,
        patterns: &[ast::Pattern],
        span: Span,
    ) -> Result<Handle<Expression>, LowerError> {
        let literal =
            |this: &mut Self, l: &ast::Literal| -> Result<Handle<Expression>, LowerError> {
                let value = match *l {
                    ast::Literal::Bool(b) => Literal::Bool(b),
                    ast::Literal::Int { value, .. } => Literal::Int { bits: value, ty },
                    ast::Literal::Float { .. } => {
                        return Err(LowerError::new(span, "float patterns are not supported"))
                    }
                };
                Ok(this.literal(value, span))
            };
        let mut test: Option<Handle<Expression>> = None;
        for pattern in patterns {
            let this_test = match pattern {
                ast::Pattern::Wildcard => self.literal(Literal::Bool(true), span),
                ast::Pattern::Variant {
                    ty: enum_ty,
                    variant,
                } => {
                    let library = self.program.library;
                    let value = library.variant(enum_ty, variant, span)?;
                    let v = self.load_local(subject, span);
                    let c = self.literal(value, span);
                    self.binary(BinaryOp::Eq, v, c, span)
                }
                ast::Pattern::Literal(l) => {
                    let v = self.load_local(subject, span);
                    let c = literal(self, l)?;
                    self.binary(BinaryOp::Eq, v, c, span)
                }
                ast::Pattern::Range {
                    start,
                    end,
                    inclusive,
                } => {
                    let v = self.load_local(subject, span);
                    let lo = literal(self, start)?;
                    let above = self.binary(BinaryOp::Ge, v, lo, span);
                    let v = self.load_local(subject, span);
                    let hi = literal(self, end)?;
                    let op = if *inclusive {
                        BinaryOp::Le
                    } else {
                        BinaryOp::Lt
                    };
                    let below = self.binary(op, v, hi, span);
                    self.expr_node(
                        Expression::Logical {
                            and: true,
                            left: above,
                            right: below,
                        },
                        span,
                    )
                }
            };
            test = Some(match test {
                None => this_test,
                Some(previous) => self.expr_node(
                    Expression::Logical {
                        and: false,
                        left: previous,
                        right: this_test,
                    },
                    span,
                ),
            });
        }
        test.ok_or_else(|| LowerError::new(span, "a `match` arm needs a pattern"))
    }
}
