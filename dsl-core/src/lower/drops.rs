//! Scope ends: a local of a struct with a drop hook (`#[device_drop(f)]`) is passed to `f`
//! (`&mut`) where its scope ends — at the end of its block, and before a `return`,
//! `break` or `continue` that leaves the block — as C++ runs a destructor there. NCCL's
//! LSA barrier sessions store their epoch for the next kernel that way.
//!
//! A droppable local is never copied (its hook would run twice on the same session):
//! copying one (`let b = a;`, passing it by value, assigning it) is an error. Returning one
//! moves it out: the function's caller owns it then, and the hook runs in the caller.

use super::{Binding, Lowerer};
use crate::ast::{Expr, ExprKind, ParamType, ValueType};
use crate::ir::{Block, Expression, Handle, LocalVariable, Statement};
use crate::lower::LowerError;
use crate::Span;

/// The droppable locals of one lexical scope.
#[derive(Debug)]
pub(super) struct DropFrame {
    /// Each local with its hook's name, in declaration order.
    locals: Vec<(Handle<LocalVariable>, &'static str)>,
    /// Loops enclosing the scope when it opened: `break`/`continue` to loop `i` leaves the
    /// frames opened inside it (`loops > i`).
    loops: usize,
    /// Whether droppable locals may live here: not in blocks that end in a value, whose
    /// value is read after the block.
    allows: bool,
}

impl Lowerer<'_, '_> {
    /// Opens a scope's frame; `allows` says whether droppable locals may be declared in it.
    pub(super) fn open_drop_scope(&mut self, allows: bool) {
        self.drops.push(DropFrame {
            locals: Vec::new(),
            loops: self.loops.len(),
            allows,
        });
    }

    /// Closes the innermost scope, ending its droppable locals in `out`, last declared
    /// first.
    pub(super) fn close_drop_scope(
        &mut self,
        out: &mut Block,
        span: Span,
    ) -> Result<(), LowerError> {
        let Some(frame) = self.drops.pop() else {
            return Ok(());
        };
        for &(local, hook) in frame.locals.iter().rev() {
            self.call_hook(hook, local, out, span)?;
        }
        Ok(())
    }

    /// Closes the innermost scope without ending anything (after an error, or when its
    /// locals were ended already).
    pub(super) fn discard_drop_scope(&mut self) {
        self.drops.pop();
    }

    /// Whether any droppable local is live.
    pub(super) fn has_live_drops(&self) -> bool {
        self.drops.iter().any(|frame| !frame.locals.is_empty())
    }

    /// Before a `return`: ends every live droppable local, innermost first, but `moved`
    /// (the local the function returns).
    pub(super) fn drops_for_return(
        &mut self,
        moved: Option<Handle<LocalVariable>>,
        out: &mut Block,
        span: Span,
    ) -> Result<(), LowerError> {
        self.end_locals(|_| true, moved, out, span)
    }

    /// Before a `break` or `continue` to the loop at `loop_index` in `self.loops`: ends the
    /// droppable locals of the scopes opened inside that loop.
    pub(super) fn drops_for_jump(
        &mut self,
        loop_index: usize,
        out: &mut Block,
        span: Span,
    ) -> Result<(), LowerError> {
        self.end_locals(|frame| frame.loops > loop_index, None, out, span)
    }

    /// Ends the droppable locals of the open frames `leaving` selects, innermost first,
    /// but `moved`; the frames stay open (the code after the jump is another path).
    fn end_locals(
        &mut self,
        leaving: impl Fn(&DropFrame) -> bool,
        moved: Option<Handle<LocalVariable>>,
        out: &mut Block,
        span: Span,
    ) -> Result<(), LowerError> {
        let live: Vec<_> = self
            .drops
            .iter()
            .rev()
            .filter(|frame| leaving(frame))
            .flat_map(|frame| frame.locals.iter().rev().copied())
            .filter(|(local, _)| Some(*local) != moved)
            .collect();
        for (local, hook) in live {
            self.call_hook(hook, local, out, span)?;
        }
        Ok(())
    }

    /// Registers the new local `local` of struct `name` if the struct has a drop hook.
    pub(super) fn register_drop(
        &mut self,
        local: Handle<LocalVariable>,
        name: &str,
        span: Span,
    ) -> Result<(), LowerError> {
        let Some(hook) = self.drop_hook(name, span)? else {
            return Ok(());
        };
        let Some(frame) = self.drops.last_mut() else {
            return Ok(());
        };
        if !frame.allows {
            return Err(LowerError::new(
                span,
                format!(
                    "a `{name}` ends where its scope ends (`{hook}` runs there): declare it in a block that ends in a statement, not in one that gives a value"
                ),
            ));
        }
        frame.locals.push((local, hook));
        Ok(())
    }

    /// The name of the hook of struct `name`, if it has one; it must be an
    /// `#[extern_device]` function taking `&mut` the struct.
    pub(super) fn drop_hook(
        &mut self,
        name: &str,
        span: Span,
    ) -> Result<Option<&'static str>, LowerError> {
        let library = self.program.library;
        let Some(layout) = library.get_struct(name) else {
            return Ok(None);
        };
        let Some(hook) = layout.drop.map(|hook| hook.function()) else {
            return Ok(None);
        };
        let source = library.get(hook.name).ok_or_else(|| {
            LowerError::new(
                span,
                format!("the drop hook `{}` of `{name}` is not reachable", hook.name),
            )
        })?;
        let takes_mut_self = matches!(
            source.params.as_slice(),
            [crate::ast::Param {
                ty: ParamType::Reference {
                    target: ValueType::Struct(target),
                    len: None,
                    mutable: true,
                },
                ..
            }] if target == name
        );
        if source.external.is_none() || !takes_mut_self || source.result.is_some() {
            return Err(LowerError::new(
                span,
                format!(
                    "the drop hook of `{name}` must be an `#[extern_device]` function `fn {}(value: &mut {name})`",
                    hook.name
                ),
            ));
        }
        Ok(Some(hook.name))
    }

    /// The droppable local `expr` names, if it names one.
    pub(super) fn droppable_local(&self, expr: &Expr) -> Option<Handle<LocalVariable>> {
        let ExprKind::Var(name) = &expr.kind else {
            return None;
        };
        let Some(Binding::Local(local)) = self.scopes.lookup(name) else {
            return None;
        };
        self.drops
            .iter()
            .flat_map(|frame| frame.locals.iter())
            .any(|(l, _)| *l == local)
            .then_some(local)
    }

    /// An error if `expr` copies a droppable local.
    pub(super) fn reject_copy(&self, expr: &Expr) -> Result<(), LowerError> {
        match (&expr.kind, self.droppable_local(expr)) {
            (ExprKind::Var(name), Some(_)) => Err(LowerError::new(
                expr.span,
                format!(
                    "`{name}` ends where its scope ends, so it cannot be copied: pass `&mut {name}` (or `&{name}`) to functions instead"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Calls the hook `hook` with a pointer to `local`.
    pub(super) fn call_hook(
        &mut self,
        hook: &'static str,
        local: Handle<LocalVariable>,
        out: &mut Block,
        span: Span,
    ) -> Result<(), LowerError> {
        let library = self.program.library;
        let source = library.get(hook).ok_or_else(|| {
            LowerError::new(span, format!("the drop hook `{hook}` is not reachable"))
        })?;
        let function = self.extern_function(source)?;
        let pointer = self.expr_node(Expression::LocalPointer(local), span);
        out.push(
            Statement::CallExtern {
                function,
                arguments: vec![pointer],
                result: None,
            },
            span,
        );
        Ok(())
    }
}
