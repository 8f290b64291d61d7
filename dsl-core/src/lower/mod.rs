//! Lowering of captured syntax ([`crate::ast`]) to the typed IR ([`crate::ir`]).
//!
//! First `infer` recovers the type of every expression, then the body is translated
//! statement by statement. Rust constructs that have no IR node of their own are expressed
//! with the ones that exist: `while` and `for` become [`Statement::Loop`]s, `if` used as a
//! value writes a temporary local, `global_index()` is arithmetic on the thread indices.
//!
//! This module holds the entry ([`lower_kernel`]), the module being built (device
//! functions instantiated once per specialisation) and the `Lowerer` of one function
//! with its small IR-building helpers; the translation itself is split by construct:
//! `stmt` (statements, blocks, returns), `expr` (expressions), `places` (fields,
//! elements, parameters), `call` (device and extern calls), `intrinsic` (intrinsics,
//! inline PTX, shared arrays, assertions), `matching` (`match`), `loops`,
//! `views` (sub-slices bound to names, `split_at`), `closures` (device functions
//! instantiated for the closures passed to them) and `drops` (`#[device_drop]` scope
//! ends). `spec` resolves a specialisation's types.

mod arrays;
mod call;
mod closures;
mod constant_condition;
mod drops;
mod error;
mod expr;
mod generic_structs;
mod infer;
mod instance_names;
mod intrinsic;
mod loops;
mod matching;
mod places;
mod rows;
mod scope;
mod spec;
mod stmt;
mod tables;
mod tensor_map;
mod tensor_op;
mod tuple_arguments;
mod views;

pub use error::LowerError;
pub use spec::{ReachableItems, Resolved, Specialization};

use crate::ast::{
    self, BinaryOp, Builtin, Else, Expr, ExprKind, FunctionSource, IfStmt, Param, ParamType,
    RangeExpr, Stmt, ValueType,
};
use crate::intrinsics::Intrinsic;
use crate::ir::{
    AddressSpace, Block, BuiltinValue, CompileFlag, EntryPoint, Expression, ExternFunction,
    Function, FunctionArgument, Handle, Literal, LocalVariable, LoopId, Module, SharedVariable,
    Statement, StructMember, Type, TypeInner,
};
use crate::{Scalar, Span};
use infer::{Instance, TypeTable};
use scope::Scopes;

/// The symbol of a kernel's specialisation: the kernel's name, then the specialisation's
/// values (`scale_f32_4`), so every specialisation of a kernel can live in one module.
pub fn entry_symbol(name: &str, spec: &Specialization) -> String {
    let suffix = spec.suffix();
    if suffix.is_empty() {
        name.to_owned()
    } else {
        format!("{name}_{suffix}")
    }
}

/// Lowers a kernel under `spec` to a module with one entry point (named by
/// [`entry_symbol`]) and the instances of the device functions it reaches in `library`.
pub fn lower_kernel(
    kernel: &FunctionSource,
    library: &ReachableItems,
    spec: &Specialization,
) -> Result<Module, LowerError> {
    spec.check_complete(kernel)?;
    let mut program = Program {
        module: Module::default(),
        library,
        instances: Vec::new(),
        active: Vec::new(),
    };
    let function = program.lower_function(kernel, spec, true)?;
    program.module.entry_points.push(EntryPoint {
        symbol: entry_symbol(&kernel.name, spec),
        function,
        max_threads: kernel.max_threads,
    });
    Ok(program.module)
}

/// The module being built and the device function instances already in it.
struct Program<'a> {
    module: Module,
    library: &'a ReachableItems,
    instances: Vec<(Instance, Handle<Function>)>,
    /// Functions being lowered, outermost first, to report recursion.
    active: Vec<String>,
}

