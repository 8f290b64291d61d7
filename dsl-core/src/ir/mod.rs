//! The typed kernel IR.
//!
//! Modelled on naga: a [`Module`] owns its types in a [`UniqueArena`] and its functions in
//! an [`Arena`]; a [`Function`] owns its local variables and expressions in arenas and has a
//! structured body of [`Statement`]s. Expressions are trees: each is evaluated where the
//! statement that uses it runs, left to right, and only loads and calls can observe memory.
//! Spans live beside the nodes, so the nodes stay plain data.
//!
//! What later stages add slots in without a rewrite: [`TypeInner::Struct`] and
//! [`TypeInner::Array`] for `#[repr(C)]` values such as NCCL's `ncclDevComm`;
//! [`AddressSpace::Shared`] for shared memory; pointers with [`AddressSpace::Global`] or
//! [`AddressSpace::Generic`] for memory of other GPUs; [`Module::functions`] beyond the
//! entry point for `#[device]` functions and [`Module::externs`] for `#[extern_device]`
//! declarations resolved at link time.

mod arena;

pub use arena::{Arena, Handle, UniqueArena};

use crate::ast::{Axis, BinaryOp, FormatPiece, UnaryOp};
use crate::intrinsics::Intrinsic;
use crate::math::MathFunction;
use crate::{Scalar, Span};

/// A compilation unit: one kernel entry point and everything it reaches.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub types: UniqueArena<Type>,
    pub functions: Arena<Function>,
    /// Block-shared arrays (`shared_array`, `dynamic_shared`).
    pub shared: Arena<SharedVariable>,
    pub externs: Arena<ExternFunction>,
    pub entry_points: Vec<EntryPoint>,
}

/// A kernel: a function launched from the host.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    /// The symbol of the kernel in the compiled module.
    pub symbol: String,
    pub function: Handle<Function>,
    /// `#[kernel(max_threads = N)]`: NVVM's `maxntidx` (and `minctasm` 1), CUDA C++'s
    /// `__launch_bounds__(N, 1)`.
    pub max_threads: Option<u32>,
}

/// A type. Types are interned: equal types have equal handles.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    pub inner: TypeInner,
}

/// The shapes a type can take.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeInner {
    Scalar(Scalar),
    /// A pointer to one `base`; `mutable` says whether stores through it are allowed.
    Pointer {
        base: Handle<Type>,
        space: AddressSpace,
        mutable: bool,
    },
    /// A slice: a pointer and a length. As a kernel parameter it becomes two parameters.
    Slice {
        base: Handle<Type>,
        mutable: bool,
    },
    /// A fixed-size array of `len` elements.
    Array {
        base: Handle<Type>,
        len: u32,
    },
    /// A `#[repr(C)]` struct with explicit member offsets.
    Struct {
        name: String,
        members: Vec<StructMember>,
        size: u32,
        align: u32,
    },
    /// A TMA tensor map (`CUtensorMap`): 128 opaque bytes, 64-byte aligned, that a kernel
    /// takes as a grid-constant parameter and reads only through its address
    /// ([`Expression::TensorMapAddress`]).
    TensorMap,
}

impl TypeInner {
    /// The scalar, if this is one.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            TypeInner::Scalar(s) => Some(*s),
            _ => None,
        }
    }
}

/// A member of a [`TypeInner::Struct`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructMember {
    pub name: String,
    pub ty: Handle<Type>,
    pub offset: u32,
}

/// Where a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// Any memory; the hardware resolves it at each access.
    Generic,
    /// Device memory, this GPU's or (through peer mappings) another GPU's.
    Global,
    /// Per-block shared memory.
    Shared,
    /// Per-thread memory.
    Local,
}

/// An array in per-block shared memory.
#[derive(Clone, Debug)]
pub struct SharedVariable {
    pub name: String,
    /// The element type (a scalar).
    pub elem: Handle<Type>,
    /// Number of elements; `None` for the launch's dynamic shared memory.
    pub len: Option<u32>,
}

/// A device function: the kernel itself or a `#[device]` helper.
#[derive(Clone, Debug, Default)]
pub struct Function {
    pub name: String,
    pub arguments: Vec<FunctionArgument>,
    /// `None` for functions returning `()`, which kernels always do.
    pub result: Option<Handle<Type>>,
    pub locals: Arena<LocalVariable>,
    pub expressions: Arena<Expression>,
    /// The span of each expression, indexed like `expressions`.
    pub expression_spans: Vec<Span>,
    pub body: Block,
    pub span: Span,
    /// The source file the spans are in (the function's own, a device function from
    /// another crate included); empty where unknown.
    pub file: String,
}

impl Function {
    /// Adds an expression with its span.
    pub fn add_expression(&mut self, expression: Expression, span: Span) -> Handle<Expression> {
        self.expression_spans.push(span);
        self.expressions.append(expression)
    }

