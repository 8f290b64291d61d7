//! Procedural macros of cudajit.
//!
//! Each entry point is short: parse (syn → cudajit's captured syntax, collecting every
//! error at its span), check, generate. On error the user's function is still emitted next
//! to the `compile_error!`s, so IDEs and rustc keep working on the rest of the file.

mod check;
mod derive;
mod errors;
mod extern_device;
mod generate;
mod parse;

use proc_macro::TokenStream;

/// Marks a function as a GPU kernel.
///
/// The body stays ordinary Rust that rustc type-checks; the macro captures it, and at the
/// first launch cudajit JIT-compiles it for the GPU it runs on. The macro replaces the
/// function by a module of the same name holding the typed host launcher:
///
/// ```ignore
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
///     let i = global_index();
///     if i < y.len() {
///         y[i] = a * x[i] + y[i];
///     }
/// }
///
/// // saxpy::launch(&stream, LaunchConfig::for_elements(n), 2.0, &x, &mut y)?;
/// ```
///
/// See the `cudajit` crate for the language and the launch API.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    generate::expand(parse::FnKind::Kernel, attr.into(), item.into()).into()
}

/// Marks a function that kernels (and other device functions) can call.
///
/// The function stays ordinary Rust, callable on the host; the macro also captures its
/// body so that a kernel calling it compiles it into the same module (the call inlines).
/// Device functions may be generic over scalar types (`T: Float`, `T: Int`) and consts.
///
/// ```ignore
/// use cudajit::prelude::*;
///
/// #[device]
/// fn lerp<T: Float>(a: T, b: T, t: T) -> T {
///     a + (b - a) * t
/// }
/// ```
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    generate::expand(parse::FnKind::Device, attr.into(), item.into()).into()
}

/// Declares external device functions that a device library the user supplies defines
/// (CUDA C++ compiled by nvcc to LTO-IR, a fatbin, PTX or a cubin).
///
/// On an `extern "C"` block; `library` names a `static` `cudajit::DeviceLibrary`. Kernels
/// and `#[device]` functions call the functions as ordinary Rust (no `unsafe`: the
/// declaration is trusted); nvJitLink links the library in, and with LTO-IR the calls
/// inline. Parameters and results are scalars (`bool` passes as a C `bool`, one byte). The
/// symbol is the Rust name, or `#[link_name = "c_name"]`. On the host the functions panic.
///
/// ```ignore
/// use cudajit::prelude::*;
/// use cudajit::{DeviceLibrary, LibraryKind};
///
/// static FAST_MATH: DeviceLibrary =
///     DeviceLibrary::file("fast_math", LibraryKind::Fatbin, "fast_math.fatbin");
///
/// #[extern_device(library = FAST_MATH)]
/// extern "C" {
///     fn fast_sigmoid(x: f32) -> f32;
///     #[link_name = "fast_math_clamp"]
///     fn clamp(x: f32, lo: f32, hi: f32) -> f32;
/// }
/// ```
#[proc_macro_attribute]
pub fn extern_device(attr: TokenStream, item: TokenStream) -> TokenStream {
    extern_device::expand(attr.into(), item.into()).into()
}

/// Lets kernels take a struct by value and in slices: `#[derive(Clone, Copy, DeviceCopy)]`
/// on a `#[repr(C)]` struct whose fields are scalars. Kernels read and write its fields
/// (`p.mass`, `ps[i].pos_x += v`) and copy whole values (`let p = ps[i]; ps[j] = p;`).
///
/// On a fieldless enum with an integer `#[repr(u8..i64)]`, kernels take it by value and in
/// read-only slices as that integer, and name, compare and `match` its variants.
///
/// ```ignore
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(C)]
/// struct Particle { x: f32, v: f32, id: u32 }
///
/// #[derive(Clone, Copy, PartialEq, DeviceCopy)]
/// #[repr(u8)]
/// enum Op { Add = 1, Sub = 7, Mul }
/// ```
#[proc_macro_derive(DeviceCopy, attributes(device_drop))]
pub fn device_copy(input: TokenStream) -> TokenStream {
    derive::device_copy(input.into()).into()
}
