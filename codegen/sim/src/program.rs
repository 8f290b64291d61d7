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

use cudajit_core::ast::{Axis, BinaryOp, FormatPiece};
use cudajit_core::intrinsics::{
    AddressSpace, AtomicAccess, AtomicOp, Intrinsic, ShuffleMode, VoteOp,
};
use cudajit_core::ir::{
    Block, BuiltinValue, CompileFlag, Expression, Function, Handle, Literal, LocalVariable, LoopId,
    Module, Statement, TypeInner,
};
use cudajit_core::math::MathFunction;
use cudajit_core::valid::{ExprType, FunctionInfo, KernelInfo};
use cudajit_core::{Scalar, Span};

use super::error::SimError;
use super::externs::MAX_EXTERN_ARGS;
use super::int_methods::{int_method, IntMethod};
use super::math::{float_math, FloatMath};
use super::memory::{pointer, SHARED_REGION};
use super::value::{self, BinaryFn, IntMath, TernaryFn, UnaryFn};

mod constant;
mod inline_ptx;

/// A register number, relative to its function's frame.
pub(crate) type Reg = u32;

/// The built-in values of a thread, in the order of [`Builtin::index`].
pub(crate) const BUILTINS: usize = 27;

/// A value the hardware gives each thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    Value(BuiltinValue),
    LaneId,
    /// A cluster special register (PTX's `%cluster_ctarank` ..).
    Cluster(ClusterRegister),
}

/// The special registers of a thread-block cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClusterRegister {
    /// `%cluster_ctarank`: the block's rank in its cluster.
    CtaRank,
    /// `%cluster_nctarank`: blocks per cluster.
    NCtaRank,
    /// `%clusterid.{x,y,z}`: the cluster's index in the grid.
    ClusterId(Axis),
    /// `%nclusterid.{x,y,z}`: clusters in the grid.
    NClusterId(Axis),
    /// `%cluster_ctaid.{x,y,z}`: the block's index in its cluster.
    CtaId(Axis),
    /// `%cluster_nctaid.{x,y,z}`: the cluster's dimensions.
    NCtaId(Axis),
}

impl Builtin {
    /// Its index among the thread's built-in values.
    pub(crate) fn index(self) -> usize {
        let axis = |a: Axis| match a {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        };
        match self {
            Builtin::Value(BuiltinValue::ThreadIdx(a)) => axis(a),
            Builtin::Value(BuiltinValue::BlockIdx(a)) => 3 + axis(a),
            Builtin::Value(BuiltinValue::BlockDim(a)) => 6 + axis(a),
            Builtin::Value(BuiltinValue::GridDim(a)) => 9 + axis(a),
            Builtin::LaneId => 12,
            Builtin::Cluster(register) => match register {
                ClusterRegister::CtaRank => 13,
                ClusterRegister::NCtaRank => 14,
                ClusterRegister::ClusterId(a) => 15 + axis(a),
                ClusterRegister::NClusterId(a) => 18 + axis(a),
                ClusterRegister::CtaId(a) => 21 + axis(a),
                ClusterRegister::NCtaId(a) => 24 + axis(a),
            },
        }
    }

    /// The built-in a PTX special register (`%name`) reads.
    pub(crate) fn special(name: &str) -> Option<Builtin> {
        let (register, axis) = match name.split_once('.') {
            Some((register, axis)) => (register, Some(axis)),
            None => (name, None),
        };
        let axis = match axis {
            None => None,
            Some("x") => Some(Axis::X),
            Some("y") => Some(Axis::Y),
            Some("z") => Some(Axis::Z),
            Some(_) => return None,
        };
        let cluster = |register| Some(Builtin::Cluster(register));
        match (register, axis) {
            ("laneid", None) => Some(Builtin::LaneId),
            ("cluster_ctarank", None) => cluster(ClusterRegister::CtaRank),
            ("cluster_nctarank", None) => cluster(ClusterRegister::NCtaRank),
            ("clusterid", Some(a)) => cluster(ClusterRegister::ClusterId(a)),
            ("nclusterid", Some(a)) => cluster(ClusterRegister::NClusterId(a)),
            ("cluster_ctaid", Some(a)) => cluster(ClusterRegister::CtaId(a)),
            ("cluster_nctaid", Some(a)) => cluster(ClusterRegister::NCtaId(a)),
            _ => None,
        }
    }
}

