//! Calls of intrinsics (`thread_idx()`, `shfl_xor_sync(..)`, `atomic_add(..)`), math functions and
//! bit casts: each checked for its arguments and turned into its syntax node.

use cudajit_core::ast::{Builtin, Expr, ExprKind, ValueType};
use cudajit_core::intrinsics::Intrinsic;
use cudajit_core::math::MathFunction;

use super::parser::Parser;
use super::signature::value_type;
use super::span_at;

impl Parser<'_> {
    /// `receiver.function(args)`, or `T::function(receiver, args)`.
    pub(super) fn math(
        &mut self,
        function: MathFunction,
        receiver: &syn::Expr,
        args: &[&syn::Expr],
        whole: &dyn quote::ToTokens,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        if args.len() != function.extra_arguments() {
            self.errors.at(
                whole,
                format!(
                    "`{}` takes {} argument(s) besides the value it applies to",
                    function.name(),
                    function.extra_arguments()
                ),
            );
            return None;
        }
        let receiver = self.expr(receiver);
        let args: Vec<Option<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        Some(Expr {
            kind: ExprKind::Math {
                function,
                receiver: Box::new(receiver?),
                args: args.into_iter().collect::<Option<_>>()?,
            },
            span,
        })
    }

    /// `f32::from_bits(u)`, `f16::from_bits(u)`, `bf16::from_bits(u)`, `f64::from_bits(u)`.
    pub(super) fn bits_to_float(
        &mut self,
        call: &syn::ExprCall,
        ty: &ValueType,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        let float = match ty {
            ValueType::Scalar(float) if float.is_float() => *float,
            _ => {
                self.errors.at(
                    &call.func,
                    "`from_bits` makes a float from its bits: call it on a float type (`f32::from_bits(u)`, also `f64`, `f16`, `bf16`)",
                );
                return None;
            }
        };
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        let [bits] = args.as_slice() else {
            self.errors.at(
                call,
                "`from_bits` takes one argument: the unsigned integer holding the bits",
            );
            return None;
        };
        self.math(MathFunction::FromBits(float), bits, &[], call, span)
    }

    /// Barriers, fences, shared memory, atomics and warp operations.
    /// The argument of `tensor_map_address`: `&map`, a parameter by name.
    pub(super) fn tensor_map_argument(&mut self, arg: &syn::Expr) -> Option<Expr> {
        let name = match arg {
            syn::Expr::Reference(reference) if reference.mutability.is_none() => {
                match &*reference.expr {
                    syn::Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(name) = name else {
            self.errors.at(
                arg,
                "`tensor_map_address` takes the tensor-map parameter by reference: `tensor_map_address(&map)`",
            );
            return None;
        };
        let span = span_at(arg);
        Some(Expr {
            span,
            kind: ExprKind::Reference {
                mutable: false,
                place: Box::new(Expr {
                    span,
                    kind: ExprKind::Var(name.to_string()),
                }),
            },
        })
    }

    pub(super) fn device_intrinsic(
        &mut self,
        call: &syn::ExprCall,
        intrinsic: Intrinsic,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        let name = intrinsic.name();
        let turbofish = match &*call.func {
            syn::Expr::Path(path) => path.path.segments.last().map(|s| s.arguments.clone()),
            _ => None,
        };
        let ty = match (intrinsic.takes_type(), turbofish) {
            (_, turbofish) if intrinsic.is_array_access() => {
                self.array_access_type(name, turbofish)?
            }
            (true, Some(syn::PathArguments::AngleBracketed(angle))) if angle.args.len() == 1 => {
                match &angle.args[0] {
                    syn::GenericArgument::Type(ty) => match value_type(ty, &self.generics) {
                        Some(value) => Some(value),
                        None => {
                            self.errors.at(ty, format!("`{name}` holds scalars: give a scalar type or a generic type parameter"));
                            return None;
                        }
                    },
                    other => {
                        self.errors
                            .at(other, format!("`{name}` takes one type argument"));
                        return None;
                    }
                }
            }
            (true, _) => {
                self.errors.at(
                    &call.func,
                    format!(
                        "give the element type of `{name}` with a turbofish: `{name}::<f32>(..)`"
                    ),
                );
                return None;
            }
            (false, Some(syn::PathArguments::None) | None) => None,
            (false, Some(other)) => {
                self.errors
                    .at(other, format!("`{name}` takes no type arguments"));
                return None;
            }
        };
        if call.args.len() != intrinsic.arity() {
            self.errors.at(
                call,
                format!("`{name}` takes {} argument(s)", intrinsic.arity()),
            );
            return None;
        }
        let mut args = Vec::new();
        for (index, arg) in call.args.iter().enumerate() {
            if intrinsic == Intrinsic::TensorMapAddress {
                args.push(self.tensor_map_argument(arg)?);
            } else if index == 0 && intrinsic.takes_place() {
                let syn::Expr::Reference(reference) = arg else {
                    let message = if intrinsic.reads_place_only() {
                        format!("`{name}` takes the element as `&x[i]`")
                    } else {
                        format!("`{name}` takes the element to update as `&mut x[i]`")
                    };
                    self.errors.at(arg, message);
                    return None;
                };
                if reference.mutability.is_none() && !intrinsic.reads_place_only() {
                    self.errors.at(
                        arg,
                        format!("`{name}` updates its target: write `&mut x[i]`"),
                    );
                    return None;
                }
                let syn::Expr::Index(_) = &*reference.expr else {
                    let message = if intrinsic.reads_place_only() {
                        format!("`{name}` takes an element of a slice or shared array (`&x[i]`)")
                    } else {
                        "atomics apply to slice elements (`&mut x[i]`)".to_owned()
                    };
                    self.errors.at(&reference.expr, message);
                    return None;
                };
                let place = self.expr(&reference.expr)?;
                args.push(Expr {
                    span: place.span,
                    kind: ExprKind::Reference {
                        mutable: reference.mutability.is_some(),
                        place: Box::new(place),
                    },
                });
            } else if let (Intrinsic::VectorStore(_), 2, syn::Expr::Tuple(tuple)) =
                (intrinsic, index, arg)
            {
                // The values of a vector store: the one place a tuple is written.
                let elems: Vec<Option<Expr>> = tuple.elems.iter().map(|e| self.expr(e)).collect();
                args.push(Expr {
                    kind: ExprKind::Tuple(elems.into_iter().collect::<Option<_>>()?),
                    span: span_at(tuple),
                });
            } else {
                args.push(self.expr(arg)?);
            }
        }
        if let Intrinsic::OrderedAtomic { access, .. } = intrinsic {
            self.check_ordering(call, name, access, &args)?;
        }
        Some(Expr {
            kind: ExprKind::Intrinsic {
                intrinsic,
                ty,
                args,
            },
            span,
        })
    }

    /// An ordered atomic's ordering and scope (its last two arguments) must be variants
    /// the instruction can take: reported here, at the argument, when the kernel is built.
    pub(super) fn check_ordering(
        &mut self,
        call: &syn::ExprCall,
        name: &str,
        access: cudajit_core::intrinsics::AtomicAccess,
        args: &[Expr],
    ) -> Option<()> {
        let variant = |arg: &Expr| match &arg.kind {
            ExprKind::EnumVariant { variant, .. } => Some(variant.clone()),
            _ => None,
        };
        let (Some(order), Some(scope)) = (args.len().checked_sub(2), args.len().checked_sub(1))
        else {
            return None;
        };
        let checked = cudajit_core::intrinsics::memory_ordering(
            name,
            access,
            variant(&args[order]).as_deref(),
            variant(&args[scope]).as_deref(),
        );
        match checked {
            Ok(_) => Some(()),
            Err(error) => {
                let at = match error.argument {
                    cudajit_core::intrinsics::OrderingArgument::Order => order,
                    cudajit_core::intrinsics::OrderingArgument::Scope => scope,
                };
                self.errors.at(&call.args[at], error.message);
                None
            }
        }
    }

    pub(super) fn intrinsic(
        &mut self,
        call: &syn::ExprCall,
        name: &str,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        if !call.args.is_empty() {
            self.errors
                .at(&call.args, format!("`{name}()` takes no arguments"));
            return None;
        }
        let builtin = match name {
            "global_index" => Builtin::GlobalIndex,
            "grid_stride" => Builtin::GridStride,
            dim3 => {
                self.errors.at(
                    call,
                    format!("use one component of `{dim3}()`: `{dim3}().x`, `.y` or `.z`"),
                );
                return None;
            }
        };
        Some(Expr {
            kind: ExprKind::Builtin(builtin),
            span,
        })
    }
}

/// Intrinsics returning a `Dim3`, used as `name().x`.
pub(super) const DIM3_INTRINSICS: [&str; 4] = ["thread_idx", "block_idx", "block_dim", "grid_dim"];

/// Every intrinsic called as a function.
pub(super) const INTRINSICS: [&str; 6] = [
    "thread_idx",
    "block_idx",
    "block_dim",
    "grid_dim",
    "global_index",
    "grid_stride",
];

/// The name of an intrinsic called as `name()`, `cudajit::name()` or
/// `cudajit::prelude::name()`.
pub(super) fn intrinsic_name(func: &syn::Expr) -> Option<String> {
    let syn::Expr::Path(path) = func else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.arguments.is_none().then(|| s.ident.to_string()))
        .collect::<Option<_>>()?;
    match segments.as_slice() {
        [name] => Some(name.clone()),
        [root, name] if root == "cudajit" => Some(name.clone()),
        [root, _, name] if root == "cudajit" => Some(name.clone()),
        _ => None,
    }
}

impl Parser<'_> {
    /// The array type `[T; N]` of `vload::<T, N>` (`None` without a turbofish: a `let` with
    /// a type gives it, `let a: [f32; 4] = vload(x, i);`). `vstore`'s turbofish is
    /// checked for its shape only: the array it is given carries the type.
    fn array_access_type(
        &mut self,
        name: &str,
        turbofish: Option<syn::PathArguments>,
    ) -> Option<Option<ValueType>> {
        let angle = match turbofish {
            None | Some(syn::PathArguments::None) => return Some(None),
            Some(syn::PathArguments::AngleBracketed(angle)) => angle,
            Some(other) => {
                self.errors.at(other, format!("write `{name}::<T, N>(..)`"));
                return None;
            }
        };
        let args: Vec<_> = angle.args.iter().collect();
        let [syn::GenericArgument::Type(elem), len] = args.as_slice() else {
            self.errors.at(
                &angle,
                format!("`{name}` takes the element type and the length: `{name}::<f32, 4>(..)`, `{name}::<T, N>(..)`"),
            );
            return None;
        };
        // `N` may parse as a type (a const generic's name) or an expression (a literal).
        let len = match len {
            syn::GenericArgument::Const(expr) => quote::quote!(#expr),
            syn::GenericArgument::Type(ty) => quote::quote!(#ty),
            other => {
                self.errors.at(
                    other,
                    format!("the length of `{name}` is a literal or a const generic parameter"),
                );
                return None;
            }
        };
        let array: syn::Type = syn::parse_quote!([#elem; #len]);
        match value_type(&array, &self.generics) {
            Some(ty @ ValueType::Array { .. }) => Some(Some(ty)),
            _ => {
                self.errors.at(
                    &angle,
                    format!("`{name}` moves scalars: `{name}::<f32, 4>(..)`, `{name}::<T, N>(..)` with `T` a scalar type parameter and `N` a literal or const generic parameter"),
                );
                None
            }
        }
    }
}

/// Whether `expr` is a call of `vload` (`vload(x, i)`, `vload::<T, N>(x, i)`).
pub(super) fn is_vector_array_load(expr: &syn::Expr) -> bool {
    let syn::Expr::Call(call) = expr else {
        return false;
    };
    intrinsic_name(&super::call::strip_last_arguments(&call.func))
        .and_then(|name| Intrinsic::from_name(&name))
        == Some(Intrinsic::VectorLoadArray)
}

impl Parser<'_> {
    /// `let a: [T; N] = vload(x, i);`: the annotation gives the load its array type.
    pub(super) fn vector_array_let(
        &mut self,
        name: String,
        mutable: bool,
        annotation: &syn::TypeArray,
        init: &syn::Expr,
        span: cudajit_core::Span,
    ) -> Option<cudajit_core::ast::Stmt> {
        let annotated = value_type(&syn::Type::Array(annotation.clone()), &self.generics);
        let mut value = self.expr(init)?;
        if let ExprKind::Intrinsic { ty, .. } = &mut value.kind {
            match (ty.is_none(), annotated) {
                (true, Some(array @ ValueType::Array { .. })) => *ty = Some(array),
                (true, _) => {
                    self.errors.at(
                        annotation,
                        "`vload` loads an array of scalars: `let a: [f32; 4] = vload(x, i);`",
                    );
                    return None;
                }
                // `let a: [T; N] = vload::<T, N>(..)`: rustc checks the two agree.
                (false, _) => {}
            }
        }
        self.bind(&name);
        Some(cudajit_core::ast::Stmt::Let {
            name,
            mutable,
            ty: None,
            init: Some(value),
            span,
        })
    }
}