    /// The span of an expression (unknown if out of range).
    pub fn expression_span(&self, handle: Handle<Expression>) -> Span {
        self.expression_spans
            .get(handle.index())
            .copied()
            .unwrap_or_default()
    }
}

/// A parameter of a [`Function`].
#[derive(Clone, Debug)]
pub struct FunctionArgument {
    pub name: String,
    pub ty: Handle<Type>,
    pub span: Span,
}

/// A local variable: storage of one value, read and written by the function.
#[derive(Clone, Debug)]
pub struct LocalVariable {
    pub name: String,
    pub ty: Handle<Type>,
    pub span: Span,
}

/// A function declared by `#[extern_device]` and resolved at link time.
#[derive(Clone, Debug)]
pub struct ExternFunction {
    /// The Rust name.
    pub name: String,
    /// The symbol in the device library.
    pub symbol: String,
    pub arguments: Vec<Handle<Type>>,
    pub result: Option<Handle<Type>>,
}

/// A sequence of statements with their spans.
#[derive(Clone, Debug, Default)]
pub struct Block {
    pub statements: Vec<Statement>,
    pub spans: Vec<Span>,
}

impl Block {
    /// An empty block.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a statement.
    pub fn push(&mut self, statement: Statement, span: Span) {
        self.statements.push(statement);
        self.spans.push(span);
    }

    /// Statements with their spans.
    pub fn iter(&self) -> impl Iterator<Item = (&Statement, Span)> {
        self.statements.iter().zip(
            self.spans
                .iter()
                .copied()
                .chain(std::iter::repeat(Span::default())),
        )
    }

    /// Whether the block is empty.
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }
}

/// Identifies a loop for `break` and `continue`, unique within a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopId(pub u32);

/// An argument of inline PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxOperand {
    /// A scalar input register.
    Value(Handle<Expression>),
    /// A local array (`acc` or, read and written, `&mut acc`): one register per element,
    /// which the template names together (`{$1}` is `{%f1, %f2, ..}`). Read-write
    /// elements are in/out operands: the instruction reads and replaces them, as the
    /// accumulators of `wgmma.mma_async` need.
    Array {
        local: Handle<LocalVariable>,
        read_write: bool,
    },
}

/// Statements: what a function does, in order.
#[derive(Clone, Debug)]
pub enum Statement {
    /// Writes `value` to the local variable.
    LocalStore {
        local: Handle<LocalVariable>,
        value: Handle<Expression>,
    },
    /// Writes `value` through `pointer`.
    Store {
        pointer: Handle<Expression>,
        value: Handle<Expression>,
    },
    /// Runs `accept` if `condition` is true, else `reject`.
    If {
        condition: Handle<Expression>,
        accept: Block,
        reject: Block,
    },
    /// Runs `body` then `continuing`, forever, until a `Break` or `Return` leaves it.
    /// `Continue` jumps to `continuing`, which may itself `Break` (that is how stepped
    /// ranges end without overflowing).
    Loop {
        id: LoopId,
        body: Block,
        continuing: Block,
    },
    /// Leaves the loop `target`.
    Break { target: LoopId },
    /// Goes to the `continuing` block of loop `target`.
    Continue { target: LoopId },
    /// Returns from the function.
    Return { value: Option<Handle<Expression>> },
    /// A nested block.
    Block(Block),
    /// Calls `function` with `arguments` (slices passed as slices), storing its return
    /// value, if any, in `result`.
    Call {
        function: Handle<Function>,
        arguments: Vec<Handle<Expression>>,
        result: Option<Handle<LocalVariable>>,
    },
    /// Calls the `#[extern_device]` function `function` (scalars only), storing its return
    /// value, if any, in `result`.
    CallExtern {
        function: Handle<ExternFunction>,
        arguments: Vec<Handle<Expression>>,
        result: Option<Handle<LocalVariable>>,
    },
    /// Loads `results.len()` consecutive elements starting at `pointer` (which must be
    /// aligned to their total size) in one access, into `results`.
    VectorLoad {
        pointer: Handle<Expression>,
        results: Vec<Handle<LocalVariable>>,
    },
    /// Stores `values` to consecutive elements starting at `pointer` in one access.
    VectorStore {
        pointer: Handle<Expression>,
        values: Vec<Handle<Expression>>,
    },
    /// Inline PTX: `template` with `$N` operands (the result first, if any, then one
    /// number per argument; a register array's `$N` stands for its whole list).
    InlinePtx {
        template: String,
        arguments: Vec<PtxOperand>,
        result: Option<Handle<LocalVariable>>,
        /// The typed tensor-core operation the template spells, if it is one (the
        /// simulator runs it without reading the text); `None` for `ptx!`.
        op: Option<crate::tensor_op::TensorOp>,
    },
    /// Formatted output through `vprintf` (`print!`/`println!`).
    Print {
        pieces: Vec<FormatPiece>,
        arguments: Vec<Handle<Expression>>,
    },
    /// Stops the kernel with a device-side assertion failure carrying `message`; the host
    /// sees `CUDA_ERROR_ASSERT` and the driver prints the message with the kernel's name.
    Trap { message: String },
    /// A device intrinsic with an effect or a per-thread result (barrier, fence, atomic,
    /// warp operation): a statement, so it runs exactly once, where it is written. Atomics
    /// take the element's pointer first.
    Intrinsic {
        intrinsic: Intrinsic,
        arguments: Vec<Handle<Expression>>,
        result: Option<Handle<LocalVariable>>,
    },
}

