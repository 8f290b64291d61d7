//! NVVM IR text writer: the typed kernel IR in the LLVM 7.0.1 dialect libNVVM reads.
//!
//! libNVVM (CUDA 12 and 13) parses only this dialect: typed pointers (`float*`), no `fneg`
//! instruction, kernels listed in `!nvvm.annotations` and, for `-gen-lto`, in `@llvm.used`
//! (otherwise the LTO link drops them). The writer requires the [`KernelInfo`] proof of the
//! validator and never re-derives types.
//!
//! Lowering choices, each matching Rust's semantics in release builds or CUDA C++'s:
//! - integer arithmetic wraps; shift amounts are masked to the type's width (Rust's
//!   `wrapping_shl`);
//! - float-to-integer `as` saturates and maps NaN to 0 (PTX `cvt.rzi` saturates; NaN is
//!   tested explicitly because 64-bit `cvt.rzi` turns it into the minimum, as measured on
//!   an H200);
//! - `&mut [T]` parameters are `noalias`, `&[T]` parameters `noalias readonly`, so reads
//!   may use the read-only data cache (`ld.global.nc`) as `const __restrict__` does in C++;
//! - `bool` is one byte in memory and as a kernel parameter, `i1` in registers.
//!
//! One function at a time (`function.rs`'s writer), by idea: `expression.rs`, `call.rs`,
//! `intrinsic.rs`, `atomic.rs`, `grid_sync.rs` (the cooperative grid barrier), `math.rs`, `format.rs` (`printf`) and `check.rs` (bounds
//! checks and assertions); `types.rs` names LLVM's types.

mod atomic;
mod call;
mod check;
mod expression;
mod float_methods;
mod format;
mod function;
mod grid_sync;
mod inline_ptx;
mod int_methods;
mod intrinsic;
mod math;
mod types;

use std::collections::BTreeSet;
use std::fmt::Write;

use cudajit_core::ir::Module;
use cudajit_core::valid::KernelInfo;

pub use function::WriteError;

/// `target datalayout` of 64-bit NVPTX.
pub const DATA_LAYOUT: &str = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64";

/// `target triple` of 64-bit NVPTX.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// Choices of the generated code that are not in the IR.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WriteOptions {
    /// Check every slice, shared-array and local-array index; an index out of bounds
    /// prints the index, the length and the place, and stops the kernel.
    pub bounds_checks: bool,
    /// Check `debug_assert!`s.
    pub debug_assertions: bool,
    /// The source file of the kernel, for messages.
    pub file: String,
}

/// NVVM IR text, and what it declares without defining: what the compilers must add.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NvvmIr {
    /// The module's text.
    pub text: String,
    /// The symbols of the functions it declares and does not define: libdevice's `__nv_*`,
    /// `vprintf`, LLVM's and NVVM's intrinsics, the symbols of `#[extern_device]` functions.
    pub declared: BTreeSet<String>,
    /// The `#[extern_device]` functions it calls, with the symbols they bind to.
    pub externs: BTreeSet<ExternCall>,
}

/// A call of an `#[extern_device]` function: a symbol a device library must define.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExternCall {
    /// The function's Rust name.
    pub function: String,
    /// The symbol it binds to.
    pub symbol: String,
}

impl NvvmIr {
    /// IR text written by hand (tests, probes) that declares nothing the compilers must
    /// add: libdevice is not linked for it.
    pub fn handwritten(text: impl Into<String>) -> NvvmIr {
        NvvmIr {
            text: text.into(),
            ..NvvmIr::default()
        }
    }

    /// Whether it calls libdevice (an `__nv_*` function): then libNVVM links libdevice.
    pub fn needs_libdevice(&self) -> bool {
        self.declared
            .iter()
            .any(|symbol| symbol.starts_with("__nv_"))
    }
}

/// Writes `module` as NVVM IR with default options (no checks).
pub fn write_module(module: &Module, info: &KernelInfo) -> Result<NvvmIr, WriteError> {
    write_module_with(module, info, &WriteOptions::default())
}

