//! The table's "no" rows: each is refused at build time by a case of `tests/compile_fail/`
//! (compiled against its snapshot by `tests/compile_fail.rs`), and its error must say what
//! the row's test expects.
//!
//! `no` rows' messages name what was written and the alternative (or the accepted forms);
//! an `unclear` row's message does not (mutual recursion, refused by rustc's own cycle
//! error), and the table gives the alternative instead.

/// A case of `tests/compile_fail/`: its name and its snapshot, read when this test is
/// built (so a missing case is a build error, and a test binary staged for the GPU machine
/// needs no source tree).
pub struct Case {
    pub name: &'static str,
    pub stderr: &'static str,
}

macro_rules! case {
    ($name:literal) => {{
        // The case itself must exist too.
        const _: &str = include_str!(concat!("../compile_fail/", $name, ".rs"));
        Case {
            name: $name,
            stderr: include_str!(concat!("../compile_fail/", $name, ".stderr")),
        }
    }};
}

/// A refused row: where it is refused, and a phrase its error must contain (every
/// refusal's message names the alternative the row gives).
pub struct Refusal {
    pub id: &'static str,
    /// The case of `tests/compile_fail/` that refuses it at build time.
    pub at: Case,
    pub says: &'static str,
}

impl Refusal {
    /// What is wrong with this refusal, if anything: its case or snapshot missing, an error
    /// without the phrase, a kernel that compiles, a row whose status is not "no".
    pub fn check(&self, row: &str) -> Option<String> {
        if !row.contains("| no — write instead: ") {
            return Some(format!(
                "row `{}` is refused but its status is not `no — write instead: …`",
                self.id
            ));
        }
        let place = format!("tests/compile_fail/{}.stderr", self.at.name);
        let error = self.at.stderr;
        if row.ends_with(UNCLEAR) {
            return Some(format!(
                "row `{}`: every refusal names its alternative now; drop \"{UNCLEAR}\"",
                self.id
            ));
        }
        if !error.contains(self.says) {
            return Some(format!(
                "row `{}`: the error of {place} does not contain \"{}\":\n{error}",
                self.id, self.says
            ));
        }
        None
    }
}

/// How the table once marked a row whose error did not name the alternative.
const UNCLEAR: &str = " (the error does not say so yet) |";

const fn no(id: &'static str, case: Case, says: &'static str) -> Refusal {
    Refusal { id, at: case, says }
}

/// The crate's cases of the expressions, patterns and methods refused.
const EXPRESSIONS: Case = case!("conformance_expressions");
const PATTERNS: Case = case!("conformance_patterns");
const METHODS: Case = case!("conformance_methods");