/// A literal of a scalar type. Integers are stored as their two's-complement bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    Bool(bool),
    Int { bits: u64, ty: Scalar },
    Float { value: f64, ty: Scalar },
}

impl Literal {
    /// The scalar type of the literal.
    pub fn scalar(&self) -> Scalar {
        match *self {
            Literal::Bool(_) => Scalar::Bool,
            Literal::Int { ty, .. } | Literal::Float { ty, .. } => ty,
        }
    }
}

/// Compile options that kernel code can test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompileFlag {
    /// Whether `debug_assert!`s are checked.
    DebugAssertions,
}

/// Values that the hardware provides to each thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinValue {
    ThreadIdx(Axis),
    BlockIdx(Axis),
    BlockDim(Axis),
    GridDim(Axis),
}

/// Expressions: values computed from arguments, locals, memory and other expressions.
#[derive(Clone, Debug)]
pub enum Expression {
    Literal(Literal),
    /// The value of argument `index` of the function.
    FunctionArgument(u32),
    /// The current value of a local variable.
    LocalLoad(Handle<LocalVariable>),
    /// The value `pointer` points to.
    Load {
        pointer: Handle<Expression>,
    },
    /// A pointer to element `index` of the slice or pointer `base`.
    ElementPointer {
        base: Handle<Expression>,
        index: Handle<Expression>,
    },
    /// The length of a slice, as `usize`.
    SliceLength {
        slice: Handle<Expression>,
    },
    Unary {
        op: UnaryOp,
        operand: Handle<Expression>,
    },
    /// An arithmetic, bitwise or comparison operator; never `&&`/`||` (see `Logical`).
    Binary {
        op: BinaryOp,
        left: Handle<Expression>,
        right: Handle<Expression>,
    },
    /// Short-circuit `&&`/`||`: `right` is evaluated only when it decides the result.
    Logical {
        and: bool,
        left: Handle<Expression>,
        right: Handle<Expression>,
    },
    /// Rust's `as` between scalars.
    Cast {
        value: Handle<Expression>,
        to: Scalar,
    },
    Builtin(BuiltinValue),
    /// A flag of the compile options (`bool`), so one IR serves every option set.
    CompileFlag(CompileFlag),
    /// A shared array, as a mutable slice.
    SharedSlice(Handle<SharedVariable>),
    /// A pointer to member `field` of the struct `base` points to (or of the struct value
    /// `base`, which back ends keep in memory).
    FieldPointer {
        base: Handle<Expression>,
        field: u32,
    },
    /// A pointer to a local variable (a struct local whose fields are written).
    LocalPointer(Handle<LocalVariable>),
    /// A pointer to the struct value `value` (kept in memory by back ends), for an
    /// `#[extern_device]` parameter `&S`. Read-only.
    ValuePointer {
        value: Handle<Expression>,
    },
    /// The slice of `length` elements of type `elem` at the device address `address`
    /// (`usize`): `slice_at`/`slice_at_mut`, e.g. over an NCCL peer's window.
    RawSlice {
        address: Handle<Expression>,
        length: Handle<Expression>,
        elem: Handle<Type>,
        mutable: bool,
    },
    /// `&base[start..end]`: the elements `start..end` of the slice `base` (`end` absent:
    /// to its end), a view of the same memory. Bounds-checked like indexing: `start <= end
    /// <= base.len()`.
    SubSlice {
        base: Handle<Expression>,
        start: Handle<Expression>,
        end: Option<Handle<Expression>>,
    },
    /// A pointer to element `index` of the local array `local`.
    ArrayElement {
        local: Handle<LocalVariable>,
        index: Handle<Expression>,
    },
    /// A pointer to element `index` of the array `array` points to (an array field of a
    /// struct, `m.v[k]`), bounds-checked against the array's length.
    MemberElement {
        array: Handle<Expression>,
        index: Handle<Expression>,
    },
    /// The generic address (`u64`) of the kernel's tensor-map parameter `argument`, which
    /// stays in parameter memory (grid-constant): what `cp.async.bulk.tensor` takes.
    TensorMapAddress {
        argument: u32,
    },
    /// A scalar method: `argument.function(arg1, arg2)`.
    Math {
        function: MathFunction,
        argument: Handle<Expression>,
        arg1: Option<Handle<Expression>>,
        arg2: Option<Handle<Expression>>,
    },
}
