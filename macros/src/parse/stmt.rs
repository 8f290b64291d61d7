//! Statements and blocks of a kernel body.

use cudajit_core::ast::{BinaryOp, Block, Expr, ExprKind, IfStmt, Stmt};

use super::parser::Parser;
use super::signature::{value_type, FnKind};
use super::{span_at, span_of};
use cudajit_core::intrinsics::Intrinsic;

impl<'e> Parser<'e> {
    /// The function body: a kernel's produces no value, a device function's may.
    pub(crate) fn fn_body(&mut self, block: &syn::Block, returns_value: bool) -> Block {
        self.function_tail = returns_value;
        let parsed = self.block(block);
        if parsed.tail.is_some() && !returns_value {
            let message = match self.kind {
                FnKind::Kernel => "a kernel returns nothing: end this expression with `;` or write the result into a `&mut [T]` parameter",
                FnKind::Device => "this function returns `()`: end this expression with `;` or declare a return type",
            };
            self.errors.at(block.stmts.last(), message);
        }
        parsed
    }

    /// A block; a final expression without `;` that is not control flow becomes `tail`.
    pub(super) fn block(&mut self, block: &syn::Block) -> Block {
        self.push_scope();
        let parsed = self.block_in_scope(block);
        self.pop_scope();
        parsed
    }

    fn block_in_scope(&mut self, block: &syn::Block) -> Block {
        // Only the function body's own tail is its value, not those of nested blocks.
        let returns = std::mem::take(&mut self.function_tail);
        let mut stmts = Vec::new();
        let mut tail = None;
        let count = block.stmts.len();
        for (position, stmt) in block.stmts.iter().enumerate() {
            let last = position + 1 == count;
            match stmt {
                // `if c { [0.25; 2] } else { b }`: a branch's array literal is bound to a
                // hidden local of the branch, which is its value.
                syn::Stmt::Expr(expr @ (syn::Expr::Array(_) | syn::Expr::Repeat(_)), None)
                    if last && !returns =>
                {
                    if let Some((binding, name)) = self.hidden_array_let(expr) {
                        stmts.append(&mut self.pending);
                        stmts.push(binding);
                        tail = self.expr(&name).map(Box::new);
                    }
                }
                syn::Stmt::Expr(expr, None) if last && !is_statement_like(expr) => {
                    tail = self
                        .with_statement_call(Some(expr), |parser| match returns {
                            true => parser.return_value(expr),
                            false => parser.expr(expr),
                        })
                        .map(Box::new);
                    stmts.append(&mut self.pending);
                }
                // `ptx!(u32: ..)` without `;` at the end of a block is its value.
                syn::Stmt::Expr(syn::Expr::Macro(mac), None)
                    if last && mac.mac.path.is_ident("ptx") =>
                {
                    tail = self.inline_ptx(&mac.mac).map(Box::new);
                    stmts.append(&mut self.pending);
                }
                syn::Stmt::Macro(mac)
                    if last && mac.semi_token.is_none() && mac.mac.path.is_ident("ptx") =>
                {
                    tail = self.inline_ptx(&mac.mac).map(Box::new);
                    stmts.append(&mut self.pending);
                }
                _ => {
                    let parsed = self.stmt(stmt);
                    stmts.append(&mut self.pending);
                    stmts.extend(parsed);
                }
            }
        }
        Block {
            stmts,
            tail,
            span: span_of(block.brace_token.span.open()),
        }
    }

    pub(super) fn stmt(&mut self, stmt: &syn::Stmt) -> Option<Stmt> {
        match stmt {
            syn::Stmt::Local(local) => {
                let init = local.init.as_ref().map(|init| &*init.expr);
                self.with_statement_call(init, |parser| parser.local(local))
            }
            syn::Stmt::Item(item) => {
                let message = match item {
                    syn::Item::Const(_) => {
                        self.const_item(item);
                        return None;
                    }
                    syn::Item::Static(stat)
                        if matches!(stat.mutability, syn::StaticMutability::None) =>
                    {
                        self.const_item(item);
                        return None;
                    }
                    syn::Item::Static(_) => {
                        "a kernel cannot have a `static mut`: every thread would share it, unsynchronised; write to a `&mut [T]` parameter, or to shared memory (`shared_array`)"
                    }
                    syn::Item::Fn(_) => {
                        "functions cannot be declared inside a kernel: declare it at module level with `#[device]` and call it"
                    }
                    _ => {
                        "items (structs, enums, `use`, ...) cannot be declared inside a kernel: declare them at module level"
                    }
                };
                self.errors.at(item, message);
                None
            }
            syn::Stmt::Macro(mac) => self.macro_stmt(&mac.mac),
            syn::Stmt::Expr(expr, _) => {
                self.with_statement_call(Some(expr), |parser| parser.expr_stmt(expr))
            }
        }
    }