/// Writes `module` as NVVM IR.
pub fn write_module_with(
    module: &Module,
    info: &KernelInfo,
    options: &WriteOptions,
) -> Result<NvvmIr, WriteError> {
    let mut out = String::new();
    let _ = writeln!(out, "target datalayout = \"{DATA_LAYOUT}\"");
    let _ = writeln!(out, "target triple = \"{TRIPLE}\"\n");

    // User structs, in the layout rustc gave them (checked to equal LLVM's natural one).
    for (_, ty) in module.types.iter() {
        if let cudajit_core::ir::TypeInner::Struct {
            name,
            members,
            size,
            ..
        } = &ty.inner
        {
            let _ = writeln!(out, "{}", struct_definition(module, name, members, *size)?);
        }
    }
    if module
        .types
        .iter()
        .any(|(_, ty)| ty.inner == cudajit_core::ir::TypeInner::TensorMap)
    {
        let words = cudajit_core::abi::TENSOR_MAP_BYTES / 8;
        let _ = writeln!(
            out,
            "{} = type {{ [{words} x i64] }}",
            function::TENSOR_MAP_TYPE
        );
    }

    // Shared memory: one array per `shared_array` binding, and the launch's dynamic
    // shared memory as an external array of bytes (16-byte aligned, for vector access).
    for (handle, shared) in module.shared.iter() {
        let elem = match module.types[shared.elem].inner {
            cudajit_core::ir::TypeInner::Scalar(s) => types::memory(s),
            _ => "i8",
        };
        if let Some(len) = shared.len {
            let _ = writeln!(
                out,
                "{} = internal addrspace(3) global [{len} x {elem}] undef, align 16",
                function::shared_global_name(handle.index())
            );
        }
    }
    if module.shared.iter().any(|(_, s)| s.len.is_none()) {
        let _ = writeln!(
            out,
            "{} = external addrspace(3) global [0 x i8], align 16",
            function::DYNAMIC_SHARED
        );
    }
    out.push('\n');

    let mut declarations = BTreeSet::new();
    let mut externs = BTreeSet::new();
    let mut constants = Vec::new();
    let mut kernels = Vec::new();
    // Device functions first, so readers meet callees before callers.
    for (handle, function) in module.functions.iter() {
        let entry = module.entry_points.iter().find(|e| e.function == handle);
        let symbol = function::symbol_of(module, handle);
        let written = function::write_function(
            module,
            function,
            info.function(handle),
            &symbol,
            entry.is_some(),
            options,
        )?;
        out.push_str(&written.text);
        out.push('\n');
        declarations.extend(written.declarations);
        externs.extend(written.externs);
        constants.extend(written.constants);
        if entry.is_some() {
            let bound = entry.and_then(|e| e.max_threads);
            kernels.push((symbol, written.pointer_type, written.grid_constant, bound));
        }
    }
    for declaration in &declarations {
        let _ = writeln!(out, "{declaration}");
    }
    for constant in &constants {
        let _ = writeln!(out, "{constant}");
    }

    // Kernels must be in `@llvm.used`, or an LTO link drops them silently.
    let used: Vec<String> = kernels
        .iter()
        .map(|(symbol, ty, _, _)| format!("i8* bitcast ({ty} @{symbol} to i8*)"))
        .collect();
    let _ = writeln!(
        out,
        "\n@llvm.used = appending global [{} x i8*] [{}], section \"llvm.metadata\"",
        used.len(),
        used.join(", ")
    );
    let annotations: Vec<String> = (0..kernels.len()).map(|i| format!("!{i}")).collect();
    let _ = writeln!(out, "!nvvm.annotations = !{{{}}}", annotations.join(", "));
    // Metadata nodes after the kernels' own: the `grid_constant` parameter lists.
    let mut next_node = kernels.len();
    let mut lists = Vec::new();
    for (i, (symbol, ty, grid_constant, max_threads)) in kernels.iter().enumerate() {
        // `!"grid_constant", !{i32 1, ..}` lists the parameters (1-based) the kernel reads
        // in place and never writes (the NVVM IR specification's "grid_constant").
        let grid_constant = match grid_constant.as_slice() {
            [] => String::new(),
            positions => {
                let list: Vec<String> = positions.iter().map(|p| format!("i32 {p}")).collect();
                lists.push(format!("!{next_node} = !{{{}}}", list.join(", ")));
                next_node += 1;
                format!(", !\"grid_constant\", !{}", next_node - 1)
            }
        };
        // `__launch_bounds__(N, 1)`: at most N threads per block, one block per SM at least.
        let bound = match max_threads {
            Some(n) => format!(", !\"maxntidx\", i32 {n}, !\"minctasm\", i32 1"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "!{i} = !{{{ty} @{symbol}, !\"kernel\", i32 1{grid_constant}{bound}}}"
        );
    }
    for list in &lists {
        let _ = writeln!(out, "{list}");
    }
    let version = next_node;
    let _ = writeln!(out, "!nvvmir.version = !{{!{version}}}");
    let _ = writeln!(out, "!{version} = !{{i32 2, i32 0}}");
    let declared = declarations
        .iter()
        .filter_map(|declaration| declared_symbol(declaration))
        .map(str::to_owned)
        .collect();
    Ok(NvvmIr {
        text: out,
        declared,
        externs,
    })
}

/// The symbol a `declare` line of the writer declares: `vprintf` of
/// `declare i32 @vprintf(i8*, i8*) nounwind`.
fn declared_symbol(declaration: &str) -> Option<&str> {
    let (_, named) = declaration.split_once('@')?;
    let (symbol, _) = named.split_once('(')?;
    Some(symbol)
}

/// `%struct.Name = type { .. }`, after checking that LLVM's natural layout of the members
/// puts each at the offset rustc chose (true of `#[repr(C)]` structs of scalars, structs
/// and arrays of them).
fn struct_definition(
    module: &Module,
    name: &str,
    members: &[cudajit_core::ir::StructMember],
    size: u32,
) -> Result<String, WriteError> {
    let mut offset = 0u32;
    let mut max_align = 1u32;
    let mut fields = Vec::new();
    for member in members {
        let Some((ty, bytes, align)) = member_layout(module, member.ty) else {
            return Err(unsupported_layout(name, "a member of an unsupported type"));
        };
        offset = offset.div_ceil(align) * align;
        if offset != member.offset {
            return Err(unsupported_layout(name, "padding LLVM would not insert"));
        }
        offset += bytes;
        max_align = max_align.max(align);
        fields.push(ty);
    }
    if offset.div_ceil(max_align) * max_align != size {
        return Err(unsupported_layout(name, "a size LLVM would not compute"));
    }
    Ok(format!(
        "{} = type {{ {} }}",
        function::struct_type_name(name),
        fields.join(", ")
    ))
}

/// A struct member's LLVM type, size and alignment: a scalar in its memory type, a struct
/// by name (its `#[repr(C)]` size and alignment), an array of either.
pub(super) fn member_layout(
    module: &Module,
    ty: cudajit_core::ir::Handle<cudajit_core::ir::Type>,
) -> Option<(String, u32, u32)> {
    use cudajit_core::ir::TypeInner;
    match &module.types[ty].inner {
        TypeInner::Scalar(s) => {
            Some((types::memory(*s).to_owned(), s.size_bytes(), s.size_bytes()))
        }
        TypeInner::Struct {
            name, size, align, ..
        } => Some((function::struct_type_name(name), *size, *align)),
        TypeInner::Array { base, len } => {
            let (elem, size, align) = member_layout(module, *base)?;
            Some((format!("[{len} x {elem}]"), size * len, align))
        }
        _ => None,
    }
}

fn unsupported_layout(name: &str, what: &str) -> WriteError {
    WriteError {
        function: name.to_owned(),
        span: cudajit_core::Span::default(),
        what: format!("the struct layout ({what})"),
    }
}