impl Program<'_> {
    /// The IR function of a device function instance, lowering it on first use.
    fn instance(
        &mut self,
        instance: &Instance,
        span: Span,
    ) -> Result<Handle<Function>, LowerError> {
        if let Some((_, handle)) = self.instances.iter().find(|(i, _)| i == instance) {
            return Ok(*handle);
        }
        if self.active.contains(&instance.name) {
            let cycle = self.active.join(" → ");
            return Err(LowerError::new(
                span,
                format!(
                    "recursion is not supported in kernels and device functions: {cycle} → {}",
                    instance.name
                ),
            ));
        }
        let library = self.library;
        let source = library.get(&instance.name).ok_or_else(|| {
            LowerError::new(
                span,
                format!("`{}` is not a known `#[device]` function", instance.name),
            )
        })?;
        let substituted = generic_structs::substitute(source, &instance.spec.structs)?;
        let source = &substituted;
        instance.spec.check_complete(source)?;
        let handle = if instance.closures.is_empty() {
            self.lower_function(source, &instance.spec, false)?
        } else {
            // One instance per closure: named apart from the function's other instances.
            let made = self.instances.len();
            let name = format!("{}_closure{made}", source.name);
            let source = closures::instantiate(source, &instance.closures, name)?;
            self.lower_function(&source, &instance.spec, false)?
        };
        self.instances.push((instance.clone(), handle));
        Ok(handle)
    }

    fn lower_function(
        &mut self,
        source: &FunctionSource,
        spec: &Specialization,
        is_kernel: bool,
    ) -> Result<Handle<Function>, LowerError> {
        self.active.push(source.name.clone());
        let source = instance_names::instantiate_names(source, spec);
        let source = tables::with_tables(&source);
        let result = self.lower_function_body(&source, spec, is_kernel);
        self.active.pop();
        let function = result?;
        Ok(self.module.functions.append(function))
    }

    fn lower_function_body(
        &mut self,
        source: &FunctionSource,
        spec: &Specialization,
        is_kernel: bool,
    ) -> Result<Function, LowerError> {
        let library = self.library;
        let types = infer::infer(source, spec, library)?;
        let name = if is_kernel {
            source.name.clone()
        } else {
            entry_symbol(&source.name, spec)
        };
        let mut lowerer = Lowerer {
            program: self,
            types: &types,
            spec,
            function: Function {
                name,
                span: source.span,
                file: source.file.clone(),
                ..Function::default()
            },
            scopes: Scopes::default(),
            struct_names: Default::default(),
            loops: Vec::new(),
            next_loop: 0,
            drops: Vec::new(),
            views: Vec::new(),
            result_array: None,
            array_result: None,
        };
        let mut body = Block::new();
        lowerer.scopes.push();
        // Rust constants the body names: literals, like the const generics.
        for constant in source.constants.iter().filter(|c| c.len.is_none()) {
            lowerer
                .scopes
                .bind(constant.name, Binding::Constant(constant.literal()));
        }
        for generic in &source.generics {
            if let Some(value) = spec.constant(&generic.name) {
                lowerer.scopes.bind(&generic.name, Binding::Constant(value));
            }
        }
        for param in &source.params {
            if is_kernel {
                unit_kernel_parameter(library, param)?;
            }
            lowerer.param(param, &mut body)?;
        }
        if let Some(ValueType::Array { elem, len }) = &source.result {
            // Written through a hidden last parameter, the caller's array.
            let len = spec.array_len(len, source.span)?;
            let array = lowerer.array_type(elem, len, source.span)?;
            let ty = lowerer.array_pointer_type(array, true);
            lowerer.result_array = Some((lowerer.function.arguments.len() as u32, len));
            lowerer.function.arguments.push(FunctionArgument {
                name: "result".to_owned(),
                ty,
                span: source.span,
            });
        } else if let Some(result) = &source.result {
            let ty = match library.resolve_value(spec, result, source.span)? {
                Resolved::Scalar(scalar) => lowerer.scalar_type(scalar),
                Resolved::Struct(name) => lowerer.struct_type(name, source.span)?,
            };
            lowerer.function.result = Some(ty);
        }
        match (&source.body.tail, &source.result) {
            (Some(tail), Some(_)) => lowerer.function_tail(&source.body, tail, &mut body)?,
            _ => lowerer.block_into(&source.body, &mut body)?,
        }
        let mut function = lowerer.function;
        function.body = body;
        Ok(function)
    }
}