    fn local(&mut self, local: &syn::Local) -> Option<Stmt> {
        let parsed = self.local_inner(local);
        if parsed.is_none() {
            // Declare the names anyway, so later uses do not add errors of their own.
            self.bind_pattern_names(&local.pat);
        }
        parsed
    }

    fn local_inner(&mut self, local: &syn::Local) -> Option<Stmt> {
        let span = span_of(local.let_token.span);
        if local
            .init
            .as_ref()
            .is_some_and(|init| init.diverge.is_some())
        {
            return self.let_else(local);
        }
        if let Some(init) = &local.init {
            if super::iterator_chain::is_iterator(&init.expr)
                && !matches!(&*init.expr, syn::Expr::Range(_))
            {
                self.errors.at(
                    &init.expr,
                    "an iterator cannot be kept in a local in kernels: write instead the whole chain in one expression (`x.iter().map(|v| v * 2.0).sum::<f32>()`), or walk it with `for v in x.iter() { .. }`",
                );
                return None;
            }
        }
        if let Some(option) = self.option_let(local, span) {
            return option;
        }
        if let Some(tuple) = self.tuple_let(local, span) {
            return tuple;
        }
        if let Some(fields) = self.struct_pattern_let(local) {
            return fields;
        }
        let (pat, ty) = match &local.pat {
            syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            other => (other, None),
        };
        if let syn::Pat::Tuple(tuple) = pat {
            return self.let_tuple(tuple, local, span);
        }
        let (name, mutable) = match pat {
            syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                (ident.ident.to_string(), ident.mutability.is_some())
            }
            syn::Pat::Slice(slice) => return self.array_pattern_let(slice, local),
            syn::Pat::Wild(_) => {
                self.errors.at(
                    pat,
                    "`let _ = value;` is not supported in kernels: write instead `value;` as a statement, or `let _unused = value;`",
                );
                return None;
            }
            syn::Pat::Ident(ident) if ident.by_ref.is_some() => {
                self.errors.at(
                    ident.by_ref,
                    "`ref` bindings are not supported in kernels: write instead a plain binding (a copy, `let w = v;`), or pass `&mut place` to a `#[device]` function",
                );
                return None;
            }
            syn::Pat::Struct(_) | syn::Pat::TupleStruct(_) => {
                self.errors.at(
                    pat,
                    "struct patterns are not supported in kernels: read the fields instead, `let x = p.x;`",
                );
                return None;
            }
            other => {
                self.errors.at(
                    other,
                    "`let` in a kernel binds a name (`let x = ..`, `let mut x: T = ..`) or a tuple of names (`let (a, b) = ..`); this pattern is not supported",
                );
                return None;
            }
        };
        if let Some(syn::Expr::Closure(closure)) = local.init.as_ref().map(|init| &*init.expr) {
            return self.closure_let(&name, closure);
        }
        if let Some(dyn_let) = ty.and_then(|ty| self.dyn_let(&name, mutable, ty, local)) {
            return dyn_let;
        }
        if let (Some(syn::Type::Array(array)), Some(init)) = (ty, &local.init) {
            if super::intrinsic_call::is_vector_array_load(&init.expr) {
                return self.vector_array_let(name, mutable, array, &init.expr, span);
            }
        }
        let ty = match ty {
            Some(syn::Type::Array(array)) => {
                // `let acc: [f32; 4] = ..`: the element type (rustc checks the length).
                let elem = self.array_annotation(array).ok()?;
                let init = local.init.as_ref().map(|init| &*init.expr);
                if !matches!(init, Some(syn::Expr::Repeat(_) | syn::Expr::Array(_))) {
                    self.errors.at(
                        array,
                        "a local array is created with its value, `[value; N]` or `[a, b, ..]`: `let acc: [f32; 4] = [0.0; 4];` (kernels do not copy whole arrays)",
                    );
                    return None;
                }
                Some(elem)
            }
            Some(ty) if super::closure::is_boxed_closure(ty) => {
                self.errors.at(ty, super::closure::DYN_CLOSURE);
                return None;
            }
            Some(ty) => match value_type(ty, &self.generics) {
                Some(value) => {
                    // `let p: Pair<f32> = ..`: a generic struct's instance named, so its
                    // layout (rustc's) reaches the lowering.
                    if let (cudajit_core::ast::ValueType::Struct(name), syn::Type::Path(path)) =
                        (&value, ty)
                    {
                        if name.contains('<') {
                            self.record_struct(&path.path);
                        }
                    }
                    Some(value)
                }
                None => {
                    self.errors.at(
                        ty,
                        "the type of a kernel local, when written, is a scalar type (`bool`, an integer or a float type) or a generic type parameter; leave other locals untyped (`let tile = shared_array::<f32>(n);`, `let acc = [0.0f32; 4];`)",
                    );
                    return None;
                }
            },
            None => None,
        };
        if let Some(syn::Expr::Array(array)) = local.init.as_ref().map(|init| &*init.expr) {
            return self.array_literal_let(name, mutable, ty, array, span);
        }
        let init = match &local.init {
            Some(init) => {
                match &*init.expr {
                    // `[value; len]`: a local array, the only place arrays are written.
                    syn::Expr::Repeat(repeat) => {
                        // `[[value; M]; N]`: an array of arrays, rows of `[value; M]`.
                        let value = match &*repeat.expr {
                            syn::Expr::Repeat(row) => {
                                let element = self.expr(&row.expr);
                                let columns = self.expr(&row.len);
                                element.zip(columns).map(|(element, columns)| Expr {
                                    kind: ExprKind::Repeat {
                                        value: Box::new(element),
                                        len: Box::new(columns),
                                    },
                                    span: span_at(row),
                                })
                            }
                            value => self.expr(value),
                        };
                        let len = self.expr(&repeat.len);
                        Some(Expr {
                            kind: ExprKind::Repeat {
                                value: Box::new(value?),
                                len: Box::new(len?),
                            },
                            span: span_at(repeat),
                        })
                    }
                    other => Some(self.expr(other)?),
                }
            }
            None => None,
        };
        // `let v = vload4(x, i);`: `v` is a tuple of the loaded values.
        let is_vector_load = matches!(
            &init,
            Some(Expr {
                kind: ExprKind::Intrinsic {
                    intrinsic: Intrinsic::VectorLoad(_),
                    ..
                },
                ..
            })
        );
        if let (true, None, Some(value)) = (is_vector_load, &ty, init.clone()) {
            return Some(self.vector_tuple_let(&name, value, span));
        }
        // `let q: Pair<i16> = Pair { .. };`: the literal is of the instance the type names,
        // as rustc infers it from the annotation.
        let mut init = init;
        if let (
            Some(cudajit_core::ast::ValueType::Struct(instance)),
            Some(Expr {
                kind: ExprKind::StructLiteral { ty: literal, .. },
                ..
            }),
        ) = (&ty, &mut init)
        {
            if instance.contains('<') && *literal == cudajit_core::layout::base_name(instance) {
                *literal = instance.clone();
            }
        }
        // Bound after the initialiser: `let x = x + 1;` reads the outer `x`.
        self.bind(&name);
        // `let a = [..];`: `a.reverse()` is the array's (refused), not an `Ordering`'s.
        let array = matches!(&local.pat, syn::Pat::Type(t) if matches!(&*t.ty, syn::Type::Array(_)))
            || local.init.as_ref().is_some_and(|init| {
                matches!(&*init.expr, syn::Expr::Array(_) | syn::Expr::Repeat(_))
            });
        if array {
            self.bind_sequence_name(&name);
        }
        // `let hit = nearest(x, q);`: a call's result may be an `Option` the syntax does not
        // show, so `hit.map(f)` is an `Option`'s `map`, not an array's.
        if ty.is_none()
            && local.init.as_ref().is_some_and(|init| {
                matches!(&*init.expr, syn::Expr::Call(_) | syn::Expr::MethodCall(_))
            })
        {
            self.bind(&format!("{name}.()"));
        }
        Some(Stmt::Let {
            name,
            mutable,
            ty,
            init,
            span,
        })
    }

    /// `let (a, b, c, d) = vload4(x, i);`
    fn let_tuple(
        &mut self,
        tuple: &syn::PatTuple,
        local: &syn::Local,
        span: cudajit_core::Span,
    ) -> Option<Stmt> {
        let mut names = Vec::new();
        for element in &tuple.elems {
            match element {
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    names.push((ident.ident.to_string(), ident.mutability.is_some()))
                }
                syn::Pat::Wild(_) => names.push((self.fresh_temp(), false)),
                other => {
                    self.errors.at(
                        other,
                        "a tuple `let` binds plain names or `_`: `let (a, b, c, d) = vload4(x, i);`",
                    );
                    return None;
                }
            }
        }
        let Some(init) = &local.init else {
            self.errors.at(
                tuple,
                "a tuple `let` needs a value: `let (a, b, c, d) = vload4(x, i);`",
            );
            return None;
        };
        if is_branching(&init.expr) {
            // Branches ending in tuples were taken by `tuple_let`: these end in calls.
            self.errors
                .at(&init.expr, super::tuple_branches::BRANCH_CALL);
            return None;
        }
        let value = match &*init.expr {
            syn::Expr::MethodCall(call) if super::sub_slice::is_split_at(call) => {
                self.split_at(call)?
            }
            other => self.expr(other)?,
        };
        if !matches!(
            value.kind,
            cudajit_core::ast::ExprKind::Intrinsic {
                intrinsic: Intrinsic::VectorLoad(_),
                ..
            } | cudajit_core::ast::ExprKind::Call { .. }
                | cudajit_core::ast::ExprKind::InlinePtx { .. }
                | cudajit_core::ast::ExprKind::SplitAt { .. }
        ) {
            self.errors.at(&init.expr, "a tuple comes from `(a, b)`, a tuple local, `vload4`/`vload2`, `ptx!` with a tuple type, `x.split_at(mid)` or a `#[device]` function returning one: `let (a, b) = f(x);`");
            return None;
        }
        for (name, _) in &names {
            self.bind(name);
        }
        Some(Stmt::LetTuple {
            names,
            init: value,
            span,
        })
    }

    /// `place = value;`
    fn assign_stmt(&mut self, assign: &syn::ExprAssign, span: cudajit_core::Span) -> Option<Stmt> {
        if let (syn::Expr::Array(array), false) =
            (&*assign.right, matches!(&*assign.left, syn::Expr::Array(_)))
        {
            return self.array_assign(&assign.left, array);
        }
        if let Some(option) = self.option_assign(&assign.left, &assign.right, span) {
            return option;
        }
        if let Some(tuple) = self.tuple_assign(&assign.left, &assign.right, span) {
            return tuple;
        }
        Some(Stmt::Assign {
            place: self.place(&assign.left)?,
            op: None,
            value: self.expr(&assign.right)?,
            span,
        })
    }

    pub(super) fn expr_stmt(&mut self, expr: &syn::Expr) -> Option<Stmt> {
        let span = span_at(expr);
        match expr {
            syn::Expr::Assign(assign) => self.with_statement_call(Some(&assign.right), |parser| {
                parser.assign_stmt(assign, span)
            }),
            syn::Expr::Binary(binary) if compound_op(&binary.op).is_some() => Some(Stmt::Assign {
                place: self.place(&binary.left)?,
                op: compound_op(&binary.op),
                value: self.expr(&binary.right)?,
                span,
            }),
            syn::Expr::If(expr_if) if matches!(&*expr_if.cond, syn::Expr::Let(_)) => {
                self.if_let_stmt(expr_if)
            }
            syn::Expr::If(expr_if) => Some(Stmt::If(self.if_stmt(expr_if)?)),
            syn::Expr::While(expr_while) if matches!(&*expr_while.cond, syn::Expr::Let(_)) => {
                self.while_let(expr_while)
            }
            syn::Expr::While(expr_while) => {
                let cond = self.expr(&expr_while.cond);
                self.loops.push((label_name(&expr_while.label), None));
                let body = self.block(&expr_while.body);
                self.loops.pop();
                Some(Stmt::While {
                    label: label_name(&expr_while.label),
                    cond: cond?,
                    body: self.no_tail_in(body, &expr_while.body),
                    span,
                })
            }
            syn::Expr::Loop(expr_loop) => {
                self.loops.push((label_name(&expr_loop.label), None));
                let body = self.block(&expr_loop.body);
                self.loops.pop();
                Some(Stmt::Loop {
                    label: label_name(&expr_loop.label),
                    body: self.no_tail_in(body, &expr_loop.body),
                    span,
                })
            }
            syn::Expr::ForLoop(for_loop) => self.for_loop(for_loop),
            syn::Expr::MethodCall(call) if super::iterator_chain::is_for_each(call) => {
                self.for_each(call)
            }
            syn::Expr::Break(expr_break) => self.break_stmt(expr_break),
            syn::Expr::Continue(expr_continue) => Some(Stmt::Continue {
                label: expr_continue.label.as_ref().map(|l| l.ident.to_string()),
                span,
            }),
            syn::Expr::Return(expr_return) => match (&expr_return.expr, self.kind) {
                (Some(value), FnKind::Kernel) => {
                    self.errors
                        .at(value, "a kernel returns nothing: write `return;`");
                    None
                }
                (Some(value), FnKind::Device) => Some(Stmt::Return {
                    value: Some(
                        self.with_statement_call(Some(value), |parser| parser.return_value(value))?,
                    ),
                    span,
                }),
                (None, _) => Some(Stmt::Return { value: None, span }),
            },
            syn::Expr::Block(expr_block) if self.plain_block(expr_block) => {
                let block = self.block(&expr_block.block);
                Some(Stmt::Block(self.no_tail_in(block, &expr_block.block)))
            }
            syn::Expr::Unsafe(unsafe_block) => {
                let block = self.block(&unsafe_block.block);
                Some(Stmt::Block(self.no_tail_in(block, &unsafe_block.block)))
            }
            syn::Expr::Block(_) => None,
            syn::Expr::Macro(mac) => self.macro_stmt(&mac.mac),
            syn::Expr::Match(expr_match) if !match_has_value(expr_match) => {
                self.match_stmt(expr_match)
            }
            syn::Expr::Call(call) => {
                if let Some(super::closure::ClosureName::Local(index)) =
                    callee_name(call).and_then(|name| self.closure_name(&name))
                {
                    return match self.inline_closure(index, call, true)? {
                        Err(stmt) => Some(stmt),
                        Ok(value) => Some(Stmt::Expr(value)),
                    };
                }
                let parsed = self.expr(expr)?;
                if matches!(
                    parsed.kind,
                    cudajit_core::ast::ExprKind::Call { .. }
                        | cudajit_core::ast::ExprKind::Intrinsic { .. }
                        | cudajit_core::ast::ExprKind::InlinePtx { op: Some(_), .. }
                ) {
                    Some(Stmt::Expr(parsed))
                } else {
                    self.errors.at(
                        call,
                        "this expression statement has no effect: kernels change memory only through assignments",
                    );
                    None
                }
            }
            syn::Expr::MethodCall(_) => {
                // A `#[device]` method (`v.normalize();`) may write its receiver; a scalar
                // method's value unused has no effect.
                let parsed = self.expr(expr)?;
                if matches!(parsed.kind, cudajit_core::ast::ExprKind::MethodCall { .. }) {
                    Some(Stmt::Expr(parsed))
                } else {
                    self.errors.at(
                        expr,
                        "this expression statement has no effect: kernels change memory only through assignments",
                    );
                    None
                }
            }
            other => {
                // Evaluate it for errors, then reject the statement itself.
                if self.expr(other).is_some() {
                    self.errors.at(
                        other,
                        "this expression statement has no effect: kernels change memory only through assignments",
                    );
                }
                None
            }
        }
    }

    pub(super) fn if_stmt(&mut self, expr_if: &syn::ExprIf) -> Option<IfStmt> {
        let cond = self.expr(&expr_if.cond);
        let then = self.block(&expr_if.then_branch);
        let then = self.no_tail_in(then, &expr_if.then_branch);
        let otherwise = match &expr_if.else_branch {
            None => None,
            Some((_, else_expr)) => Some(Box::new(self.else_branch(else_expr)?)),
        };
        Some(IfStmt {
            cond: cond?,
            then,
            otherwise,
            span: span_of(expr_if.if_token.span),
        })
    }

    /// A block used as a statement: a final value is an error (`;` is missing).
    pub(super) fn no_tail_in(&mut self, mut block: Block, syn_block: &syn::Block) -> Block {
        if block.tail.take().is_some() {
            self.errors.at(
                syn_block.stmts.last(),
                "this block is a statement, so it cannot end in a value: add `;`",
            );
        }
        block
    }

    fn plain_block(&mut self, block: &syn::ExprBlock) -> bool {
        if let Some(label) = &block.label {
            self.errors
                .at(label, "labelled blocks are not supported in kernels");
            return false;
        }
        if let Some(attr) = block.attrs.first() {
            self.errors
                .at(attr, "attributes on blocks are not supported in kernels");
            return false;
        }
        true
    }

    /// The left side of an assignment: a variable or a slice element.
    pub(super) fn place(&mut self, expr: &syn::Expr) -> Option<Expr> {
        let place = self.place_inner(expr)?;
        if let Some(root) = place_root(&place) {
            self.written.push(root.to_owned());
        }
        Some(place)
    }

    fn place_inner(&mut self, expr: &syn::Expr) -> Option<Expr> {
        match expr {
            syn::Expr::Path(_) | syn::Expr::Index(_) | syn::Expr::Field(_) => self.expr(expr),
            syn::Expr::Paren(paren) => self.place_inner(&paren.expr),
            syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => self.expr(expr),
            syn::Expr::Infer(_) => {
                self.errors.at(
                    expr,
                    "`_ = value;` is not supported in kernels: write instead `value;` as a statement, or `let _unused = value;`",
                );
                None
            }
            syn::Expr::Struct(pattern) => {
                let path = &pattern.path;
                let path = quote::quote!(#path).to_string();
                self.errors.at(
                    expr,
                    format!("destructuring assignment of a struct, `{path} {{ .. }} = p;`, is not supported in kernels: write instead one assignment per field, `a = p.a; b = p.b;`"),
                );
                None
            }
            other => {
                self.errors.at(
                    other,
                    "only local variables and slice elements (`y[i]`) can be assigned in kernels",
                );
                None
            }
        }
    }
}

