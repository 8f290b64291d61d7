//! Preparing a validated module for the interpreter: each function's structured body
//! becomes a flat list of register operations with jumps, once per kernel specialisation.
//!
//! Expressions are trees evaluated where their statement runs (see [`cudajit_core::ir`]); each is
//! compiled into operations in evaluation order, writing a register of its own, so the
//! interpreter neither walks trees nor allocates. Literals, arguments, local variables and
//! the thread's built-in values already live in registers and cost no operation. A thread
//! stops at the operations that synchronise (barriers, shuffles, votes, `activemask`) and
//! is resumed at the next operation, which a flat program makes a matter of keeping its
//! program counter.
//!
//! Rooms: the instruction set is [`crate::isa`], below both this compiler and the
//! interpreter; here the [`Program`] and the function compiler's
//! state and helpers; `expression.rs`, `statement.rs`, `intrinsic.rs`, `inline_ptx.rs`
//! (`ptx!`) and `constant.rs` (conditions known at compile time) what it compiles.

use cudajit_core::ir::{
    Expression, Function, Handle, Literal, LocalVariable, LoopId, Module, TypeInner,
};
use cudajit_core::valid::{ExprType, FunctionInfo, KernelInfo};
use cudajit_core::{Scalar, Span};

use super::error::SimError;

mod constant;
mod expression;
mod inline_ptx;
mod intrinsic;
mod statement;
pub(crate) mod uses;

use crate::isa::{Builtin, CompiledFunction, ExternInfo, Op, PrintFormat, Reg, SharedLayout};

/// A kernel parameter, as a launch must supply it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimParameter {
    Scalar(Scalar),
    Slice {
        elem: Scalar,
        mutable: bool,
    },
    /// A slice of `#[repr(C)]` structs of `size` bytes each (padding included), such as
    /// `&mut [Body]`: a pointer and a length, like a slice of scalars.
    StructSlice {
        size: u32,
        mutable: bool,
    },
    /// A `#[repr(C)]` struct of `size` bytes passed by value (e.g. NCCL's `DevComm`): the
    /// launch keeps its bytes in read-only memory and the kernel reads its fields there.
    Struct {
        size: u32,
    },
    /// A `TensorMap` (grid-constant): a [`crate::SimArg::TensorMap`], whose address the
    /// kernel holds.
    TensorMap,
}

/// Choices that are not in the IR.
#[derive(Clone, Debug, Default)]
pub struct ProgramOptions {
    /// The value of `cfg!(debug_assertions)` for `debug_assert!`s.
    pub debug_assertions: bool,
    /// The kernel's source file, for messages.
    pub file: String,
}

/// A kernel prepared for the simulator: build it once per specialisation with
/// [`Program::new`], launch it any number of times with [`super::launch`].
#[derive(Debug)]
pub struct Program {
    pub(crate) kernel: String,
    pub(crate) file: String,
    pub(crate) functions: Vec<CompiledFunction>,
    pub(crate) entry: u32,
    pub(crate) parameters: Vec<SimParameter>,
    /// Each parameter's name, for messages.
    pub(crate) parameter_names: Vec<String>,
    pub(crate) formats: Vec<PrintFormat>,
    pub(crate) messages: Vec<String>,
    pub(crate) shared: Vec<SharedLayout>,
    /// The `#[extern_device]` functions, indexed like the module's.
    pub(crate) externs: Vec<ExternInfo>,
    /// Bytes of static shared memory; the dynamic shared memory starts there.
    pub(crate) static_shared_bytes: u32,
    /// Whether some function calls `grid_sync()`, which only a cooperative launch runs.
    pub(crate) grid_sync: bool,
}