/// A unit struct as a kernel parameter: it has no bytes, and a GPU kernel parameter of
/// none is not one ptxas accepts (an incomplete array), so it is refused with the value's
/// other home, the kernel itself.
fn unit_kernel_parameter(library: &ReachableItems, param: &Param) -> Result<(), LowerError> {
    let ParamType::Value(ValueType::Struct(name)) = &param.ty else {
        return Ok(());
    };
    match library.get_struct(name) {
        Some(layout) if layout.size == 0 && layout.enum_repr.is_none() => Err(LowerError::new(
            param.span,
            format!(
                "kernel parameter `{}` is the unit struct `{name}`, which has no bytes for the GPU to pass: build it in the kernel (`let {} = {name};`), or give `{name}` a field",
                param.name, param.name
            ),
        )),
        _ => Ok(()),
    }
}

/// What a name refers to in the IR being built.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Argument(u32),
    Local(Handle<LocalVariable>),
    /// A const generic or `#[comptime]` parameter: a constant of the specialisation.
    Constant(Literal),
    /// A shared array bound by `let`.
    Shared(Handle<SharedVariable>),
    /// A local array bound by `let`, of `len` elements.
    Array(Handle<LocalVariable>, u32),
    /// An array parameter of `len` elements (`a: [f32; 4]`, `acc: &mut [f32; 16]`): the
    /// argument points to it.
    ArrayArgument(u32, u32),
    /// A slice at a device address bound by `let` (`slice_at`): the address and length
    /// live in hidden locals, so every use sees the values of the `let`.
    RawSlice {
        address: Handle<LocalVariable>,
        length: Handle<LocalVariable>,
        elem: Handle<Type>,
        mutable: bool,
    },
    /// A sub-slice bound by `let` (or `split_at`): entry `.0` of the function's views.
    View(usize),
}

struct Lowerer<'a, 'p> {
    program: &'a mut Program<'p>,
    types: &'a TypeTable,
    spec: &'a Specialization,
    function: Function,
    scopes: Scopes<Binding>,
    /// The struct type of each struct-valued name (parameters, slices of structs, locals).
    struct_names: std::collections::HashMap<String, String>,
    /// Enclosing loops, innermost last, with their labels.
    loops: Vec<(Option<String>, LoopId)>,
    next_loop: u32,
    /// The droppable locals of the open scopes, innermost last (see `drops`).
    drops: Vec<drops::DropFrame>,
    /// The sub-slices bound by `let` so far (see `views`).
    views: Vec<views::SliceView>,
    /// For a function returning an array: its hidden result argument and the length.
    result_array: Option<(u32, u32)>,
    /// The array the last call of a function returning one wrote (`arrays.rs`).
    array_result: Option<(Handle<LocalVariable>, u32)>,
}

impl Lowerer<'_, '_> {
    pub(super) fn scalar_type(&mut self, scalar: Scalar) -> Handle<Type> {
        self.program.module.types.insert(Type {
            inner: TypeInner::Scalar(scalar),
        })
    }

    /// Declares a parameter. `#[comptime]` parameters are constants of the
    /// specialisation, not arguments.
    /// The IR type of the `#[derive(DeviceCopy)]` struct `name`.
    pub(super) fn struct_type(
        &mut self,
        name: &str,
        span: Span,
    ) -> Result<Handle<Type>, LowerError> {
        let library = self.program.library;
        let layout = library.struct_layout(name, span)?;
        let mut members = Vec::new();
        for field in layout.fields {
            members.push(StructMember {
                name: field.name.to_owned(),
                ty: self.field_type(&field.ty, span)?,
                offset: field.offset as u32,
            });
        }
        Ok(self.program.module.types.insert(Type {
            inner: TypeInner::Struct {
                name: layout.name.to_owned(),
                members,
                size: layout.size as u32,
                align: layout.align as u32,
            },
        }))
    }