/// The local or parameter a place belongs to: `arr` of `arr[k]`, `p` of `p.x`.
pub(super) fn place_root(place: &Expr) -> Option<&str> {
    match &place.kind {
        ExprKind::Var(name) => Some(name),
        ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => place_root(base),
        _ => None,
    }
}

pub(super) fn label_name(label: &Option<syn::Label>) -> Option<String> {
    label.as_ref().map(|l| l.name.ident.to_string())
}

/// Expressions that are statements even without a `;` at the end of a block: control
/// flow, assignments and jumps (`if c { y[i] = v }` is ordinary Rust).
fn is_statement_like(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Loop(expr_loop) => !loop_has_value(expr_loop),
        syn::Expr::While(_)
        | syn::Expr::ForLoop(_)
        | syn::Expr::Assign(_)
        | syn::Expr::Return(_)
        | syn::Expr::Break(_)
        | syn::Expr::Continue(_) => true,
        syn::Expr::Binary(binary) => compound_op(&binary.op).is_some(),
        syn::Expr::Match(expr_match) => !match_has_value(expr_match),
        syn::Expr::Macro(_) => true,
        syn::Expr::If(expr_if) => if_is_statement(expr_if),
        syn::Expr::Block(block) => !block_has_value(&block.block),
        syn::Expr::Unsafe(block) => !block_has_value(&block.block),
        _ => false,
    }
}