/// One operation of a compiled function.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Unary {
        f: UnaryFn,
        dst: Reg,
        a: Reg,
    },
    Binary {
        f: BinaryFn,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Ternary {
        f: TernaryFn,
        dst: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    Copy {
        dst: Reg,
        src: Reg,
    },
    Jump {
        to: u32,
    },
    JumpIf {
        cond: Reg,
        to: u32,
    },
    JumpIfNot {
        cond: Reg,
        to: u32,
    },
    /// `dst` = the pointer to element `index` of the slice in `base`, `base + 1`, after
    /// checking that elements `index .. index + extent` are inside it.
    SliceElement {
        dst: Reg,
        base: Reg,
        index: Reg,
        size: u32,
        extent: u32,
    },
    /// `dst`, `dst + 1` = the elements `start..end` of the slice in `base`, `base + 1`
    /// (`end` absent: to its end), after checking `start <= end <= len`.
    SubSlice {
        dst: Reg,
        base: Reg,
        start: Reg,
        end: Option<Reg>,
        size: u32,
    },
    /// `dst` = the pointer `index` elements of `size` bytes after the pointer `base`.
    PointerElement {
        dst: Reg,
        base: Reg,
        index: Reg,
        size: u32,
    },
    /// `dst` = the pointer to element `index` (below `len`, else a fault) of `size` bytes
    /// of the array at the pointer `base` (an array field of a struct).
    MemberElement {
        dst: Reg,
        base: Reg,
        index: Reg,
        size: u32,
        len: u32,
    },
    /// `dst` = the pointer to element `index` of the frame's local array at `offset`.
    ArrayElement {
        dst: Reg,
        offset: u32,
        len: u32,
        index: Reg,
        size: u32,
    },
    /// `dst` = the `size`-byte value at `pointer`, masked with `mask` (1 for `bool`).
    Load {
        dst: Reg,
        pointer: Reg,
        size: u32,
        mask: u64,
    },
    Store {
        pointer: Reg,
        src: Reg,
        size: u32,
    },
    /// Copies `size` bytes from the pointer `src` to the pointer `dst`: a struct value
    /// stored (struct values are pointers to their bytes).
    CopyBytes {
        dst: Reg,
        src: Reg,
        size: u32,
    },
    /// `dst`, `dst + 1` = the launch's dynamic shared memory as a slice of `size`-byte
    /// elements.
    DynamicShared {
        dst: Reg,
        offset: u32,
        size: u32,
    },
    Call {
        function: u32,
        args: Box<[Reg]>,
        result: Option<Reg>,
    },
    Return {
        value: Option<Reg>,
    },
    VectorLoad {
        pointer: Reg,
        results: Box<[Reg]>,
        size: u32,
    },
    VectorStore {
        pointer: Reg,
        values: Box<[Reg]>,
        size: u32,
    },
    Print {
        format: u32,
        args: Box<[Reg]>,
    },
    Trap {
        message: u32,
    },
    Atomic {
        op: AtomicOp,
        kind: Scalar,
        dst: Reg,
        pointer: Reg,
        a: Reg,
        b: Reg,
    },
    Barrier,
    /// `grid_sync()`: the thread waits until every thread of the grid does (the
    /// cooperative scheduler's grid barrier).
    GridBarrier,
    /// A host `SeqCst` fence: what fences and ordered atomics compile to (see
    /// `Intrinsic::OrderedAtomic` below).
    Fence,
    /// `dst` = the `size`-byte value at `pointer`, read as an atomic (a shared-memory
    /// access that neither races nor counts), masked with `mask`.
    AtomicLoad {
        dst: Reg,
        pointer: Reg,
        size: u32,
        mask: u64,
    },
    /// The `size`-byte `src` stored at `pointer` as an atomic.
    AtomicStore {
        pointer: Reg,
        src: Reg,
        size: u32,
    },
    /// `dst` = the host's monotonic clock in nanoseconds (`clock64()`, `globaltimer()`).
    Timer {
        dst: Reg,
    },
    /// Sleeps the host thread for `ns` nanoseconds (at most 1 ms).
    NanoSleep {
        ns: Reg,
    },
    Shuffle {
        mode: ShuffleMode,
        kind: Scalar,
        dst: Reg,
        mask: Reg,
        value: Reg,
        lane: Reg,
    },
    Vote {
        op: VoteOp,
        dst: Reg,
        mask: Reg,
        predicate: Reg,
    },
    ActiveMask {
        dst: Reg,
    },
    /// A call of the program's extern function `function` (see [`super::SimExterns`]),
    /// its result (of type `.1`) to `result`.
    CallExtern {
        function: u32,
        args: Box<[Reg]>,
        result: Option<(Reg, Scalar)>,
    },
    /// An inline PTX instruction with semantics of its own (`mma.sync`, `ldmatrix`,
    /// `cp.async`, ..; see [`super::ptx`]).
    Ptx(Box<super::ptx::PtxOp>),
    /// The end of a function with a result, reached without `return`.
    FellOff,
    /// Stops the thread if `divisor` is zero: an integer `/` or `%` (or `div_euclid`,
    /// `rem_euclid`, `div_ceil`) by zero, where Rust panics (the GPU gives an unspecified
    /// value). `remainder` names the operation in the report.
    CheckDivisor {
        divisor: Reg,
        remainder: bool,
    },
}

/// An `#[extern_device]` function the program calls.
#[derive(Clone, Debug)]
pub(crate) struct ExternInfo {
    /// The Rust name, for messages.
    pub name: String,
    /// The link name the host resolves.
    pub symbol: String,
}

/// A function ready for the interpreter.
#[derive(Debug)]
pub(crate) struct CompiledFunction {
    pub name: String,
    /// The file its spans are in (the kernel's when the IR does not say).
    pub file: String,
    pub code: Vec<Op>,
    /// The span of each operation, for messages.
    pub spans: Vec<Span>,
    /// Registers of one frame.
    pub registers: u32,
    /// The registers at entry: constants in place, zeros elsewhere.
    pub init: Vec<u64>,
    /// Registers that receive a built-in value at entry.
    pub builtins: Vec<(Reg, usize)>,
    /// Bytes of local memory of one frame (local arrays).
    pub local_bytes: u32,
    /// Registers and local bytes of this function and its deepest chain of callees.
    pub stack_registers: u32,
    pub stack_local_bytes: u32,
}

/// A `print!`'s format, with the type of each argument.
#[derive(Clone, Debug)]
pub(crate) struct PrintFormat {
    pub pieces: Vec<FormatPiece>,
    pub types: Vec<Scalar>,
}

/// Where a shared variable lives in the block's shared memory.
#[derive(Clone, Debug)]
pub(crate) struct SharedLayout {
    pub name: String,
    pub offset: u32,
    pub elem: Scalar,
    /// `None` for the dynamic shared memory.
    pub len: Option<u32>,
}

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
    /// scalar, or a struct (whose size includes its tail padding, so it is the stride).
    fn pointee_size(&self, handle: Handle<Expression>) -> CompileResult<u32> {
        if let ExprType::Pointer { base, .. } | ExprType::Slice { base, .. } =
            self.info.type_of(handle)
        {
            if let TypeInner::Struct { size, .. } = self.module.types[base].inner {
                return Ok(size);
            }
        }
        Ok(self.pointee(handle)?.size_bytes())
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
        for (_, local) in self.function.locals.iter() {
            let slot = match &self.module.types[local.ty].inner {
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

    // ----- expressions -----

    /// Emits the evaluation of `handle` and returns the register holding its value (the
    /// first of two for a slice).
    fn expr(&mut self, handle: Handle<Expression>) -> CompileResult<Reg> {
        self.expr_into(handle, None)
    }

    /// [`Self::expr`], writing the result to `dst` when the value comes from a single
    /// operation (so `x = a + b` needs no copy). Returns where the value is.
    fn expr_into(&mut self, handle: Handle<Expression>, dst: Option<Reg>) -> CompileResult<Reg> {
        let span = self.function.expression_span(handle);
        let here = if span.is_known() { span } else { self.span };
        let saved = std::mem::replace(&mut self.span, here);
        let result = self.expr_inner(handle, dst);
        self.span = saved;
        result
    }

    fn expr_inner(&mut self, handle: Handle<Expression>, dst: Option<Reg>) -> CompileResult<Reg> {
        let ty = self.info.type_of(handle);
        let target = |this: &mut Self| match dst {
            Some(dst) => dst,
            None => this.temp(handle, 1),
        };
        Ok(match self.function.expressions[handle] {
            Expression::Literal(literal) => self.constant(match literal {
                Literal::Bool(b) => u64::from(b),
                Literal::Int { bits, ty } => value::canonical(bits, ty),
                Literal::Float { value, ty } => value::float_literal(value, ty),
            }),
            Expression::FunctionArgument(index) => self.arguments[index as usize],
            Expression::LocalLoad(local) => {
                match ExprType::of(self.module, self.function.locals[local].ty) {
                    ExprType::Scalar(_) | ExprType::Slice { .. } | ExprType::Pointer { .. } => {
                        self.local_register(local)?
                    }
                    // A struct value is a pointer to its bytes.
                    ExprType::Value(_) => {
                        let dst = target(self);
                        self.struct_local(local, dst)?;
                        dst
                    }
                }
            }
            // A struct value is a pointer to its bytes: the pointer itself.
            Expression::Load { pointer } if matches!(ty, ExprType::Value(_)) => {
                self.expr(pointer)?
            }
            Expression::Load { pointer } => {
                let ExprType::Scalar(s) = ty else {
                    return self.unsupported("loading this type");
                };
                let pointer = self.expr(pointer)?;
                let dst = target(self);
                self.emit(Op::Load {
                    dst,
                    pointer,
                    size: s.size_bytes(),
                    mask: if s == Scalar::Bool { 1 } else { u64::MAX },
                });
                dst
            }
            Expression::ElementPointer { base, index } => {
                self.element_pointer(handle, base, index, 1, dst)?
            }
            Expression::SliceLength { slice } => self.expr(slice)? + 1,
            Expression::Unary { op, operand } => {
                let s = self.scalar_of(operand)?;
                let Some(f) = value::unary_fn(op, s) else {
                    return self.unsupported(format!("operator {op:?} on `{s}`"));
                };
                let a = self.expr(operand)?;
                let dst = target(self);
                self.emit(Op::Unary { f, dst, a });
                dst
            }
            Expression::Binary { op, left, right } => {
                let s = self.scalar_of(left)?;
                let Some(f) = value::binary_fn(op, s) else {
                    return self.unsupported(format!("operator `{}` on `{s}`", op.symbol()));
                };
                let a = self.expr(left)?;
                let b = self.expr(right)?;
                if matches!(op, BinaryOp::Div | BinaryOp::Rem) && s.is_integer() {
                    self.check_divisor(right, b, op == BinaryOp::Rem);
                }
                let dst = target(self);
                self.emit(Op::Binary { f, dst, a, b });
                dst
            }
            Expression::Logical { and, left, right } => {
                let a = self.expr(left)?;
                let dst = self.temp(handle, 1);
                let end = self.label();
                self.emit(Op::Copy { dst, src: a });
                self.jump_if(a, !and, end);
                let b = self.expr(right)?;
                self.emit(Op::Copy { dst, src: b });
                self.bind(end);
                dst
            }
            Expression::Cast { value: operand, to } => {
                let from = self.scalar_of(operand)?;
                let a = self.expr(operand)?;
                if from == to || (from.bits() == to.bits() && from.is_integer() && to.is_integer())
                {
                    // Same bits: integers of one width share their register encoding.
                    return Ok(a);
                }
                let Some(f) = value::cast_fn(from, to) else {
                    return self.unsupported(format!("a cast from `{from}` to `{to}`"));
                };
                let dst = target(self);
                self.emit(Op::Unary { f, dst, a });
                dst
            }
            Expression::Builtin(builtin) => self.builtin(Builtin::Value(builtin)),
            Expression::CompileFlag(CompileFlag::DebugAssertions) => {
                self.constant(u64::from(self.options.debug_assertions))
            }
            Expression::SharedSlice(shared) => {
                let variable = &self.module.shared[shared];
                let TypeInner::Scalar(elem) = self.module.types[variable.elem].inner else {
                    return self.unsupported("a shared array of non-scalars");
                };
                let layout = self
                    .program
                    .shared
                    .iter()
                    .find(|s| s.name == variable.name && s.len == variable.len && s.elem == elem)
                    .map(|s| s.offset);
                let offset = match (variable.len, layout) {
                    (_, Some(offset)) => offset,
                    (_, None) => return self.unsupported("a shared variable without a layout"),
                };
                let slice = self.temp(handle, 2);
                match variable.len {
                    Some(len) => {
                        self.init[slice as usize] = pointer(SHARED_REGION, u64::from(offset));
                        self.init[slice as usize + 1] = u64::from(len);
                    }
                    None => self.emit(Op::DynamicShared {
                        dst: slice,
                        offset,
                        size: elem.size_bytes(),
                    }),
                }
                slice
            }
            Expression::MemberElement { array, index } => {
                let ExprType::Pointer { base: array_ty, .. } = self.info.type_of(array) else {
                    return self.unsupported("an element of a non-array");
                };
                let TypeInner::Array { len, .. } = self.module.types[array_ty].inner else {
                    return self.unsupported("an element of a non-array");
                };
                let size = self.pointee_size(handle)?;
                let base = self.expr(array)?;
                let index = self.index(index)?;
                let dst = target(self);
                self.emit(Op::MemberElement {
                    dst,
                    base,
                    index,
                    size,
                    len,
                });
                dst
            }
            Expression::ArrayElement { local, index } => {
                let LocalSlot::Array { offset, len, size } = self.locals[local.index()] else {
                    return self.unsupported("indexing a local that is not an array");
                };
                let index = self.index(index)?;
                let dst = target(self);
                self.emit(Op::ArrayElement {
                    dst,
                    offset,
                    len,
                    index,
                    size,
                });
                dst
            }
            Expression::Math {
                function,
                argument,
                arg1,
                arg2,
            } => self.math(handle, function, argument, arg1, arg2, dst)?,
            // A struct value is only ever a parameter, held as a pointer to its bytes.
            Expression::ValuePointer { value } => self.expr(value)?,
            Expression::FieldPointer { base, field } => {
                let struct_ty = match self.info.type_of(base) {
                    ExprType::Pointer { base, .. } | ExprType::Value(base) => base,
                    _ => return self.unsupported("a field of a non-struct"),
                };
                let TypeInner::Struct { members, .. } = &self.module.types[struct_ty].inner else {
                    return self.unsupported("a field of a non-struct");
                };
                let Some(member) = members.get(field as usize) else {
                    return self.unsupported("a field the struct does not have");
                };
                let offset = self.constant(u64::from(member.offset));
                let base = self.expr(base)?;
                let dst = target(self);
                self.emit(Op::PointerElement {
                    dst,
                    base,
                    index: offset,
                    size: 1,
                });
                dst
            }
            Expression::LocalPointer(local) => {
                let dst = target(self);
                match self.locals[local.index()] {
                    // An array local's address (passed to an array parameter).
                    LocalSlot::Array { offset, len, size } => {
                        let index = self.constant(0);
                        self.emit(Op::ArrayElement {
                            dst,
                            offset,
                            len,
                            index,
                            size,
                        });
                    }
                    _ => {
                        self.struct_local(local, dst)?;
                    }
                }
                dst
            }
            // The address of the map's bytes in the launch's read-only memory.
            Expression::TensorMapAddress { argument } => self.arguments[argument as usize],
            // A simulated device address is a pointer (region and offset): the slice is
            // the address and the length, checked at each access like any slice.
            Expression::SubSlice { base, start, end } => {
                let ExprType::Slice { base: elem, .. } = self.info.type_of(handle) else {
                    return self.unsupported("a sub-slice of a non-slice");
                };
                let TypeInner::Scalar(elem) = self.module.types[elem].inner else {
                    return self.unsupported("a sub-slice of structs");
                };
                let size = elem.size_bytes();
                let base = self.expr(base)?;
                let start = self.expr(start)?;
                let end = end.map(|end| self.expr(end)).transpose()?;
                let dst = self.temp(handle, 2);
                self.emit(Op::SubSlice {
                    dst,
                    base,
                    start,
                    end,
                    size,
                });
                dst
            }
            Expression::RawSlice {
                address,
                length,
                elem,
                ..
            } => {
                if !matches!(self.module.types[elem].inner, TypeInner::Scalar(_)) {
                    return self.unsupported("`slice_at` over structs");
                }
                let address = self.expr(address)?;
                let length = self.expr(length)?;
                let slice = self.temp(handle, 2);
                self.emit(Op::Copy {
                    dst: slice,
                    src: address,
                });
                self.emit(Op::Copy {
                    dst: slice + 1,
                    src: length,
                });
                slice
            }
        })
    }

    /// An index widened to 64 bits as the writer widens it (sign-extended if signed).
    fn index(&mut self, index: Handle<Expression>) -> CompileResult<Reg> {
        let s = self.scalar_of(index)?;
        let reg = self.expr(index)?;
        if s.is_signed() && s.bits() < 64 {
            let Some(f) = value::cast_fn(s, Scalar::I64) else {
                return self.unsupported("this index type");
            };
            let dst = self.register(1);
            self.emit(Op::Unary { f, dst, a: reg });
            return Ok(dst);
        }
        Ok(reg)
    }

    fn element_pointer(
        &mut self,
        handle: Handle<Expression>,
        base: Handle<Expression>,
        index: Handle<Expression>,
        extent: u32,
        dst: Option<Reg>,
    ) -> CompileResult<Reg> {
        let size = self.pointee_size(handle)?;
        let base_ty = self.info.type_of(base);
        let base = self.expr(base)?;
        let index = self.index(index)?;
        let dst = match dst {
            Some(dst) => dst,
            None => self.temp(handle, 1),
        };
        match base_ty {
            ExprType::Slice { .. } => self.emit(Op::SliceElement {
                dst,
                base,
                index,
                size,
                extent,
            }),
            _ => self.emit(Op::PointerElement {
                dst,
                base,
                index,
                size,
            }),
        }
        Ok(dst)
    }

    fn math(
        &mut self,
        handle: Handle<Expression>,
        function: MathFunction,
        argument: Handle<Expression>,
        arg1: Option<Handle<Expression>>,
        arg2: Option<Handle<Expression>>,
        dst: Option<Reg>,
    ) -> CompileResult<Reg> {
        let s = self.scalar_of(argument)?;
        let resolved = if matches!(function, MathFunction::ToBits | MathFunction::FromBits(_)) {
            // A float's register holds its bits, and an unsigned integer's its bits
            // zero-extended: a bit cast moves the register unchanged.
            Some(FloatMath::Unary(|bits| bits))
        } else if s.is_float() {
            float_math(function, s)
        } else if let Some(method) = int_method(function, s) {
            Some(match method {
                IntMethod::Unary(f) => FloatMath::Unary(f),
                IntMethod::Binary(f) => FloatMath::Binary(f),
                IntMethod::Ternary(f) => FloatMath::Ternary(f),
            })
        } else {
            value::int_math(function, s).map(|m| match m {
                IntMath::Unary(f) => FloatMath::Unary(f),
                IntMath::Binary(f) => FloatMath::Binary(f),
            })
        };
        let Some(resolved) = resolved else {
            return self.unsupported(format!("`{}` on `{s}`", function.name()));
        };
        let a = self.expr(argument)?;
        let b = arg1.map(|h| self.expr(h)).transpose()?;
        let c = arg2.map(|h| self.expr(h)).transpose()?;
        let divides = matches!(
            function,
            MathFunction::DivEuclid | MathFunction::RemEuclid | MathFunction::DivCeil
        );
        if let (true, true, Some(divisor), Some(b)) = (divides, s.is_integer(), arg1, b) {
            self.check_divisor(divisor, b, function == MathFunction::RemEuclid);
        }
        let dst = match dst {
            Some(dst) => dst,
            None => self.temp(handle, 1),
        };
        match (resolved, b, c) {
            (FloatMath::Unary(f), None, None) => self.emit(Op::Unary { f, dst, a }),
            (FloatMath::Binary(f), Some(b), None) => self.emit(Op::Binary { f, dst, a, b }),
            (FloatMath::Ternary(f), Some(b), Some(c)) => self.emit(Op::Ternary { f, dst, a, b, c }),
            _ => return self.unsupported(format!("`{}` with these arguments", function.name())),
        }
        Ok(dst)
    }

    // ----- statements -----

    fn block(&mut self, block: &Block) -> CompileResult<()> {
        for (statement, span) in block.iter() {
            let saved = std::mem::replace(&mut self.span, span);
            let result = self.statement(statement);
            self.span = saved;
            result?;
        }
        Ok(())
    }

    fn statement(&mut self, statement: &Statement) -> CompileResult<()> {
        match statement {
            Statement::LocalStore { local, value }
                if matches!(self.locals[local.index()], LocalSlot::Struct { .. }) =>
            {
                let src = self.expr(*value)?;
                let dst = self.register(1);
                let size = self.struct_local(*local, dst)?;
                self.emit(Op::CopyBytes { dst, src, size });
            }
            Statement::Store { pointer, value } if self.struct_size(*value).is_some() => {
                let size = self.struct_size(*value).unwrap_or_default();
                let dst = self.expr(*pointer)?;
                let src = self.expr(*value)?;
                self.emit(Op::CopyBytes { dst, src, size });
            }
            Statement::LocalStore { local, value } => {
                let reg = self.local_register(*local)?;
                let width = self.width_of(self.info.type_of(*value));
                let single = width == 1
                    && matches!(
                        self.function.expressions[*value],
                        Expression::Load { .. }
                            | Expression::Unary { .. }
                            | Expression::Binary { .. }
                            | Expression::Cast { .. }
                            | Expression::Math { .. }
                            | Expression::ElementPointer { .. }
                            | Expression::ArrayElement { .. }
                            | Expression::MemberElement { .. }
                    );
                let src = self.expr_into(*value, single.then_some(reg))?;
                if src != reg {
                    self.emit(Op::Copy { dst: reg, src });
                    if width == 2 {
                        self.emit(Op::Copy {
                            dst: reg + 1,
                            src: src + 1,
                        });
                    }
                }
            }
            Statement::Store { pointer, value } => {
                let s = self.scalar_of(*value)?;
                let pointer = self.expr(*pointer)?;
                let src = self.expr(*value)?;
                self.emit(Op::Store {
                    pointer,
                    src,
                    size: s.size_bytes(),
                });
            }
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                if let Some(known) = constant::known_condition(self.function, *condition) {
                    return self.block(if known { accept } else { reject });
                }
                let cond = self.expr(*condition)?;
                let otherwise = self.label();
                let end = self.label();
                self.jump_if(cond, false, otherwise);
                self.block(accept)?;
                if !reject.is_empty() {
                    self.jump(end);
                }
                self.bind(otherwise);
                self.block(reject)?;
                self.bind(end);
            }
            Statement::Loop {
                id,
                body,
                continuing,
            } => {
                let head = self.label();
                let cont = self.label();
                let exit = self.label();
                self.bind(head);
                self.loops.push((*id, cont, exit));
                let result = self.block(body).and_then(|()| {
                    self.bind(cont);
                    self.block(continuing)
                });
                self.loops.pop();
                result?;
                self.jump(head);
                self.bind(exit);
            }
            Statement::Break { target } | Statement::Continue { target } => {
                let Some(&(_, cont, exit)) = self.loops.iter().rev().find(|l| l.0 == *target)
                else {
                    return self.unsupported("a jump to a loop that does not enclose it");
                };
                let to = if matches!(statement, Statement::Break { .. }) {
                    exit
                } else {
                    cont
                };
                self.jump(to);
            }
            Statement::Return { value } => {
                let value = value.map(|v| self.expr(v)).transpose()?;
                self.emit(Op::Return { value });
            }
            Statement::Block(inner) => self.block(inner)?,
            Statement::Call {
                function,
                arguments,
                result,
            } => {
                let mut args = Vec::new();
                for argument in arguments {
                    let width = self.width_of(self.info.type_of(*argument));
                    let reg = self.expr(*argument)?;
                    args.extend((0..width).map(|k| reg + k));
                }
                // A struct result comes back as a pointer into the callee's finished
                // frame, copied into the local before anything else can reuse it.
                let struct_result =
                    result.filter(|l| matches!(self.locals[l.index()], LocalSlot::Struct { .. }));
                let register = match (result, struct_result) {
                    (_, Some(_)) => Some(self.register(1)),
                    (Some(local), None) => Some(self.local_register(*local)?),
                    (None, _) => None,
                };
                self.emit(Op::Call {
                    function: function.index() as u32,
                    args: args.into(),
                    result: register,
                });
                if let (Some(local), Some(src)) = (struct_result, register) {
                    let dst = self.register(1);
                    let size = self.struct_local(local, dst)?;
                    self.emit(Op::CopyBytes { dst, src, size });
                }
            }
            Statement::VectorLoad { pointer, results } => {
                let size = self.pointee(*pointer)?.size_bytes();
                let pointer = self.vector_pointer(*pointer, results.len() as u32)?;
                let results = results
                    .iter()
                    .map(|l| self.local_register(*l))
                    .collect::<CompileResult<Vec<_>>>()?;
                self.emit(Op::VectorLoad {
                    pointer,
                    results: results.into(),
                    size,
                });
            }
            Statement::VectorStore { pointer, values } => {
                let size = self.pointee(*pointer)?.size_bytes();
                let pointer = self.vector_pointer(*pointer, values.len() as u32)?;
                let values = values
                    .iter()
                    .map(|v| self.expr(*v))
                    .collect::<CompileResult<Vec<_>>>()?;
                self.emit(Op::VectorStore {
                    pointer,
                    values: values.into(),
                    size,
                });
            }
            Statement::InlinePtx {
                template,
                arguments,
                result,
            } => self.inline_ptx(template, arguments, *result)?,
            Statement::CallExtern {
                function,
                arguments,
                result,
            } => {
                let declaration = &self.module.externs[*function];
                if arguments.len() > MAX_EXTERN_ARGS {
                    return self.unsupported(format!(
                        "an extern function of more than {MAX_EXTERN_ARGS} parameters"
                    ));
                }
                let result_scalar = match declaration.result {
                    Some(ty) => match self.module.types[ty].inner {
                        TypeInner::Scalar(s) => Some(s),
                        _ => return self.unsupported("an extern function returning a non-scalar"),
                    },
                    None => None,
                };
                let mut args = Vec::new();
                for argument in arguments {
                    if self.width_of(self.info.type_of(*argument)) != 1 {
                        return self.unsupported("a slice passed to an extern function");
                    }
                    args.push(self.expr(*argument)?);
                }
                let result = match (result, result_scalar) {
                    (Some(local), Some(scalar)) => Some((self.local_register(*local)?, scalar)),
                    _ => None,
                };
                self.emit(Op::CallExtern {
                    function: function.index() as u32,
                    args: args.into(),
                    result,
                });
            }
            Statement::Print { pieces, arguments } => {
                let mut types = Vec::new();
                let mut args = Vec::new();
                for argument in arguments {
                    types.push(self.scalar_of(*argument)?);
                    args.push(self.expr(*argument)?);
                }
                self.program.formats.push(PrintFormat {
                    pieces: pieces.clone(),
                    types,
                });
                let format = (self.program.formats.len() - 1) as u32;
                self.emit(Op::Print {
                    format,
                    args: args.into(),
                });
            }
            Statement::Trap { message } => {
                self.program.messages.push(message.clone());
                let message = (self.program.messages.len() - 1) as u32;
                self.emit(Op::Trap { message });
            }
            Statement::Intrinsic {
                intrinsic,
                arguments,
                result,
            } => self.intrinsic(*intrinsic, arguments, *result)?,
        }
        Ok(())
    }

    /// The pointer of a vector access of `count` elements, checked to lie within its slice
    /// when it is a slice's element.
    fn vector_pointer(&mut self, pointer: Handle<Expression>, count: u32) -> CompileResult<Reg> {
        match self.function.expressions[pointer] {
            Expression::ElementPointer { base, index }
                if matches!(self.info.type_of(base), ExprType::Slice { .. }) =>
            {
                self.element_pointer(pointer, base, index, count, None)
            }
            _ => self.expr(pointer),
        }
    }

    fn intrinsic(
        &mut self,
        intrinsic: Intrinsic,
        arguments: &[Handle<Expression>],
        result: Option<Handle<LocalVariable>>,
    ) -> CompileResult<()> {
        let mut args = Vec::new();
        for argument in arguments {
            args.push(self.expr(*argument)?);
        }
        let result = match result {
            Some(local) => Some(self.local_register(local)?),
            None => None,
        };
        let dst = match result {
            Some(reg) => reg,
            None => self.register(1),
        };
        let span = self.span;
        let arg = |i: usize| {
            args.get(i)
                .copied()
                .ok_or((span, "missing argument".to_owned()))
        };
        match intrinsic {
            Intrinsic::SliceAt { .. } => return self.unsupported("`slice_at` as a statement"),
            Intrinsic::TensorMapAddress => {
                return self.unsupported("`tensor_map_address` as a statement")
            }
            Intrinsic::SyncThreads => self.emit(Op::Barrier),
            Intrinsic::GridSync => {
                self.program.grid_sync = true;
                self.emit(Op::GridBarrier)
            }
            // A block runs on one host thread, so within a block every access is already
            // sequentially consistent; across blocks (other host threads) global memory is
            // relaxed host atomics, which a host `SeqCst` fence orders.
            Intrinsic::Fence(_) => self.emit(Op::Fence),
            // Every ordered atomic is a host atomic between two `SeqCst` fences, whatever its
            // ordering and scope: sequentially consistent, which satisfies every ordering
            // (the simulator does not show what a weaker ordering would let the GPU do).
            Intrinsic::OrderedAtomic { access, .. } => {
                let kind = match access {
                    AtomicAccess::Load => self.pointee(arguments[0])?,
                    _ => self.scalar_of(arguments[1])?,
                };
                self.emit(Op::Fence);
                match access {
                    AtomicAccess::Load => self.emit(Op::AtomicLoad {
                        dst,
                        pointer: arg(0)?,
                        size: kind.size_bytes(),
                        mask: u64::MAX,
                    }),
                    AtomicAccess::Store => self.emit(Op::AtomicStore {
                        pointer: arg(0)?,
                        src: arg(1)?,
                        size: kind.size_bytes(),
                    }),
                    AtomicAccess::ReadModifyWrite(op) => {
                        let b = if op == AtomicOp::CompareExchange {
                            arg(2)?
                        } else {
                            arg(1)?
                        };
                        self.emit(Op::Atomic {
                            op,
                            kind,
                            dst,
                            pointer: arg(0)?,
                            a: arg(1)?,
                            b,
                        });
                    }
                }
                self.emit(Op::Fence);
            }
            // A volatile access is an atomic one on the simulator (never cached, never
            // torn), not ordered: the GPU does not order it either.
            Intrinsic::Volatile { store: false } => {
                let kind = self.pointee(arguments[0])?;
                self.emit(Op::AtomicLoad {
                    dst,
                    pointer: arg(0)?,
                    size: kind.size_bytes(),
                    mask: if kind == Scalar::Bool { 1 } else { u64::MAX },
                });
            }
            Intrinsic::Volatile { store: true } => {
                let kind = self.scalar_of(arguments[1])?;
                self.emit(Op::AtomicStore {
                    pointer: arg(0)?,
                    src: arg(1)?,
                    size: kind.size_bytes(),
                });
            }
            Intrinsic::Clock64 | Intrinsic::GlobalTimer => self.emit(Op::Timer { dst }),
            Intrinsic::NanoSleep => self.emit(Op::NanoSleep { ns: arg(0)? }),

            Intrinsic::Atomic(op, _scope) => {
                let kind = self.scalar_of(arguments[1])?;
                let b = if op == AtomicOp::CompareExchange {
                    arg(2)?
                } else {
                    arg(1)?
                };
                self.emit(Op::Atomic {
                    op,
                    kind,
                    dst,
                    pointer: arg(0)?,
                    a: arg(1)?,
                    b,
                });
            }
            Intrinsic::Shuffle(mode) => {
                let kind = self.scalar_of(arguments[1])?;
                self.emit(Op::Shuffle {
                    mode,
                    kind,
                    dst,
                    mask: arg(0)?,
                    value: arg(1)?,
                    lane: arg(2)?,
                });
            }
            Intrinsic::Vote(op) => self.emit(Op::Vote {
                op,
                dst,
                mask: arg(0)?,
                predicate: arg(1)?,
            }),
            Intrinsic::ActiveMask => self.emit(Op::ActiveMask { dst }),
            Intrinsic::LaneId => {
                let lane = self.builtin(Builtin::LaneId);
                self.emit(Op::Copy { dst, src: lane });
            }
            // A global element's address is its simulated pointer (which `slice_at` takes
            // back); a shared element's is its offset in the block's shared memory, as a
            // `.shared` address is on the GPU.
            Intrinsic::Address(AddressSpace::Global) => self.emit(Op::Copy { dst, src: arg(0)? }),
            Intrinsic::Address(AddressSpace::Shared) => {
                let pointer = arg(0)?;
                let mask = self.constant(u64::from(u32::MAX));
                self.emit(Op::Binary {
                    f: |pointer, mask| pointer & mask,
                    dst,
                    a: pointer,
                    b: mask,
                });
            }
            Intrinsic::SharedArray
            | Intrinsic::DynamicShared
            | Intrinsic::VectorLoad(_)
            | Intrinsic::VectorStore(_) => {
                return self.unsupported(format!("`{}` as a statement", intrinsic.name()))
            }
        }
        Ok(())
    }
}