    /// The IR type of a struct's field: a scalar (an enum as its integer), a struct, or an
    /// array of them.
    fn field_type(
        &mut self,
        ty: &crate::layout::FieldType,
        span: Span,
    ) -> Result<Handle<Type>, LowerError> {
        use crate::layout::FieldType;
        Ok(match ty {
            FieldType::Scalar(scalar) => self.scalar_type(*scalar),
            FieldType::Struct(layout) => match layout.enum_repr {
                Some(repr) => self.scalar_type(repr),
                None => self.struct_type(layout.name, span)?,
            },
            FieldType::Array { elem, len } => {
                let base = self.field_type(elem, span)?;
                self.program.module.types.insert(Type {
                    inner: TypeInner::Array {
                        base,
                        len: *len as u32,
                    },
                })
            }
        })
    }

    pub(super) fn local(
        &mut self,
        name: &str,
        ty: Handle<Type>,
        span: Span,
    ) -> Handle<LocalVariable> {
        self.function.locals.append(LocalVariable {
            name: name.to_owned(),
            ty,
            span,
        })
    }

    pub(super) fn expr_node(&mut self, expression: Expression, span: Span) -> Handle<Expression> {
        self.function.add_expression(expression, span)
    }

    pub(super) fn type_of(&self, expr: &Expr) -> Result<Scalar, LowerError> {
        self.types
            .expr(expr)
            .ok_or_else(|| LowerError::new(expr.span, "internal: expression has no inferred type"))
    }

    pub(super) fn literal(&mut self, literal: Literal, span: Span) -> Handle<Expression> {
        self.expr_node(Expression::Literal(literal), span)
    }

    pub(super) fn int(&mut self, value: u64, ty: Scalar, span: Span) -> Handle<Expression> {
        self.literal(Literal::Int { bits: value, ty }, span)
    }

    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        left: Handle<Expression>,
        right: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        self.expr_node(Expression::Binary { op, left, right }, span)
    }

    pub(super) fn cast(
        &mut self,
        value: Handle<Expression>,
        to: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        self.expr_node(Expression::Cast { value, to }, span)
    }

    pub(super) fn load_local(
        &mut self,
        local: Handle<LocalVariable>,
        span: Span,
    ) -> Handle<Expression> {
        self.expr_node(Expression::LocalLoad(local), span)
    }

    /// Evaluates `value` once into a fresh hidden local, for values used many times.
    pub(super) fn temporary(
        &mut self,
        name: &str,
        value: Handle<Expression>,
        ty: Scalar,
        span: Span,
        block: &mut Block,
    ) -> Handle<LocalVariable> {
        let ty = self.scalar_type(ty);
        let local = self.local(name, ty, span);
        block.push(Statement::LocalStore { local, value }, span);
        local
    }

    pub(super) fn builtin_u64(&mut self, value: BuiltinValue, span: Span) -> Handle<Expression> {
        let raw = self.expr_node(Expression::Builtin(value), span);
        self.cast(raw, Scalar::Usize, span)
    }

    pub(super) fn builtin(&mut self, builtin: Builtin, span: Span) -> Handle<Expression> {
        let value = match builtin {
            Builtin::ThreadIdx(axis) => BuiltinValue::ThreadIdx(axis),
            Builtin::BlockIdx(axis) => BuiltinValue::BlockIdx(axis),
            Builtin::BlockDim(axis) => BuiltinValue::BlockDim(axis),
            Builtin::GridDim(axis) => BuiltinValue::GridDim(axis),
            Builtin::GlobalIndex => {
                let block = self.builtin_u64(BuiltinValue::BlockIdx(ast::Axis::X), span);
                let dim = self.builtin_u64(BuiltinValue::BlockDim(ast::Axis::X), span);
                let thread = self.builtin_u64(BuiltinValue::ThreadIdx(ast::Axis::X), span);
                let base = self.binary(BinaryOp::Mul, block, dim, span);
                return self.binary(BinaryOp::Add, base, thread, span);
            }
            Builtin::GridStride => {
                let grid = self.builtin_u64(BuiltinValue::GridDim(ast::Axis::X), span);
                let dim = self.builtin_u64(BuiltinValue::BlockDim(ast::Axis::X), span);
                return self.binary(BinaryOp::Mul, grid, dim, span);
            }
        };
        self.expr_node(Expression::Builtin(value), span)
    }
}