/// Whether a block ends in a value (a final expression that is not statement-like).
fn block_has_value(block: &syn::Block) -> bool {
    matches!(block.stmts.last(), Some(syn::Stmt::Expr(e, None)) if !is_statement_like(e))
}

/// Whether a `loop` gives a value: a `break` in its body carries one, either unlabelled
/// and outside nested loops, or naming the loop's label (`{ let mut k = 0; loop { k += 1;
/// if k > n { break k; } } }` ends a block with a value). Breaks inside closures leave
/// nothing of the loop's.
fn loop_has_value(expr_loop: &syn::ExprLoop) -> bool {
    use syn::visit_mut::VisitMut;
    struct Finder {
        label: Option<String>,
        nested: usize,
        found: bool,
    }
    impl VisitMut for Finder {
        fn visit_expr_break_mut(&mut self, node: &mut syn::ExprBreak) {
            if node.expr.is_some() {
                let ours = match &node.label {
                    None => self.nested == 0,
                    Some(label) => self.label.as_deref() == Some(&*label.ident.to_string()),
                };
                self.found |= ours;
            }
            syn::visit_mut::visit_expr_break_mut(self, node);
        }
        fn visit_expr_loop_mut(&mut self, node: &mut syn::ExprLoop) {
            self.nested += 1;
            syn::visit_mut::visit_expr_loop_mut(self, node);
            self.nested -= 1;
        }
        fn visit_expr_while_mut(&mut self, node: &mut syn::ExprWhile) {
            self.nested += 1;
            syn::visit_mut::visit_expr_while_mut(self, node);
            self.nested -= 1;
        }
        fn visit_expr_for_loop_mut(&mut self, node: &mut syn::ExprForLoop) {
            self.nested += 1;
            syn::visit_mut::visit_expr_for_loop_mut(self, node);
            self.nested -= 1;
        }
        fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    }
    let mut finder = Finder {
        label: expr_loop.label.as_ref().map(|l| l.name.ident.to_string()),
        nested: 0,
        found: false,
    };
    finder.visit_block_mut(&mut expr_loop.body.clone());
    finder.found
}

