//! Validation of IR modules.
//!
//! As in naga, validation is separate from construction and its result is a proof:
//! [`validate`] returns a [`KernelInfo`] holding the type of every expression, and back ends
//! take it alongside the module, so they can rely on a checked IR and need not re-derive
//! types. Handles are checked first (`handles`), then types and control flow
//! (`function`).

mod error;
mod function;
mod handles;

pub use error::{ValidationError, ValidationErrorKind};

use crate::ir::{AddressSpace, Handle, Module, Type, TypeInner};
use crate::{Scalar, Span};

/// The resolved type of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprType {
    Scalar(Scalar),
    /// A pointer to a value of type `base`.
    Pointer {
        base: Handle<Type>,
        space: AddressSpace,
        mutable: bool,
    },
    /// A slice (pointer and length).
    Slice {
        base: Handle<Type>,
        mutable: bool,
    },
    /// A value of an aggregate type (struct or array).
    Value(Handle<Type>),
}

impl ExprType {
    /// The scalar type, if this is a scalar.
    pub fn scalar(self) -> Option<Scalar> {
        match self {
            ExprType::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The type of a value of the IR type `ty`.
    pub fn of(module: &Module, ty: Handle<Type>) -> ExprType {
        match module.types[ty].inner {
            TypeInner::Scalar(s) => ExprType::Scalar(s),
            TypeInner::Slice { base, mutable } => ExprType::Slice { base, mutable },
            TypeInner::Pointer {
                base,
                space,
                mutable,
            } => ExprType::Pointer {
                base,
                space,
                mutable,
            },
            TypeInner::Array { .. } | TypeInner::Struct { .. } | TypeInner::TensorMap => {
                ExprType::Value(ty)
            }
        }
    }

    pub(crate) fn describe(self, module: &Module) -> String {
        match self {
            ExprType::Scalar(s) => format!("`{s}`"),
            ExprType::Pointer { base, mutable, .. } => format!(
                "pointer to {}{}",
                if mutable { "mutable " } else { "" },
                describe_type(module, base)
            ),
            ExprType::Slice { base, mutable } => format!(
                "`&{}[{}]`",
                if mutable { "mut " } else { "" },
                describe_type(module, base)
            ),
            ExprType::Value(ty) => describe_type(module, ty),
        }
    }
}

pub(crate) fn describe_type(module: &Module, ty: Handle<Type>) -> String {
    match module.types.try_get(ty).map(|t| &t.inner) {
        Some(TypeInner::Scalar(s)) => s.to_string(),
        Some(TypeInner::Struct { name, .. }) => name.clone(),
        Some(TypeInner::TensorMap) => "TensorMap".into(),
        Some(TypeInner::Array { base, len }) => {
            format!("[{}; {len}]", describe_type(module, *base))
        }
        Some(TypeInner::Slice { base, mutable }) => format!(
            "&{}[{}]",
            if *mutable { "mut " } else { "" },
            describe_type(module, *base)
        ),
        Some(TypeInner::Pointer { base, mutable, .. }) => format!(
            "*{} {}",
            if *mutable { "mut" } else { "const" },
            describe_type(module, *base)
        ),
        None => format!("<bad type {}>", ty.index()),
    }
}

/// What validation proved about one function (part of a [`KernelInfo`]).
#[derive(Clone, Debug)]
pub struct FunctionInfo {
    /// The type of each expression, indexed like the function's expression arena.
    expression_types: Vec<ExprType>,
}

impl FunctionInfo {
    /// The type of `expression`.
    pub fn type_of(&self, expression: Handle<crate::ir::Expression>) -> ExprType {
        self.expression_types[expression.index()]
    }

    /// The type of every expression, indexed like the function's expression arena.
    pub fn expression_types(&self) -> &[ExprType] {
        &self.expression_types
    }
}

/// What validation proved about a module; back ends require it.
///
/// A proof, as naga's `ModuleInfo` is: its fields are private and only [`validate`]
/// builds one, so a back end holding a `KernelInfo` knows its module passed validation.
///
/// ```compile_fail
/// // Nothing outside the validator can make one.
/// let info = cudajit_core::valid::KernelInfo::default();
/// ```
#[derive(Clone, Debug)]
pub struct KernelInfo {
    /// One entry per function, indexed like the module's function arena.
    functions: Vec<FunctionInfo>,
}

impl KernelInfo {
    /// The info of `function`.
    pub fn function(&self, function: Handle<crate::ir::Function>) -> &FunctionInfo {
        &self.functions[function.index()]
    }
}

/// Checks `module` and returns the types of all its expressions.
pub fn validate(module: &Module) -> Result<KernelInfo, ValidationError> {
    let module_error = |kind| ValidationError {
        function: String::from("<module>"),
        span: Span::default(),
        kind,
    };
    handles::check_types(module).map_err(module_error)?;
    let mut info = KernelInfo {
        functions: Vec::with_capacity(module.functions.len()),
    };
    for (handle, function) in module.functions.iter() {
        handles::check_function(module, function).map_err(|kind| ValidationError {
            function: function.name.clone(),
            span: function.span,
            kind,
        })?;
        if !module.entry_points.iter().any(|e| e.function == handle) {
            function::check_device_signature(module, function)?;
        }
        info.functions
            .push(function::validate_function(module, function)?);
    }
    for entry in &module.entry_points {
        let function = module.functions.try_get(entry.function).ok_or_else(|| {
            module_error(ValidationErrorKind::MissingEntryFunction(
                entry.symbol.clone(),
            ))
        })?;
        function::check_kernel_signature(module, function)?;
    }
    Ok(info)
}