impl Program {
    /// Prepares the kernel `symbol` of `module` (the first entry point if `None`).
    pub fn new(
        module: &Module,
        info: &KernelInfo,
        symbol: Option<&str>,
        options: &ProgramOptions,
    ) -> Result<Program, SimError> {
        let entry = match symbol {
            Some(symbol) => module.entry_points.iter().find(|e| e.symbol == symbol),
            None => module.entry_points.first(),
        };
        let Some(entry) = entry else {
            return Err(SimError::Launch {
                kernel: symbol.unwrap_or("?").to_owned(),
                detail: "the module has no such entry point".into(),
            });
        };
        let kernel = entry.symbol.clone();
        let unsupported = |function: &Function, span: Span, what: &str| SimError::Unsupported {
            kernel: kernel.clone(),
            function: function.name.clone(),
            location: format!(
                "{}:{span}",
                if function.file.is_empty() {
                    &options.file
                } else {
                    &function.file
                }
            ),
            what: what.to_owned(),
        };

        let mut shared = Vec::new();
        let mut offset = 0u32;
        for (_, variable) in module.shared.iter() {
            let TypeInner::Scalar(elem) = module.types[variable.elem].inner else {
                return Err(SimError::Unsupported {
                    kernel: kernel.clone(),
                    function: variable.name.clone(),
                    location: options.file.clone(),
                    what: "a shared array of non-scalars".into(),
                });
            };
            if let Some(len) = variable.len {
                shared.push(SharedLayout {
                    name: variable.name.clone(),
                    offset,
                    elem,
                    len: Some(len),
                });
                offset = (offset + len * elem.size_bytes()).next_multiple_of(16);
            }
        }
        let static_shared_bytes = offset;
        for (_, variable) in module.shared.iter() {
            if variable.len.is_none() {
                if let TypeInner::Scalar(elem) = module.types[variable.elem].inner {
                    shared.push(SharedLayout {
                        name: variable.name.clone(),
                        offset: static_shared_bytes,
                        elem,
                        len: None,
                    });
                }
            }
        }

        let mut program = Program {
            kernel: kernel.clone(),
            file: options.file.clone(),
            functions: Vec::new(),
            entry: entry.function.index() as u32,
            parameters: Vec::new(),
            parameter_names: Vec::new(),
            formats: Vec::new(),
            messages: Vec::new(),
            shared,
            externs: module
                .externs
                .iter()
                .map(|(_, f)| ExternInfo {
                    name: f.name.clone(),
                    symbol: f.symbol.clone(),
                })
                .collect(),
            static_shared_bytes,
            grid_sync: false,
        };
        for (handle, function) in module.functions.iter() {
            let compiled = FunctionCompiler::new(
                module,
                function,
                info.function(handle),
                &mut program,
                options,
            )
            .compile()
            .map_err(|(span, what)| unsupported(function, span, &what))?;
            program.functions.push(compiled);
        }
        program.size_stacks().map_err(|what| {
            unsupported(&module.functions[entry.function], Span::default(), &what)
        })?;

        let kernel_function = &module.functions[entry.function];
        for argument in &kernel_function.arguments {
            let parameter = match &module.types[argument.ty].inner {
                TypeInner::Scalar(s) => SimParameter::Scalar(*s),
                TypeInner::Slice { base, mutable } => match module.types[*base].inner {
                    TypeInner::Scalar(elem) => SimParameter::Slice {
                        elem,
                        mutable: *mutable,
                    },
                    TypeInner::Struct { size, .. } => SimParameter::StructSlice {
                        size,
                        mutable: *mutable,
                    },
                    _ => {
                        return Err(unsupported(
                            kernel_function,
                            argument.span,
                            "a slice of this element type as a kernel parameter",
                        ))
                    }
                },
                TypeInner::Struct { size, .. } => SimParameter::Struct { size: *size },
                TypeInner::TensorMap => SimParameter::TensorMap,
                _ => {
                    return Err(unsupported(
                        kernel_function,
                        argument.span,
                        "this kernel parameter type",
                    ))
                }
            };
            program.parameters.push(parameter);
            program.parameter_names.push(argument.name.clone());
        }
        Ok(program)
    }

    /// The kernel's entry symbol.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// The parameters a launch supplies, in order (`#[comptime]` ones are compiled in).
    pub fn parameters(&self) -> &[SimParameter] {
        &self.parameters
    }

    /// The name of parameter `index` (empty if there is none).
    pub(crate) fn parameter_name(&self, index: usize) -> &str {
        self.parameter_names.get(index).map_or("", String::as_str)
    }

    /// Bytes of static shared memory per block.
    pub fn static_shared_bytes(&self) -> u32 {
        self.static_shared_bytes
    }

    /// Whether the kernel calls `grid_sync()`, so that it must be launched cooperatively.
    pub fn uses_grid_sync(&self) -> bool {
        self.grid_sync
    }

