//! Calls of device functions: generic parameters, closure arguments, references to locals
//! and inline-PTX arguments.

use super::ty_name;
use super::{Binding, Constraint, InferTy, Inference, PendingCall, PendingClosure};
use crate::ast::{
    self, ClosureParam, Expr, ExprKind, GenericArg, GenericKind, ParamType, ValueType,
};
use crate::lower::closures::{CaptureType, ClosureArg};
use crate::lower::error::LowerError;
use crate::lower::spec::Resolved;
use crate::Scalar;

/// Whether a parameter of type `ty` is written with the type parameter `generic` itself
/// (`S`, `&S`, `&[S]`, `[S; N]`).
fn written_for(ty: &ParamType, generic: &str) -> bool {
    let is = |ty: &ValueType| matches!(ty, ValueType::Generic(name) if name == generic);
    match ty {
        ParamType::Value(ValueType::Array { elem, .. }) => is(elem),
        ParamType::Value(ty) => is(ty),
        ParamType::Slice { elem, .. } => is(elem),
        ParamType::Reference { target, .. } => is(target),
        _ => false,
    }
}

impl Inference<'_> {
    /// A call of a device function: its type parameters become fresh variables (or take
    /// the turbofish's types), its parameters unify with the arguments. Returns the
    /// variable of the result, `None` for functions returning nothing.
    pub(super) fn call(
        &mut self,
        expr: &Expr,
        callee: &str,
        generic_args: &[GenericArg],
        args: &[Expr],
    ) -> Result<Option<InferTy>, LowerError> {
        let span = expr.span;
        let library = self.library;
        // `Circle::area(&c)` or, in an instance, `S::new(..)` of a trait's function.
        let resolved;
        // `Pair::<f32>::new(..)`: the instance whose arguments bind the impl block's.
        let mut owner_instance = None;
        let callee = match callee.split_once("::") {
            Some((owner, item))
                if library.get(callee).is_none()
                    && (library.get_struct(owner).is_some()
                        || owner.contains('<') && !owner.starts_with('<')) =>
            {
                if owner.contains('<') {
                    owner_instance = Some(owner);
                }
                resolved = self.method_callee(owner, item, span)?;
                resolved.as_str()
            }
            // `<Circle as Shape>::weighted(&c, k)`, a default method kept by the impl, or
            // `Shape::area(&c)`: the method of the first argument's struct's impl (which
            // may write its own `Shape::weighted`, the trait default's name).
            Some((qualified, item))
                if library.get(callee).is_none()
                    || library.get_struct(qualified).is_none() && !args.is_empty() =>
            {
                let (owner, trait_name) = match qualified
                    .strip_prefix('<')
                    .and_then(|q| q.strip_suffix('>'))
                    .and_then(|q| q.split_once(" as "))
                {
                    Some((owner, trait_name)) => (Some(owner), trait_name),
                    None => (
                        args.first().and_then(|a| self.struct_of_argument(a)),
                        qualified,
                    ),
                };
                match owner.and_then(|owner| self.trait_method_callee(owner, trait_name, item)) {
                    Some(name) => {
                        resolved = name;
                        resolved.as_str()
                    }
                    None => callee,
                }
            }
            _ => callee,
        };
        let function = library.get(callee).ok_or_else(|| {
            LowerError::new(
                span,
                format!("`{callee}` is not a known `#[device]` function"),
            )
        })?;
        if !generic_args.is_empty() && generic_args.len() != function.generics.len() {
            return Err(LowerError::new(
                span,
                format!(
                    "`{callee}` has {} generic parameters, {} given",
                    function.generics.len(),
                    generic_args.len()
                ),
            ));
        }
        let structs = self.struct_generics(function, generic_args, args)?;
        let mut types = Vec::new();
        let mut consts = Vec::new();
        for (index, generic) in function.generics.iter().enumerate() {
            if structs.iter().any(|(name, _)| *name == generic.name) {
                continue;
            }
            let given = generic_args.get(index);
            match (&generic.kind, given) {
                (GenericKind::Type { .. }, Some(GenericArg::Type(ty))) => {
                    let scalar = self.library.scalar(self.spec, ty, span)?;
                    types.push((generic.name.clone(), self.known(scalar)));
                }
                (GenericKind::Type { .. }, None) => {
                    types.push((generic.name.clone(), self.fresh(Constraint::Unknown)));
                }
                (GenericKind::Const(ty), Some(GenericArg::Const(value))) => {
                    consts.push((generic.name.clone(), self.const_value(value, *ty)?));
                }
                // Bound by a generic struct's argument (`Row<N>`), or reported below.
                (GenericKind::Const(_), None) => {}
                _ => {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "generic argument {} of `{callee}` is of the wrong kind",
                            index + 1
                        ),
                    ))
                }
            }
        }
        if let (Some(owner), Some(pattern)) = (owner_instance, &function.self_type) {
            self.bind_instance(function, pattern, owner, &types, &mut consts, span)?;
        }
        // Type parameters bound to structs: checked against the instance's signature.
        let substituted;
        let function = if structs.is_empty() {
            function
        } else {
            substituted = crate::lower::generic_structs::substitute(function, &structs)?;
            &substituted
        };
        if let Some(error) = args.iter().find_map(|arg| self.tuple_value_passed(arg)) {
            return Err(error);
        }
        if args.len() != function.params.len() {
            let mut message = format!(
                "`{callee}` takes {} arguments, {} given",
                function.params.len(),
                args.len()
            );
            // An `Option` or tuple parameter is passed as its halves (`o.0`, `o.1`): a
            // call's result passed straight on is one argument, where a local is two.
            if let Some(split) = function
                .params
                .iter()
                .find_map(|p| p.name.strip_suffix(".0"))
            {
                message.push_str(&format!(
                    ": its parameter `{split}` (an `Option` or a tuple) is passed from a local, not from a call's result; write instead `let {split}: Option<u32> = f(x);` (or `let {split} = f(x);` for a tuple), then `{callee}(.., {split}, ..)`"
                ));
            }
            return Err(LowerError::new(span, message));
        }
        let external = function.external.is_some();
        let var_of = |this: &mut Self, ty: &ValueType| -> Result<usize, LowerError> {
            match ty {
                ValueType::Scalar(s) => Ok(this.known(*s)),
                // Enums pass as their integer (`repr`) to external functions.
                ValueType::Struct(name) if external => {
                    match this.library.resolve_value(this.spec, ty, span)? {
                        Resolved::Scalar(s) => Ok(this.known(s)),
                        Resolved::Struct(_) => Err(LowerError::new(
                            span,
                            format!("the struct `{name}` is not a scalar"),
                        )),
                    }
                }
                ValueType::Generic(name) => types
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| {
                        LowerError::new(span, format!("unknown type `{name}` in `{callee}`"))
                    }),
                ValueType::Struct(name) => Err(LowerError::new(
                    span,
                    format!(
                        "device functions cannot take the struct `{name}` yet: pass its fields"
                    ),
                )),
                ValueType::Tuple(_) => Err(LowerError::new(
                    span,
                    "a tuple here is not supported: pass its elements",
                )),
                ValueType::Array { .. } => Err(LowerError::new(
                    span,
                    "an array here is not supported: arrays are not nested",
                )),
            }
        };
        let mut closures = Vec::new();
        for (param, arg) in function.params.iter().zip(args) {
            if let ParamType::Closure { arity } = param.ty {
                closures.push(self.closure_argument(callee, param, arity, arg)?);
                continue;
            }
            // A generic struct written with the function's parameters (`&[Pair<T>]`): the
            // argument's instance binds them.
            if let Some(pattern) = super::generic_args::parameter_pattern(function, &param.ty) {
                let given = self.argument_instance(callee, param, arg)?;
                self.bind_instance(function, pattern, given, &types, &mut consts, arg.span)?;
                continue;
            }
            // `[T; N]` by value: an array of the element type (the caller's copy is made
            // when lowering).
            if let (ParamType::Value(ValueType::Array { elem, len }), false) = (&param.ty, external)
            {
                // `sum(w)` for `fn sum<const N: usize>(v: [f32; N])`: `N` is `w`'s length
                // where its `let` gives it, as rustc infers it.
                if let (crate::ast::ArrayLen::Generic(n), ExprKind::Var(name)) = (len, &arg.kind) {
                    let given = function.generics.iter().find_map(|g| match g.kind {
                        GenericKind::Const(ty) if &g.name == n => Some(ty),
                        _ => None,
                    });
                    if let (Some(ty), Some(Binding::Array(_, Some(bits)))) =
                        (given, self.scopes.lookup(name))
                    {
                        if !consts.iter().any(|(c, _)| c == n) {
                            consts.push((n.clone(), crate::ir::Literal::Int { bits, ty }));
                        }
                    }
                }
                let wanted = match elem.as_ref() {
                    ValueType::Struct(_) => self.array_type(elem, arg.span)?,
                    // `[[T; M]; N]`: rows of the element type.
                    ValueType::Array { elem: inner, .. } => InferTy::Rows(var_of(self, inner)?),
                    scalar => InferTy::Array(var_of(self, scalar)?),
                };
                self.array_value(arg, wanted)?;
                continue;
            }
            // `v: &mut T` of a scalar type parameter: the place's scalar binds `T`.
            if let ParamType::Reference {
                target: ValueType::Generic(name),
                len: None,
                mutable,
            } = &param.ty
            {
                if let Some(&(_, wanted)) = types.iter().find(|(n, _)| n == name) {
                    let given = self.scalar_reference_argument(callee, param, *mutable, arg)?;
                    self.unify(given, wanted, arg.span)?;
                    continue;
                }
            }
            if let ParamType::Reference {
                target,
                len,
                mutable,
            } = &param.ty
            {
                self.reference_argument(callee, param, target, len.as_ref(), *mutable, arg)?;
                continue;
            }
            if let ParamType::Value(ty @ ValueType::Struct(name)) = &param.ty {
                if let Resolved::Struct(handle) =
                    self.library.resolve_value(self.spec, ty, arg.span)?
                {
                    match self.expr(arg)? {
                        InferTy::Struct(given) if given == handle => continue,
                        _ => {
                            return Err(LowerError::new(
                                arg.span,
                                format!("`{callee}` takes a `{name}` here"),
                            ))
                        }
                    }
                }
            }
            match (&param.ty, self.expr(arg)?) {
                (ParamType::Value(ty), InferTy::Scalar(a)) => {
                    let p = var_of(self, ty)?;
                    self.unify(a, p, arg.span)?;
                }
                (
                    ParamType::Slice { elem, mutable },
                    InferTy::Slice {
                        elem: given,
                        mutable: given_mut,
                    },
                ) => {
                    if *mutable && !given_mut {
                        return Err(LowerError::new(
                            arg.span,
                            format!(
                                "`{callee}` writes through `{}`: pass a `&mut` slice",
                                param.name
                            ),
                        ));
                    }
                    let p = var_of(self, elem)?;
                    self.require(p, given, arg.span)?;
                }
                // A slice of structs: the same struct, and `&mut` where it is written.
                (
                    ParamType::Slice { elem, mutable },
                    InferTy::StructSlice {
                        name: given,
                        mutable: given_mut,
                    },
                ) => {
                    let wanted = match self.library.resolve_value(self.spec, elem, arg.span)? {
                        Resolved::Struct(name) => name,
                        Resolved::Scalar(_) => "",
                    };
                    if wanted != given {
                        return Err(LowerError::new(
                            arg.span,
                            format!(
                                "`{callee}` takes a slice of `{}` as `{}`, not of `{given}`",
                                ty_name(elem),
                                param.name
                            ),
                        ));
                    }
                    if *mutable && !given_mut {
                        return Err(LowerError::new(
                            arg.span,
                            format!(
                                "`{callee}` writes through `{}`: pass a `&mut` slice",
                                param.name
                            ),
                        ));
                    }
                }
                _ => {
                    return Err(LowerError::new(
                        arg.span,
                        format!(
                            "argument `{}` of `{callee}` has the wrong kind (slice or scalar)",
                            param.name
                        ),
                    ))
                }
            }
        }
        if let Some(generic) = function.generics.iter().find(|g| {
            matches!(g.kind, GenericKind::Const(_))
                && !consts.iter().any(|(n, _)| *n == g.name)
                && !structs.iter().any(|(n, _)| *n == g.name)
        }) {
            return Err(LowerError::new(
                span,
                format!(
                    "give `{callee}`'s const parameter `{}` with a turbofish: `{callee}::<..>(..)`",
                    generic.name
                ),
            ));
        }
        // `-> Pair<T>`: the instance the call's bound parameters name.
        let bound_result;
        let result_type = match &function.result {
            Some(ValueType::Struct(pattern))
                if super::generic_args::names_parameters(function, pattern) =>
            {
                bound_result = Some(ValueType::Struct(
                    self.bound_instance(function, pattern, &types, &consts, span)?,
                ));
                &bound_result
            }
            other => other,
        };
        let result = match result_type {
            Some(ValueType::Array { elem, .. }) => Some(match elem.as_ref() {
                ValueType::Struct(_) => self.array_type(elem, span)?,
                ValueType::Array { elem: inner, .. } => InferTy::Rows(var_of(self, inner)?),
                scalar => InferTy::Array(var_of(self, scalar)?),
            }),
            Some(ValueType::Tuple(elements)) => Some(InferTy::Struct(
                self.tuple_result(callee, elements, &types, span)?,
            )),
            Some(ty @ ValueType::Struct(name)) => {
                match self.library.resolve_value(self.spec, ty, span)? {
                    Resolved::Struct(name) => Some(InferTy::Struct(name)),
                    Resolved::Scalar(_) if external => Some(InferTy::Scalar(var_of(self, ty)?)),
                    Resolved::Scalar(_) => {
                        return Err(LowerError::new(
                            span,
                            format!("`{callee}` returns the enum `{name}`, which device functions cannot return yet: return its integer (`as u32`)"),
                        ))
                    }
                }
            }
            Some(ty) => Some(InferTy::Scalar(var_of(self, ty)?)),
            None => None,
        };
        self.calls.push(PendingCall {
            expr: expr as *const Expr,
            name: callee.to_owned(),
            types,
            consts,
            structs,
            closures,
            span,
        });
        Ok(result)
    }

    /// The type parameters of `function` a call binds to structs: given by a turbofish
    /// (`total::<Circle>(..)`) or read from the arguments the parameter's type is written
    /// for (`s: S`, `s: &S`, `s: &[S]`, `s: [S; N]`) where they are structs.
    fn struct_generics(
        &self,
        function: &ast::FunctionSource,
        generic_args: &[GenericArg],
        args: &[Expr],
    ) -> Result<Vec<(String, &'static str)>, LowerError> {
        let mut structs = Vec::new();
        for (index, generic) in function.generics.iter().enumerate() {
            if !matches!(generic.kind, GenericKind::Type { .. }) {
                continue;
            }
            let given = match generic_args.get(index) {
                Some(GenericArg::Type(ty @ ValueType::Struct(_))) => {
                    match self.library.resolve_value(self.spec, ty, generic.span)? {
                        Resolved::Struct(name) => Some(name),
                        Resolved::Scalar(_) => None,
                    }
                }
                Some(_) => None,
                None => function
                    .params
                    .iter()
                    .zip(args)
                    .filter(|(param, _)| written_for(&param.ty, &generic.name))
                    .find_map(|(_, arg)| self.struct_of_argument(arg)),
            };
            if let Some(name) = given {
                structs.push((generic.name.clone(), name));
            }
        }
        Ok(structs)
    }

    /// The struct an argument is, refers to or holds (`c`, `&c`, `cs`, `cs[i]`), from the
    /// bindings alone (the argument is inferred once, against the instance's signature).
    fn struct_of_argument(&self, arg: &Expr) -> Option<&'static str> {
        match &arg.kind {
            ExprKind::Var(name) => match self.scopes.lookup(name)? {
                Binding::Struct(name)
                | Binding::StructRef(name)
                | Binding::StructArray(name)
                | Binding::StructSlice { name, .. } => Some(name),
                _ => None,
            },
            ExprKind::Reference { place, .. } => self.struct_of_argument(place),
            ExprKind::Index { base, .. } | ExprKind::SubSlice { base, .. } => {
                self.struct_of_argument(base)
            }
            ExprKind::StructLiteral { ty, .. } => self
                .library
                .get_struct(ty)
                .filter(|layout| layout.enum_repr.is_none() && !layout.is_generic_base())
                .map(|layout| layout.name),
            _ => None,
        }
    }

    /// The closure passed for `callee`'s closure parameter `param`: its parameters'
    /// written types resolved here (the caller's generics mean nothing in the callee), and
    /// the types of the names it captures.
    pub(super) fn closure_argument(
        &mut self,
        callee: &str,
        param: &ast::Param,
        arity: usize,
        arg: &Expr,
    ) -> Result<PendingClosure, LowerError> {
        let ExprKind::Closure {
            params,
            body,
            captures,
        } = &arg.kind
        else {
            return Err(LowerError::new(
                arg.span,
                format!(
                    "`{callee}` takes a closure for `{}`: pass one (`|a, b| a + b`) or the name of a closure local",
                    param.name
                ),
            ));
        };
        if params.len() != arity {
            return Err(LowerError::new(
                arg.span,
                format!(
                    "`{callee}`'s `{}` takes a closure of {arity} parameters, this one has {}",
                    param.name,
                    params.len()
                ),
            ));
        }
        let mut resolved = Vec::new();
        for p in params {
            let ty = match &p.ty {
                Some(ty) => Some(ValueType::Scalar(
                    self.library.scalar(self.spec, ty, arg.span)?,
                )),
                None => None,
            };
            resolved.push(ClosureParam {
                name: p.name.clone(),
                ty,
            });
        }
        let mut names = Vec::new();
        let mut types = Vec::new();
        for capture in captures {
            let ExprKind::Var(name) = &capture.kind else {
                return Err(LowerError::new(
                    capture.span,
                    "internal: a capture is a name",
                ));
            };
            let ty = self.expr(capture)?;
            if !matches!(
                ty,
                InferTy::Scalar(_) | InferTy::Slice { .. } | InferTy::Struct(_)
            ) {
                return Err(LowerError::new(
                    capture.span,
                    format!("a closure passed to a `#[device]` function captures scalars, slices of scalars and structs; `{name}` is none of them: copy what the closure needs into a local first"),
                ));
            }
            names.push(name.clone());
            types.push(ty);
        }
        // The caller's constants the body names, which the instance is given.
        let named = body.variables();
        let constants = self
            .constants
            .iter()
            .filter(|c| named.iter().any(|n| n == c.name))
            .copied()
            .collect();
        Ok(PendingClosure {
            closure: ClosureArg {
                param: param.name.clone(),
                params: resolved,
                body: (**body).clone(),
                constants,
                // Placeholders, replaced when the types are known.
                captures: names
                    .into_iter()
                    .map(|n| (n, CaptureType::Scalar(Scalar::Bool)))
                    .collect(),
            },
            captures: types,
        })
    }

    /// A name bound to a returned tuple without a pattern or type (`let t = f(x);`) passed
    /// to a function: its elements can be read (`t.0`), but the caller's tuple parameters
    /// take a tuple local's elements, which only a pattern or annotation makes.
    pub(super) fn tuple_value_passed(&self, arg: &Expr) -> Option<LowerError> {
        let ExprKind::Var(name) = &arg.kind else {
            return None;
        };
        match self.scopes.lookup(name) {
            Some(Binding::Struct(ty)) if ty.starts_with('(') => Some(LowerError::new(
                arg.span,
                format!(
                    "`{name}` holds the tuple `{ty}` a function returned; to pass it on as a tuple, bind it with its type (`let {name}: {ty} = ..`) or a pattern (`let (a, b) = ..`)"
                ),
            )),
            _ => None,
        }
    }

    /// An argument of `ptx!`: a scalar, or a local array as a register list (`acc`, or
    /// `&mut acc` for registers the instruction reads and replaces).
    /// The arguments of `ptx!`, or of a typed tensor-core operation, whose scalar
    /// arguments have the types it declares.
    pub(super) fn ptx_arguments(
        &mut self,
        args: &[Expr],
        op: Option<&crate::ast::TensorOpCall>,
    ) -> Result<(), LowerError> {
        let declared = op.map_or(&[][..], |op| op.name.argument_scalars());
        for (index, arg) in args.iter().enumerate() {
            match declared.get(index).copied().flatten() {
                Some(scalar) => {
                    let var = self.scalar(arg)?;
                    self.require(var, scalar, arg.span)?;
                }
                None => self.ptx_argument(arg)?,
            }
        }
        Ok(())
    }

    pub(super) fn ptx_argument(&mut self, arg: &Expr) -> Result<(), LowerError> {
        let (place, read_write) = match &arg.kind {
            ExprKind::Reference {
                mutable: true,
                place,
            } => (&**place, true),
            _ => (arg, false),
        };
        if let ExprKind::Var(name) = &place.kind {
            if let Some(Binding::Array(..)) = self.scopes.lookup(name) {
                return Ok(());
            }
        }
        if read_write {
            return Err(LowerError::new(
                arg.span,
                "`&mut` in `ptx!` passes a local array as in/out registers (`&mut acc` of `let mut acc = [0.0f32; N];`); a scalar output is the `ptx!`'s result",
            ));
        }
        self.scalar(arg)?;
        Ok(())
    }

    /// `&name` / `&mut name` passed to an `#[extern_device]` reference parameter: a struct
    /// of the parameter's type, or a local array of its element type and length.
    /// The scalar a `&T`/`&mut T` argument refers to: `&mut x` of a place, or a scalar
    /// reference passed on.
    fn scalar_reference_argument(
        &mut self,
        callee: &str,
        param: &crate::ast::Param,
        mutable: bool,
        arg: &Expr,
    ) -> Result<usize, LowerError> {
        match &arg.kind {
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::ScalarRef(var)) => Ok(var),
                _ => Err(LowerError::new(
                    arg.span,
                    format!(
                        "`{}` of `{callee}` is a reference: pass `&{}{name}`",
                        param.name,
                        if mutable { "mut " } else { "" }
                    ),
                )),
            },
            ExprKind::Reference {
                mutable: given_mut,
                place,
            } => {
                if mutable && !given_mut {
                    return Err(LowerError::new(
                        arg.span,
                        format!("`{callee}` writes through `{}`: pass `&mut ..`", param.name),
                    ));
                }
                self.scalar(place)
            }
            _ => Err(LowerError::new(
                arg.span,
                format!(
                    "`{}` of `{callee}` is a reference: pass `&name`",
                    param.name
                ),
            )),
        }
    }

    pub(super) fn reference_argument(
        &mut self,
        callee: &str,
        param: &crate::ast::Param,
        target: &ValueType,
        len: Option<&crate::ast::ArrayLen>,
        mutable: bool,
        arg: &Expr,
    ) -> Result<(), LowerError> {
        let wrong = |what: String| Err(LowerError::new(arg.span, what));
        // An array reference of a device function passed on by name (`acc`, itself a
        // reference or an array parameter), or a local array passed as Rust reborrows.
        if let (ExprKind::Var(_), Some(_)) = (&arg.kind, len) {
            match self.expr(arg)? {
                InferTy::Array(elem) => {
                    let wanted = self.library.scalar(self.spec, target, arg.span)?;
                    return self.require(elem, wanted, arg.span);
                }
                InferTy::StructArray(_) => return Ok(()),
                _ => {}
            }
        }
        // A `&mut f32` parameter passed on as it is (`bump(acc)`, Rust's reborrow).
        if let (ExprKind::Var(name), None, ValueType::Scalar(_)) = (&arg.kind, len, target) {
            if let Some(Binding::ScalarRef(given)) = self.scopes.lookup(name) {
                let wanted = self.library.scalar(self.spec, target, arg.span)?;
                return self.require(given, wanted, arg.span);
            }
        }
        // A `&S` parameter passed on as it is (`comm`, already a reference).
        if let ExprKind::Var(name) = &arg.kind {
            if let (Some(Binding::StructRef(given)), None, false) =
                (self.scopes.lookup(name), len, mutable)
            {
                return match self.library.resolve_value(self.spec, target, arg.span)? {
                    Resolved::Struct(wanted) if wanted == given => Ok(()),
                    _ => wrong(format!("`{callee}` takes `&{}` here", ty_name(target))),
                };
            }
        }
        let ExprKind::Reference {
            mutable: given_mut,
            place,
        } = &arg.kind
        else {
            let amp = if mutable { "&mut " } else { "&" };
            return wrong(format!(
                "`{}` of `{callee}` is a reference: pass `{amp}name`",
                param.name
            ));
        };
        if mutable && !given_mut {
            return wrong(format!(
                "`{callee}` writes through `{}`: pass `&mut ..`",
                param.name
            ));
        }
        let given = self.expr(place)?;
        match (len, given) {
            // `&mut x`, `&mut y[i]`, `&mut p.x` for a `&mut f32` parameter.
            (None, InferTy::Scalar(var)) if matches!(target, ValueType::Scalar(_)) => {
                let wanted = self.library.scalar(self.spec, target, arg.span)?;
                self.require(var, wanted, arg.span)
            }
            (None, InferTy::Struct(name)) => {
                match self.library.resolve_value(self.spec, target, arg.span)? {
                    Resolved::Struct(wanted) if wanted == name => Ok(()),
                    _ => wrong(format!("`{callee}` takes `&{}` here", ty_name(target))),
                }
            }
            (Some(_), InferTy::Array(elem)) => {
                let wanted = self.library.scalar(self.spec, target, arg.span)?;
                self.require(elem, wanted, arg.span)
            }
            // `&mut m` for a `&mut [[T; M]; N]` parameter: rows of the target's scalars.
            (Some(_), InferTy::Rows(elem)) => match target {
                ValueType::Array { elem: inner, .. } => {
                    let wanted = self.library.scalar(self.spec, inner, arg.span)?;
                    self.require(elem, wanted, arg.span)
                }
                _ => wrong(format!("`{callee}` takes `&[{}; N]` here", ty_name(target))),
            },
            (Some(_), InferTy::StructArray(name)) => {
                match self.library.resolve_value(self.spec, target, arg.span)? {
                    Resolved::Struct(wanted) if wanted == name => Ok(()),
                    _ => wrong(format!("`{callee}` takes `&[{}; N]` here", ty_name(target))),
                }
            }
            _ => wrong(format!(
                "`{}` of `{callee}` takes a reference to a {}",
                param.name,
                if len.is_some() {
                    "local array (`let mut a = [0u64; N];`)"
                } else {
                    "struct"
                }
            )),
        }
    }
}