pub const REFUSED: &[Refusal] = &[
    // Expressions.
    no(
        "expr.literal-string",
        case!("string_literal"),
        "integer and float literals only",
    ),
    no(
        "expr.literal-char",
        EXPRESSIONS,
        "kernels support `bool`, integer and float literals only",
    ),
    no(
        "expr.range-value",
        case!("range_outside_for"),
        "the iterator of a `for` loop",
    ),
    no(
        "expr.struct-update",
        case!("struct_literal"),
        "give every field",
    ),
    no("expr.closure-move", case!("closure_move"), "remove `move`"),
    no(
        "expr.closure-return",
        case!("closure_return"),
        "end the closure's body with its value",
    ),
    no(
        "expr.closure-value",
        case!("closure_as_value"),
        "passed to a `#[device]` function taking `F: Fn(..) -> R`",
    ),
    no(
        "expr.dyn-fn",
        case!("closure_boxed"),
        "take `F: Fn(..) -> R`",
    ),
    no(
        "expr.fn-value",
        EXPRESSIONS,
        "is a function used as a value, which kernels do not have: write instead a closure",
    ),
    no("expr.box", case!("box_new"), "use a local array"),
    no("expr.vec", case!("vec_with_capacity"), "use a local array"),
    no("expr.transmute", case!("transmute"), "x.to_bits()"),
    no(
        "expr.array-literal-operand",
        case!("array_expression"),
        "bind it first",
    ),
    no(
        "expr.tuple-operand",
        case!("tuple_expression"),
        "bind the tuple first",
    ),
    no(
        "expr.match-tuple",
        EXPRESSIONS,
        "`match` on a tuple is not supported in kernels: write instead nested `match`es",
    ),
    no(
        "expr.macro",
        EXPRESSIONS,
        "the macro `matches!` is not supported inside kernels; supported:",
    ),
    no(
        "expr.underscore-assignment",
        EXPRESSIONS,
        "`_ = value;` is not supported in kernels: write instead `value;`",
    ),
    no(
        "expr.struct-assignment",
        EXPRESSIONS,
        "write instead one assignment per field, `a = p.a; b = p.b;`",
    ),
    no(
        "expr.array-assignment",
        case!("destructuring_assignment"),
        "only local variables and slice elements (`y[i]`) can be assigned",
    ),
    no(
        "expr.const-block",
        EXPRESSIONS,
        "`const { .. }` blocks are not supported in kernels: write instead a `const` item",
    ),
    no(
        "expr.trait-static-fn",
        EXPRESSIONS,
        "write instead a method on a value of `S` passed in",
    ),
    no(
        "expr.dyn-trait-chosen",
        EXPRESSIONS,
        "is chosen at run time, which needs dynamic dispatch",
    ),
    no(
        "expr.dereference-other",
        case!("dereference"),
        "index slices instead",
    ),
    // Statements.
    no(
        "stmt.nested-fn",
        case!("nested_fn"),
        "declare it at module level with `#[device]`",
    ),
    no(
        "stmt.use",
        EXPRESSIONS,
        "cannot be declared inside a kernel: declare them at module level",
    ),
    no(
        "stmt.static-mut",
        case!("static_mut_in_body"),
        "write to a `&mut [T]` parameter",
    ),
    no(
        "stmt.let-inferred",
        EXPRESSIONS,
        "leave other locals untyped",
    ),
    // Patterns.
    no(
        "pat.wildcard-let",
        PATTERNS,
        "`let _ = value;` is not supported in kernels: write instead `value;`",
    ),
    no(
        "pat.tuple-rest",
        PATTERNS,
        "a tuple `let` binds plain names or `_`",
    ),
    no(
        "pat.nested-tuple",
        case!("let_tuple_pattern"),
        "binds plain names or `_`",
    ),
    no(
        "pat.half-open-range",
        PATTERNS,
        "range patterns need both ends in kernels: `a..=b`",
    ),
    no(
        "pat.binding",
        case!("match_binding_pattern"),
        "literal, range (`a..=b`), `Enum::Variant`, `|` and `_` patterns",
    ),
    no(
        "pat.rest-binding",
        case!("let_array_pattern"),
        "binds names, `_` and `..`",
    ),
    no(
        "pat.parameter",
        case!("pattern_parameter"),
        "parameters must be plain names",
    ),
    no(
        "pat.ref-binding",
        PATTERNS,
        "`ref` bindings are not supported in kernels: write instead a plain binding",
    ),
    no(
        "pat.constant",
        PATTERNS,
        "literal, range (`a..=b`), `Enum::Variant`, `|` and `_` patterns",
    ),
    no(
        "pat.path-range",
        PATTERNS,
        "the bounds of a pattern are literals in kernels: write instead the literal",
    ),
    // Items.
    no(
        "item.recursion",
        case!("recursion"),
        "recursion is not supported",
    ),
    no(
        "item.mutual-recursion",
        case!("mutual_recursion"),
        "CALL_DEPTH_RECURSION_IS_NOT_SUPPORTED_WRITE_A_LOOP",
    ),
    no(
        "item.plain-fn",
        case!("not_device_function"),
        "add `#[device]` to it",
    ),
    no(
        "item.plain-impl",
        case!("method_not_device"),
        "add `#[device]` to its impl block",
    ),
    no(
        "item.generic-impl-instance",
        case!("generic_structs_refused"),
        "write instead the block generic over the struct's parameters",
    ),
    no(
        "item.generic-impl-const",
        case!("generic_structs_refused"),
        "write instead a method returning it",
    ),
    no(
        "item.enum-fields",
        case!("enum_with_fields"),
        "kernels see them as integers",
    ),
    no(
        "item.where-clause",
        case!("where_clause"),
        "put the bounds on the parameter",
    ),
    no("item.lifetime", case!("lifetime_parameter"), "remove it"),
    no(
        "item.async-fn",
        case!("async_kernel"),
        "a kernel cannot be `async`",
    ),
    no(
        "item.const-fn",
        case!("const_kernel"),
        "a kernel cannot be `const`",
    ),
    no(
        "item.kernel-result",
        case!("return_type"),
        "write results into a `&mut [T]` parameter",
    ),
    no(
        "item.kernel-scalar-reference",
        EXPRESSIONS,
        "kernels cannot take `&mut f32` (the host passes buffers): write instead a slice, `&mut [f32]`",
    ),
    no(
        "item.result",
        EXPRESSIONS,
        "device functions return a scalar (or a generic scalar type), a `DeviceCopy` struct",
    ),
    // The standard library.
    no(
        "core.trait-path",
        EXPRESSIONS,
        "`Ord::min` is a standard trait's function called by its path, which kernels do not have: write instead the method call, `a.min(b)`",
    ),
    no(
        "core.default",
        EXPRESSIONS,
        "`Default::default` is a standard trait's function called by its path, which kernels do not have: write instead the value itself",
    ),
    no(
        "core.mem",
        EXPRESSIONS,
        "`core::mem::swap` is a function of the standard library, which kernels cannot call",
    ),
    no(
        "core.cmp",
        EXPRESSIONS,
        "`core::cmp::max` is a function of the standard library, which kernels cannot call",
    ),
    no(
        "core.into",
        METHODS,
        "method `into` of `f32` is not supported in kernels: write instead a cast, `x as f64`",
    ),
    no(
        "core.format-width",
        case!("format_mismatch"),
        "use `{}`, `{:?}`, `{:.N}`",
    ),
    no(
        "core.format-non-scalar",
        case!("print_non_scalar"),
        "print the elements or fields instead",
    ),
    // Methods of the integer types: the messages name the language's list of methods.
    no(
        "int.checked",
        METHODS,
        "method `checked_add` of `u32` is not supported in kernels",
    ),
    no(
        "int.overflowing",
        METHODS,
        "method `overflowing_add` of `u32` is not supported in kernels",
    ),
    no(
        "int.wrapping-div-pow",
        METHODS,
        "method `wrapping_div` of `u32` is not supported in kernels",
    ),
    no(
        "int.saturating-pow",
        METHODS,
        "method `saturating_pow` of `u32` is not supported in kernels",
    ),
    no(
        "int.ones-zeros",
        METHODS,
        "method `leading_ones` of `u32` is not supported in kernels",
    ),
    no(
        "int.power-of-two",
        METHODS,
        "method `is_power_of_two` of `u32` is not supported in kernels",
    ),
    no(
        "int.ilog",
        METHODS,
        "method `ilog2` of `u32` is not supported in kernels",
    ),
    no(
        "int.isqrt",
        METHODS,
        "method `isqrt` of `u32` is not supported in kernels",
    ),
    no(
        "int.unsigned-abs",
        METHODS,
        "method `unsigned_abs` of `i32` is not supported in kernels",
    ),
    no(
        "int.sign-tests",
        METHODS,
        "method `is_negative` of `i32` is not supported in kernels",
    ),
    no(
        "int.bytes",
        METHODS,
        "method `to_le_bytes` of `u32` is not supported in kernels",
    ),
    no(
        "int.multiple-of",
        METHODS,
        "method `is_multiple_of` of `u32` is not supported in kernels",
    ),
    no(
        "int.midpoint",
        METHODS,
        "method `midpoint` of `u32` is not supported in kernels",
    ),
    // Methods of the float types.
    no(
        "float.classify",
        METHODS,
        "method `is_finite` of `f32` is not supported in kernels",
    ),
    no(
        "float.sign-tests",
        METHODS,
        "method `is_sign_negative` of `f32` is not supported in kernels",
    ),
    no(
        "float.sin-cos",
        METHODS,
        "method `sin_cos` of `f32` is not supported in kernels",
    ),
    no(
        "float.log-base",
        METHODS,
        "method `log` of `f32` is not supported in kernels",
    ),
    no(
        "float.round-ties-even",
        METHODS,
        "method `round_ties_even` of `f32` is not supported in kernels",
    ),
    no(
        "float.degrees",
        case!("method_call"),
        "method `to_degrees` of `f32` is not supported in kernels",
    ),
    // `bool`, slices, arrays, `Option`.
    no(
        "bool.then",
        METHODS,
        "method `then_some` of `bool` is not supported in kernels: write instead `if b { Some(v) } else { None }`",
    ),
    no(
        "slice.is-empty",
        METHODS,
        "method `is_empty` of `[f32]` is not supported in kernels: write instead `x.len() == 0`",
    ),
    no(
        "slice.contains",
        METHODS,
        "method `contains` of `[f32]` is not supported in kernels: write instead `x.iter().any(|&v| v == w)`",
    ),
    no(
        "slice.swap",
        METHODS,
        "method `swap` of `&mut [f32]` is not supported in kernels: write instead `let t = y[a]; y[a] = y[b]; y[b] = t;`",
    ),
    no(
        "slice.fill",
        METHODS,
        "method `fill` of `&mut [f32]` is not supported in kernels: write instead `for v in y.iter_mut() { *v = w; }`",
    ),
    no(
        "slice.copy-from-slice",
        METHODS,
        "method `copy_from_slice` of `&mut [f32]` is not supported in kernels: write instead `for (o, v) in y.iter_mut().zip(x.iter()) { *o = *v; }`",
    ),
    no(
        "slice.first-last",
        case!("if_let"),
        "method `first` of `[f32]` is not supported in kernels: write instead `x.get(0)`",
    ),
    no(
        "slice.chunks-windows",
        case!("for_over_iterator"),
        "walk the starts with an index loop",
    ),
    no(
        "array.map",
        METHODS,
        "method `map` of `[f32; 2]` is not supported in kernels: write instead a loop writing a new array",
    ),
    no(
        "option.take",
        METHODS,
        "`Option::take` is not supported in kernels: write instead",
    ),
    no(
        "option.eq",
        METHODS,
        "comparing `Option`s with `==` or `!=` is not supported in kernels: write instead `o.is_some_and(|v| v == 3)`",
    ),
    // Iterators.
    no(
        "iter.step-by-rev",
        case!("step_by_then_rev"),
        "write `.rev().step_by(s)`",
    ),
    no(
        "iter.rev-after-adapter",
        METHODS,
        "write it before `map`, `filter` and the other adapters",
    ),
    no(
        "iter.nth",
        METHODS,
        "`nth` is not an iterator method kernels have: write instead `x.get(n)` on the source",
    ),
    no(
        "iter.rposition",
        METHODS,
        "`rposition` is not an iterator method kernels have: write instead `(0..x.len()).rev().find(|&k| ..)`",
    ),
    no(
        "iter.filter-map",
        METHODS,
        "`filter_map` is not an iterator method kernels have: write instead `filter` then `map`",
    ),
    no(
        "iter.stored",
        METHODS,
        "an iterator cannot be kept in a local in kernels: write instead the whole chain in one expression",
    ),
    no(
        "iter.collect",
        METHODS,
        "a local array is created with its value",
    ),
];
