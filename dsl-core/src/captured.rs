//! The form in which the `#[kernel]` and `#[device]` macros embed functions into the
//! program.

use crate::ast::FunctionSource;
use crate::constant::ConstantValue;
use crate::external::DeviceLibrary;
use crate::layout::StructLayout;

/// A function captured at compile time: its syntax as compact JSON, a BLAKE3 hash of that text
/// computed when the macro expanded (so the JIT cache can be consulted without parsing or
/// lowering anything), and the `#[device]` functions it calls.
#[derive(Clone, Copy, Debug)]
pub struct CapturedFunction {
    /// The function's Rust name.
    pub name: &'static str,
    /// [`FunctionSource`] serialised by [`FunctionSource::to_json`].
    pub source: &'static str,
    /// Lowercase hex BLAKE3 of `source`.
    pub source_hash: &'static str,
    /// The file that defines the function (`file!()`), for messages.
    pub file: &'static str,
    /// The device functions it calls directly, by name. A function rather than a slice, so
    /// that mutually recursive functions do not make a cycle of constants (recursion is
    /// reported when the kernel is lowered).
    pub callees: fn() -> &'static [&'static CapturedFunction],
    /// The layouts of the user structs its signature names (by value or in slices).
    pub structs: fn() -> &'static [&'static StructLayout],
    /// For an `#[extern_device]` function: the device library that defines it.
    pub library: Option<fn() -> &'static DeviceLibrary>,
    /// The values of the Rust constants its body names, evaluated by rustc where the
    /// macro expanded (see [`crate::constant`]).
    pub constants: fn() -> &'static [ConstantValue],
    /// For a kernel declared `#[kernel(arch = "sm_90a")]`: the architecture-specific
    /// target it needs (its device functions inherit it; for them this is `None`).
    pub specific_arch: Option<SpecificArch>,
}

/// An architecture-specific target a kernel needs, `sm_XYa`: the kernel uses instructions
/// the PTX ISA offers only there (Hopper's `wgmma`, `setmaxnreg`), so it is compiled for
/// `sm_XYa` and runs only on GPUs of compute capability exactly `X.Y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpecificArch {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for SpecificArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sm_{}{}a", self.major, self.minor)
    }
}

/// A kernel is a captured function with an entry point.
pub type CapturedKernel = CapturedFunction;

impl CapturedFunction {
    /// Parses the captured syntax, with the values of the constants the body names.
    pub fn parse(&self) -> Result<FunctionSource, serde_json::Error> {
        let mut source = FunctionSource::from_json(self.source)?;
        source.constants = (self.constants)().to_vec();
        source.file = self.file.to_owned();
        Ok(source)
    }

    /// No constants: for functions whose body names no Rust constant.
    pub fn no_constants() -> &'static [ConstantValue] {
        &[]
    }

    /// No callees: for functions that call no device function.
    pub fn no_callees() -> &'static [&'static CapturedFunction] {
        &[]
    }

    /// No structs: for functions whose signature names no user struct.
    pub fn no_structs() -> &'static [&'static StructLayout] {
        &[]
    }

    /// The layouts of every struct this function and the device functions it reaches name.
    pub fn reachable_structs(&'static self) -> Vec<&'static StructLayout> {
        let mut layouts: Vec<&'static StructLayout> = Vec::new();
        for function in self.reachable() {
            for &layout in (function.structs)() {
                let layout = layout.instance();
                for layout in std::iter::once(layout).chain(layout.nested_layouts()) {
                    if !layouts.iter().any(|l| l.name == layout.name) {
                        layouts.push(layout);
                    }
                }
            }
        }
        layouts
    }

    /// The device libraries of the `#[extern_device]` functions this function reaches, each
    /// once, in the order first reached.
    pub fn reachable_libraries(&'static self) -> Vec<&'static DeviceLibrary> {
        let mut libraries: Vec<&'static DeviceLibrary> = Vec::new();
        for function in self.reachable() {
            if let Some(library) = function.library {
                let library = library();
                if !libraries.iter().any(|l| std::ptr::eq(*l, library)) {
                    libraries.push(library);
                }
            }
        }
        libraries
    }

    /// Whether this function or a device function it reaches calls `intrinsic` (as
    /// `grid_sync()`, which only a cooperative launch runs). Read from the captured syntax's
    /// serde form, where every call is an object whose `intrinsic` is the intrinsic, so no
    /// construct that nests calls is missed; a function whose text does not name the
    /// intrinsic at all is skipped without parsing.
    pub fn reaches_intrinsic(&'static self, intrinsic: crate::intrinsics::Intrinsic) -> bool {
        let Ok(tag) = serde_json::to_value(intrinsic) else {
            return false;
        };
        let text = match &tag {
            serde_json::Value::String(name) => name.clone(),
            other => other.to_string(),
        };
        self.reachable().iter().any(|function| {
            function.source.contains(&text)
                && serde_json::from_str::<serde_json::Value>(function.source)
                    .is_ok_and(|source| calls(&source, &tag))
        })
    }

    /// This function and every device function it reaches, each once, callers first: the
    /// functions it calls, and the drop hooks and `#[device]` methods of the structs it
    /// names.
    pub fn reachable(&'static self) -> Vec<&'static CapturedFunction> {
        let mut seen: Vec<&'static CapturedFunction> = vec![self];
        let mut next = 0;
        while next < seen.len() {
            let function = seen[next];
            let hooks = (function.structs)()
                .iter()
                .filter_map(|layout| layout.drop.map(|hook| hook.function()));
            // Every `#[device]` method of a struct the function names: which ones a body
            // calls is known only once its types are (`v.length()`, `a + b`).
            let methods = (function.structs)()
                .iter()
                .flat_map(|&layout| std::iter::once(layout).chain(layout.nested_layouts()))
                .flat_map(|layout| layout.device_functions());
            for callee in (function.callees)()
                .iter()
                .copied()
                .chain(hooks)
                .chain(methods)
            {
                if !seen.iter().any(|f| std::ptr::eq(*f, callee)) {
                    seen.push(callee);
                }
            }
            next += 1;
        }
        seen
    }
}

/// Implemented by the marker type `#[device]` declares next to each device function, so
/// that kernels find the function's captured form through ordinary name resolution (a
/// `use` of the function imports it too).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `#[device]` function",
    label = "kernels can only call functions marked `#[device]`"
)]
pub trait DeviceFunction {
    /// The captured function.
    const CAPTURED: CapturedFunction;
    /// One more than the deepest chain of device functions this one calls. The macros
    /// compute it from the callees' and have rustc evaluate it where each function is
    /// defined, so that mutual recursion (which kernels cannot run) is a build error: rustc
    /// reports the cycle ("cycle detected when const-evaluating `<f as DeviceFunction>::
    /// CALL_DEPTH_RECURSION_IS_NOT_SUPPORTED_WRITE_A_LOOP`"), naming every function in it.
    /// The name is long because it is the only text of that error cudajit controls: it
    /// says what the user reads it for. External functions are leaves.
    const CALL_DEPTH_RECURSION_IS_NOT_SUPPORTED_WRITE_A_LOOP: usize = 1;
}

/// Whether the serde form of captured syntax holds a call of the intrinsic `tag`.
fn calls(value: &serde_json::Value, tag: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Array(items) => items.iter().any(|item| calls(item, tag)),
        serde_json::Value::Object(fields) => {
            fields.get("intrinsic") == Some(tag) || fields.values().any(|field| calls(field, tag))
        }
        _ => false,
    }
}
