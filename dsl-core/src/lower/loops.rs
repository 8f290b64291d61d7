//! Loops: `loop`, `while` and `for` over ranges become `Statement::Loop`s, with labels,
//! `break`/`continue` targets and the drops of the scopes they leave.

use super::*;

impl Lowerer<'_, '_> {
    /// Before a `break`/`continue` to `target`: the end of the droppable locals declared
    /// inside that loop.
    pub(super) fn drops_for_loop(
        &mut self,
        target: LoopId,
        out: &mut Block,
        span: Span,
    ) -> Result<(), LowerError> {
        match self.loops.iter().position(|(_, id)| *id == target) {
            Some(index) => self.drops_for_jump(index, out, span),
            None => Ok(()),
        }
    }

    pub(super) fn enter_loop(&mut self, label: &Option<String>) -> LoopId {
        let id = LoopId(self.next_loop);
        self.next_loop += 1;
        self.loops.push((label.clone(), id));
        id
    }

    pub(super) fn loop_target(
        &self,
        label: &Option<String>,
        span: Span,
        what: &str,
    ) -> Result<LoopId, LowerError> {
        let found = match label {
            None => self.loops.last(),
            Some(label) => self
                .loops
                .iter()
                .rev()
                .find(|(l, _)| l.as_deref() == Some(label.as_str())),
        };
        found.map(|(_, id)| *id).ok_or_else(|| match label {
            Some(label) => {
                LowerError::new(span, format!("`{what}` to unknown loop label `'{label}`"))
            }
            None => LowerError::new(span, format!("`{what}` outside of a loop")),
        })
    }

    /// `for var in start..end` (or `..=`, or `.step_by(step)`), lowered so that the loop
    /// never steps past the end of the range and never overflows the counter:
    ///
    /// ```text
    /// if start < end && step != 0 {            // `<=` for inclusive ranges
    ///     counter = start
    ///     loop { var = counter; body
    ///            continuing: if end - counter <= step { break }   // `<` inclusive
    ///                        counter += step }
    /// }
    /// ```
    ///
    /// The distance `end - counter` is computed unsigned, so signed ranges of any extent
    /// work. A zero step runs no iteration (Rust would panic). `.rev()` starts the counter
    /// at the last element (`end - 1`, or `end` inclusive), exits when `counter - start <
    /// step` and steps down: the same loop mirrored, as `for (i = n - 1; ; i -= s)` with
    /// the exit test before the decrement, so an unsigned counter never wraps below 0.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn for_loop(
        &mut self,
        stmt: &Stmt,
        label: &Option<String>,
        var: &str,
        range: &RangeExpr,
        body: &ast::Block,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let ty = self
            .types
            .binding(stmt)
            .ok_or_else(|| LowerError::new(span, "internal: `for` variable without a type"))?;
        let rspan = range.span;
        let start = self.expr(&range.start, out)?;
        let counter = self.temporary(&format!("{var}.counter"), start, ty, rspan, out);
        let end = self.expr(&range.end, out)?;
        let end = self.temporary(&format!("{var}.end"), end, ty, rspan, out);
        // `.rev()` counts down from the last element to the first, kept in `start`.
        let start = match range.reverse {
            true => {
                let first = self.load_local(counter, rspan);
                Some(self.temporary(&format!("{var}.start"), first, ty, rspan, out))
            }
            false => None,
        };
        let step = match &range.step {
            Some(step) => {
                let value = self.expr(step, out)?;
                Some(self.temporary(&format!("{var}.step"), value, Scalar::Usize, rspan, out))
            }
            None => None,
        };

        // Entry test.
        let first = self.load_local(counter, rspan);
        let last = self.load_local(end, rspan);
        let cmp = if range.inclusive {
            BinaryOp::Le
        } else {
            BinaryOp::Lt
        };
        let mut condition = self.binary(cmp, first, last, rspan);
        if let Some(step) = step {
            let step_value = self.load_local(step, rspan);
            let zero = self.int(0, Scalar::Usize, rspan);
            let nonzero = self.binary(BinaryOp::Ne, step_value, zero, rspan);
            condition = self.expr_node(
                Expression::Logical {
                    and: true,
                    left: condition,
                    right: nonzero,
                },
                rspan,
            );
        }

        // The entry test passed, so `end - 1` of an exclusive range cannot wrap.
        let mut entry = Block::new();
        if range.reverse {
            let mut last = self.load_local(end, rspan);
            if !range.inclusive {
                let one = self.int(1, ty, rspan);
                last = self.binary(BinaryOp::Sub, last, one, rspan);
            }
            entry.push(
                Statement::LocalStore {
                    local: counter,
                    value: last,
                },
                rspan,
            );
        }

        // Body: bind the user's variable to the counter, so assigning to a `mut` loop
        // variable does not change the iteration (as in Rust).
        let id = self.enter_loop(label);
        let mut loop_body = Block::new();
        let user_ty = self.scalar_type(ty);
        let user_var = self.local(var, user_ty, span);
        let current = self.load_local(counter, span);
        loop_body.push(
            Statement::LocalStore {
                local: user_var,
                value: current,
            },
            span,
        );
        self.scopes.push();
        self.scopes.bind(var, Binding::Local(user_var));
        let lowered = self.block_into(body, &mut loop_body);
        self.scopes.pop();
        self.loops.pop();
        lowered?;

        // Continuing: exit before the counter would pass the end, then step.
        let mut continuing = Block::new();
        let unsigned = ty.to_unsigned();
        let (high, low) = match start {
            Some(start) => (counter, start),
            None => (end, counter),
        };
        let high_value = self.load_local(high, rspan);
        let high_u = self.cast(high_value, unsigned, rspan);
        let low_value = self.load_local(low, rspan);
        let low_u = self.cast(low_value, unsigned, rspan);
        let distance = self.binary(BinaryOp::Sub, high_u, low_u, rspan);
        let (distance, step_value) = match step {
            Some(step) => {
                let wide = self.cast(distance, Scalar::Usize, rspan);
                (wide, self.load_local(step, rspan))
            }
            None => (distance, self.int(1, unsigned, rspan)),
        };
        // Down to `start` inclusive either way: the last value is `start` itself.
        let exit_op = if range.inclusive || range.reverse {
            BinaryOp::Lt
        } else {
            BinaryOp::Le
        };
        let done = self.binary(exit_op, distance, step_value, rspan);
        let mut exit = Block::new();
        exit.push(Statement::Break { target: id }, rspan);
        continuing.push(
            Statement::If {
                condition: done,
                accept: exit,
                reject: Block::new(),
            },
            rspan,
        );
        let counter_value = self.load_local(counter, rspan);
        let increment = match step {
            Some(step) => {
                let step_value = self.load_local(step, rspan);
                self.cast(step_value, ty, rspan)
            }
            None => self.int(1, ty, rspan),
        };
        let direction = if range.reverse {
            BinaryOp::Sub
        } else {
            BinaryOp::Add
        };
        let next = self.binary(direction, counter_value, increment, rspan);
        continuing.push(
            Statement::LocalStore {
                local: counter,
                value: next,
            },
            rspan,
        );

        let mut guarded = entry;
        guarded.push(
            Statement::Loop {
                id,
                body: loop_body,
                continuing,
            },
            span,
        );
        out.push(
            Statement::If {
                condition,
                accept: guarded,
                reject: Block::new(),
            },
            span,
        );
        Ok(())
    }
}