/// An `if` without `else`, or whose branches end in statements, is a statement.
fn if_is_statement(expr_if: &syn::ExprIf) -> bool {
    match &expr_if.else_branch {
        None => true,
        Some((_, else_expr)) => {
            !block_has_value(&expr_if.then_branch)
                && match &**else_expr {
                    syn::Expr::Block(block) => !block_has_value(&block.block),
                    syn::Expr::If(nested) => if_is_statement(nested),
                    _ => true,
                }
        }
    }
}

fn compound_op(op: &syn::BinOp) -> Option<BinaryOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinaryOp::Add,
        syn::BinOp::SubAssign(_) => BinaryOp::Sub,
        syn::BinOp::MulAssign(_) => BinaryOp::Mul,
        syn::BinOp::DivAssign(_) => BinaryOp::Div,
        syn::BinOp::RemAssign(_) => BinaryOp::Rem,
        syn::BinOp::BitAndAssign(_) => BinaryOp::BitAnd,
        syn::BinOp::BitOrAssign(_) => BinaryOp::BitOr,
        syn::BinOp::BitXorAssign(_) => BinaryOp::BitXor,
        syn::BinOp::ShlAssign(_) => BinaryOp::Shl,
        syn::BinOp::ShrAssign(_) => BinaryOp::Shr,
        _ => return None,
    })
}

/// Whether a `match`'s arms produce values (then it is an expression).
fn match_has_value(expr: &syn::ExprMatch) -> bool {
    expr.arms.iter().any(|arm| match &*arm.body {
        syn::Expr::Block(block) => block_has_value(&block.block),
        other => {
            !is_statement_like(other) && !matches!(other, syn::Expr::Tuple(t) if t.elems.is_empty())
        }
    })
}

/// An `if`, `match` or block, in parentheses or not.
fn is_branching(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Paren(paren) => is_branching(&paren.expr),
        syn::Expr::If(_) | syn::Expr::Match(_) | syn::Expr::Block(_) => true,
        _ => false,
    }
}

/// The name a call calls, when it is a plain name (`f(x)`).
pub(super) fn callee_name(call: &syn::ExprCall) -> Option<String> {
    match &*call.func {
        syn::Expr::Path(path) if path.qself.is_none() => {
            path.path.get_ident().map(|ident| ident.to_string())
        }
        _ => None,
    }
}