    /// Computes each function's deepest chain of frames (the language has no recursion;
    /// a cycle here is reported rather than trusted).
    fn size_stacks(&mut self) -> Result<(), String> {
        let count = self.functions.len();
        let mut done = vec![false; count];
        for _ in 0..=count {
            let mut progress = false;
            for f in 0..count {
                if done[f] {
                    continue;
                }
                let callees: Vec<usize> = self.functions[f]
                    .code
                    .iter()
                    .filter_map(|op| match op {
                        Op::Call { function, .. } => Some(*function as usize),
                        _ => None,
                    })
                    .collect();
                if callees.iter().all(|&c| done[c]) {
                    let (registers, bytes) = callees.iter().fold((0, 0), |(r, b), &c| {
                        let callee = &self.functions[c];
                        (
                            r.max(callee.stack_registers),
                            b.max(callee.stack_local_bytes),
                        )
                    });
                    let function = &mut self.functions[f];
                    function.stack_registers = function.registers + registers;
                    function.stack_local_bytes = function.local_bytes + bytes;
                    done[f] = true;
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
        if done.iter().all(|d| *d) {
            Ok(())
        } else {
            Err("recursive device functions".into())
        }
    }

    /// The shared variable holding byte `offset` of shared memory, and the element index.
    pub(crate) fn shared_at(&self, offset: u64) -> Option<(&SharedLayout, u64)> {
        self.shared
            .iter()
            .filter(|s| u64::from(s.offset) <= offset)
            .filter(|s| match s.len {
                Some(len) => offset < u64::from(s.offset + len * s.elem.size_bytes()),
                None => true,
            })
            .max_by_key(|s| s.offset)
            .map(|s| {
                (
                    s,
                    (offset - u64::from(s.offset)) / u64::from(s.elem.size_bytes()),
                )
            })
    }
}

/// A jump target whose position may not be known yet.
#[derive(Clone, Copy)]
struct Label(usize);

struct FunctionCompiler<'a> {
    module: &'a Module,
    function: &'a Function,
    info: &'a FunctionInfo,
    program: &'a mut Program,
    options: &'a ProgramOptions,
    code: Vec<Op>,
    spans: Vec<Span>,
    init: Vec<u64>,
    builtins: Vec<(Reg, usize)>,
    /// First register of each argument.
    arguments: Vec<Reg>,
    /// First register of each scalar (or slice) local; byte offset of each array local.
    locals: Vec<LocalSlot>,
    local_bytes: u32,
    /// The register of each expression's value, once it has one.
    temps: Vec<Option<Reg>>,
    constants: Vec<(u64, Reg)>,
    builtin_regs: Vec<(usize, Reg)>,
    labels: Vec<Option<u32>>,
    fixups: Vec<(usize, Label)>,
    /// Enclosing loops: id, continue label, exit label.
    loops: Vec<(LoopId, Label, Label)>,
    /// The span of the statement being compiled.
    span: Span,
}

#[derive(Clone, Copy)]
enum LocalSlot {
    Register(Reg),
    /// A local array: `len` elements of `size` bytes (scalars or structs).
    Array {
        offset: u32,
        len: u32,
        size: u32,
    },
    /// A struct (or tuple) local: `size` bytes of the frame's local memory.
    Struct {
        offset: u32,
        size: u32,
    },
}

type CompileResult<T> = Result<T, (Span, String)>;

impl<'a> FunctionCompiler<'a> {
    fn new(
        module: &'a Module,
        function: &'a Function,
        info: &'a FunctionInfo,
        program: &'a mut Program,
        options: &'a ProgramOptions,
    ) -> Self {
        FunctionCompiler {
            module,
            function,
            info,
            program,
            options,
            code: Vec::new(),
            spans: Vec::new(),
            init: Vec::new(),
            builtins: Vec::new(),
            arguments: Vec::new(),
            locals: Vec::new(),
            local_bytes: 0,
            temps: vec![None; function.expressions.len()],
            constants: Vec::new(),
            builtin_regs: Vec::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
            loops: Vec::new(),
            span: function.span,
        }
    }

    fn unsupported<T>(&self, what: impl Into<String>) -> CompileResult<T> {
        Err((self.span, what.into()))
    }

    fn register(&mut self, width: u32) -> Reg {
        let reg = self.init.len() as Reg;
        self.init.extend(std::iter::repeat_n(0, width as usize));
        reg
    }

    fn constant(&mut self, bits: u64) -> Reg {
        if let Some((_, reg)) = self.constants.iter().find(|(b, _)| *b == bits) {
            return *reg;
        }
        let reg = self.register(1);
        self.init[reg as usize] = bits;
        self.constants.push((bits, reg));
        reg
    }

    fn builtin(&mut self, builtin: Builtin) -> Reg {
        let index = builtin.index();
        if let Some((_, reg)) = self.builtin_regs.iter().find(|(i, _)| *i == index) {
            return *reg;
        }
        let reg = self.register(1);
        self.builtins.push((reg, index));
        self.builtin_regs.push((index, reg));
        reg
    }

    fn temp(&mut self, handle: Handle<Expression>, width: u32) -> Reg {
        if let Some(reg) = self.temps[handle.index()] {
            return reg;
        }
        let reg = self.register(width);
        self.temps[handle.index()] = Some(reg);
        reg
    }

    fn emit(&mut self, op: Op) {
        self.code.push(op);
        self.spans.push(self.span);
    }

    /// Checks the integer divisor `expression` (in `reg`) before a division, unless it is
    /// a literal other than zero (a constant once the kernel is specialised).
    fn check_divisor(&mut self, expression: Handle<Expression>, reg: Reg, remainder: bool) {
        let nonzero_literal = matches!(
            self.function.expressions[expression],
            Expression::Literal(Literal::Int { bits, .. }) if bits != 0
        );
        if !nonzero_literal {
            self.emit(Op::CheckDivisor {
                divisor: reg,
                remainder,
            });
        }
    }

    fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    fn bind(&mut self, label: Label) {
        self.labels[label.0] = Some(self.code.len() as u32);
    }

    fn jump(&mut self, label: Label) {
        self.fixups.push((self.code.len(), label));
        self.emit(Op::Jump { to: u32::MAX });
    }

    fn jump_if(&mut self, cond: Reg, when: bool, label: Label) {
        self.fixups.push((self.code.len(), label));
        self.emit(if when {
            Op::JumpIf { cond, to: u32::MAX }
        } else {
            Op::JumpIfNot { cond, to: u32::MAX }
        });
    }

    /// The size of a struct-valued expression's type; `None` for other values.
    fn struct_size(&self, handle: Handle<Expression>) -> Option<u32> {
        match self.info.type_of(handle) {
            ExprType::Value(ty) => match self.module.types[ty].inner {
                TypeInner::Struct { size, .. } => Some(size),
                _ => None,
            },
            _ => None,
        }
    }

    fn width_of(&self, ty: ExprType) -> u32 {
        match ty {
            ExprType::Slice { .. } => 2,
            _ => 1,
        }
    }

    fn scalar_of(&self, handle: Handle<Expression>) -> CompileResult<Scalar> {
        match self.info.type_of(handle) {
            ExprType::Scalar(s) => Ok(s),
            _ => Err((
                self.function.expression_span(handle),
                "a non-scalar value here".into(),
            )),
        }
    }

    /// The size in bytes of one element a pointer or slice expression points to: a
    /// scalar, a struct (whose size includes its tail padding, so it is the stride), or a
    /// row of an array of arrays (its elements' sizes).
    fn pointee_size(&self, handle: Handle<Expression>) -> CompileResult<u32> {
        if let ExprType::Pointer { base, .. } | ExprType::Slice { base, .. } =
            self.info.type_of(handle)
        {
            if let Some(size) = self.aggregate_size(base) {
                return Ok(size);
            }
        }
        Ok(self.pointee(handle)?.size_bytes())
    }

    /// The size in bytes of a struct or array type (`None` for a scalar).
    fn aggregate_size(&self, ty: Handle<cudajit_core::ir::Type>) -> Option<u32> {
        match self.module.types[ty].inner {
            TypeInner::Struct { size, .. } => Some(size),
            TypeInner::Array { base, len } => {
                let elem = match self.module.types[base].inner {
                    TypeInner::Scalar(s) => s.size_bytes(),
                    _ => self.aggregate_size(base)?,
                };
                Some(elem * len)
            }
            _ => None,
        }
    }

    /// The scalar a pointer expression points to.
    fn pointee(&self, handle: Handle<Expression>) -> CompileResult<Scalar> {
        match self.info.type_of(handle) {
            ExprType::Pointer { base, .. } | ExprType::Slice { base, .. } => {
                match self.module.types[base].inner {
                    TypeInner::Scalar(s) => Ok(s),
                    _ => Err((
                        self.function.expression_span(handle),
                        "pointers to structs and arrays (structs are not simulated yet)".into(),
                    )),
                }
            }
            _ => Err((
                self.function.expression_span(handle),
                "a pointer of this type".into(),
            )),
        }
    }

    fn compile(mut self) -> CompileResult<CompiledFunction> {
        for argument in &self.function.arguments {
            let width = match &self.module.types[argument.ty].inner {
                TypeInner::Scalar(_) => 1,
                TypeInner::Slice { .. } => 2,
                TypeInner::Pointer { .. } => 1,
                // A struct argument is a pointer to its bytes (read-only memory).
                TypeInner::Struct { .. } => 1,
                TypeInner::Array { .. } => {
                    self.span = argument.span;
                    return self.unsupported(
                        "a struct or array parameter (structs are not simulated yet)",
                    );
                }
                // The address of the map's bytes (read-only memory of the launch).
                TypeInner::TensorMap => 1,
            };
            let reg = self.register(width);
            self.arguments.push(reg);
        }
        // Scalars whose address is taken (`&mut acc` passed to a `&mut f32` parameter) live
        // in the frame's memory, as a struct local does; other scalars in registers.
        let address_taken: std::collections::HashSet<Handle<LocalVariable>> = self
            .function
            .expressions
            .iter()
            .filter_map(|(_, e)| match e {
                Expression::LocalPointer(local) => Some(*local),
                _ => None,
            })
            .collect();
        for (handle, local) in self.function.locals.iter() {
            let slot = match &self.module.types[local.ty].inner {
                TypeInner::Scalar(scalar) if address_taken.contains(&handle) => {
                    let size = scalar.size_bytes();
                    let offset = self.local_bytes.next_multiple_of(16);
                    self.local_bytes = offset + size;
                    LocalSlot::Struct { offset, size }
                }
                TypeInner::Scalar(_) | TypeInner::Pointer { .. } => {
                    LocalSlot::Register(self.register(1))
                }
                TypeInner::Slice { .. } => LocalSlot::Register(self.register(2)),
                TypeInner::TensorMap => {
                    self.span = local.span;
                    return self.unsupported("a tensor map in a local variable");
                }
                TypeInner::Array { base, len } => match self.module.types[*base].inner {
                    TypeInner::Scalar(elem) => self.local_array(*len, elem.size_bytes()),
                    // An array of structs: each element at the struct's stride.
                    TypeInner::Struct { size, .. } => self.local_array(*len, size),
                    // An array of arrays (`[[f32; 4]; 4]`): each row at the row's stride.
                    TypeInner::Array {
                        base: elem,
                        len: columns,
                    } => match self.module.types[elem].inner {
                        TypeInner::Scalar(elem) => {
                            self.local_array(*len, columns * elem.size_bytes())
                        }
                        _ => {
                            self.span = local.span;
                            return self.unsupported("an array of arrays of non-scalars");
                        }
                    },
                    _ => {
                        self.span = local.span;
                        return self.unsupported("an array of non-scalars");
                    }
                },
                TypeInner::Struct { size, .. } => {
                    let offset = self.local_bytes.next_multiple_of(16);
                    self.local_bytes = offset + size;
                    LocalSlot::Struct {
                        offset,
                        size: *size,
                    }
                }
            };
            self.locals.push(slot);
        }
        self.local_bytes = self.local_bytes.next_multiple_of(16);

        let body = &self.function.body;
        self.block(body)?;
        self.span = self.function.span;
        if self.function.result.is_some() {
            self.emit(Op::FellOff);
        } else {
            self.emit(Op::Return { value: None });
        }
        for (at, label) in std::mem::take(&mut self.fixups) {
            let to = self.labels[label.0].unwrap_or(self.code.len() as u32);
            match &mut self.code[at] {
                Op::Jump { to: target }
                | Op::JumpIf { to: target, .. }
                | Op::JumpIfNot { to: target, .. } => *target = to,
                _ => unreachable!("fixups point at jumps"),
            }
        }
        Ok(CompiledFunction {
            name: self.function.name.clone(),
            file: self.function.file.clone(),
            code: self.code,
            spans: self.spans,
            registers: self.init.len() as u32,
            init: self.init,
            builtins: self.builtins,
            local_bytes: self.local_bytes,
            stack_registers: 0,
            stack_local_bytes: 0,
        })
    }

    /// Room for a local array of `len` elements of `size` bytes in the frame.
    fn local_array(&mut self, len: u32, size: u32) -> LocalSlot {
        let offset = self.local_bytes.next_multiple_of(16);
        self.local_bytes = offset + len * size;
        LocalSlot::Array { offset, len, size }
    }

    fn local_register(&self, local: Handle<LocalVariable>) -> CompileResult<Reg> {
        match self.locals[local.index()] {
            LocalSlot::Register(reg) => Ok(reg),
            LocalSlot::Array { .. } => self.unsupported("an array local used as a value"),
            LocalSlot::Struct { .. } => self.unsupported("a struct local used as a scalar"),
        }
    }

    /// The address of a struct local's bytes, in `dst`; and its size.
    fn struct_local(&mut self, local: Handle<LocalVariable>, dst: Reg) -> CompileResult<u32> {
        let LocalSlot::Struct { offset, size } = self.locals[local.index()] else {
            return self.unsupported("a local that is not a struct used as one");
        };
        let index = self.constant(0);
        self.emit(Op::ArrayElement {
            dst,
            offset,
            len: 1,
            index,
            size,
        });
        Ok(size)
    }
}
