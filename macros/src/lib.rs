//! Procedural macros of cudajit.
//!
//! Each entry point is short: parse (syn → cudajit's captured syntax, collecting every
//! error at its span, `parse/`), check (`check.rs`), generate (`generate/`). On error the
//! user's item is still emitted next to the `compile_error!`s, with stand-ins for what call
//! sites name (`generate/fallback.rs`), so IDEs and rustc keep working on the rest of the
//! file and only the real errors show.

mod errors;
mod generate;
mod parse;

use proc_macro::TokenStream;

use errors::Errors;
use generate::{fallback, Paths};
use parse::FnKind;

/// Marks a function as a GPU kernel.
///
/// The body stays ordinary Rust that rustc type-checks; the macro captures it, and at the
/// first launch cudajit JIT-compiles it for the GPU it runs on (or runs it on the CPU
/// simulator). The macro replaces the function by a module of the same name holding:
///
/// - `launch(stream, config, args..) -> Result<(), cudajit::Error>`, the typed launcher:
///   `stream` is any `cudajit::LaunchStream` (a `cudajit::Stream`, a cudarc `CudaStream`,
///   a `cudajit::SimStream`, or an `Arc` or reference of one), `config` a
///   `cudajit::LaunchConfig` or cudarc's. The arguments follow the kernel's parameters in
///   order: scalars and `#[derive(DeviceCopy)]` values by value, `&[T]` as
///   `&impl KernelSlice<T>` and `&mut [T]` as `&mut impl KernelSliceMut<T>` (a
///   `cudajit::Buffer`, a cudarc `CudaSlice`/`CudaView`, a `SimBuffer`), so the borrow
///   checker holds every launch to the kernel's aliasing rules. Generic parameters become
///   the launcher's (`scale::launch::<f32>(..)`), and `#[comptime]` parameters become
///   arguments whose values are compiled into the code. The launch checks the
///   configuration against the kernel's limits first, and compiles (or loads from the
///   cache) at a specialisation's first launch on a GPU;
/// - `compile(context, comptime args..) -> Result<&'static cudajit::LoadedKernel, _>`: the
///   GPU compile and load ahead of the first launch, returning the loaded kernel with its
///   compile report;
/// - `static KERNEL: cudajit::Kernel`: the captured kernel and its per-process state (its
///   name, its NVVM IR, compiles for an architecture without a GPU).
///
/// The kernel's doc comments go on the module.
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
/// let stream = cudajit::Stream::new()?; // the GPU, or the CPU simulator without one
/// let x = stream.clone_htod(&[1.0f32; 1024])?;
/// let mut y = stream.clone_htod(&[2.0f32; 1024])?;
/// saxpy::launch(&stream, LaunchConfig::for_elements(1024), 3.0, &x, &mut y)?;
/// assert_eq!(saxpy::KERNEL.name(), "saxpy");
/// ```
///
/// (The example is not run here, in the macro crate; the `cudajit` crate's documentation
/// runs the same on the CPU simulator, in its section "What `#[kernel]` generates", and on
/// `cudajit::Stream`, `cudajit::Kernel` and `cudajit::LoadedKernel`.)
///
/// `#[kernel(crate = path)]` names the `cudajit` crate when it is renamed in `Cargo.toml`
/// or re-exported (`crate = gpu`, `crate = my_engine::cudajit`); the same argument exists
/// on `#[device]`, `#[extern_device]` and, as `#[cudajit(crate = path)]`, on
/// `#[derive(DeviceCopy)]`.
///
/// `#[kernel(arch = "sm_90a")]` marks a kernel that uses architecture-specific
/// instructions (Hopper's `wgmma`, `setmaxnreg`, through `ptx!`): it is compiled for
/// `sm_90a` instead of `sm_90` and runs only on GPUs of compute capability 9.0.
///
/// See the `cudajit` crate for the language and the launch API.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    function_macro(FnKind::Kernel, attr.into(), item.into()).into()
}

/// Marks a function that kernels (and other device functions) can call.
///
/// The function stays ordinary Rust, callable on the host; the macro also captures its
/// body so that a kernel calling it compiles it into the same module (the call inlines).
/// Device functions may be generic over scalar types (`T: Float`, `T: Int`) and consts.
/// `#[device(crate = path)]` names the `cudajit` crate when it is renamed or re-exported.
///
/// ```ignore
/// use cudajit::prelude::*;
///
/// #[device]
/// fn lerp<T: Float>(a: T, b: T, t: T) -> T {
///     a + (b - a) * t
/// }
/// ```
///
/// On an `impl` block of a `#[derive(DeviceCopy)]` struct, the block's functions become
/// device code the same way: methods taking `self`, `&self` or `&mut self`, associated
/// functions (`Vec3::new(..)`), and the operators `Add`, `Sub`, `Mul`, `Div`, `Rem`, `Neg`
/// and their `..Assign` forms, with `Self` or a scalar on the right, so kernels write
/// `a + b * 2.0` and `v.length()` on structs.
///
/// ```ignore
/// #[device]
/// impl Vec3 {
///     fn new(x: f32, y: f32, z: f32) -> Self { Self { x, y, z } }
///     fn dot(&self, o: Vec3) -> f32 { self.x * o.x + self.y * o.y + self.z * o.z }
/// }
///
/// #[device]
/// impl Add for Vec3 {
///     type Output = Vec3;
///     fn add(self, o: Vec3) -> Vec3 { Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z) }
/// }
/// ```
///
/// On a trait, the trait is device code for the structs whose impl of it is `#[device]`:
/// generic device functions bounded by it (`fn total<S: Shape>(s: &[S]) -> f32`) are
/// compiled once per struct they are called with, methods are called through the bound
/// (`s.area()`), associated constants read (`S::SIDES`), associated types named
/// (`S::Out`), and default methods compiled for the structs that keep them; a `&dyn
/// Shape` (or `impl Shape`) parameter is compiled once per struct a call passes, as
/// `S: Shape` is. Its implementors are `DeviceCopy` types (the trait gets the supertrait
/// `DeviceTraitImplementor`), and an impl of a trait without `#[device]` is an error that
/// says to add it. A struct may have several `#[device]` inherent blocks.
///
/// ```ignore
/// #[device]
/// trait Shape {
///     const SIDES: u32;
///     fn area(&self) -> f32;
/// }
///
/// #[device]
/// impl Shape for Circle {
///     const SIDES: u32 = 0;
///     fn area(&self) -> f32 { 3.0 * self.r * self.r }
/// }
///
/// #[device]
/// fn total<S: Shape>(shapes: &[S]) -> f32 { shapes.iter().map(|s| s.area()).sum() }
///
/// #[device]
/// fn area_of(s: &dyn Shape) -> f32 { s.area() }
/// ```
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    if let Ok(block) = syn::parse2::<syn::ItemImpl>(item.clone()) {
        return impl_macro(attr.into(), block).into();
    }
    if let Ok(item) = syn::parse2::<syn::ItemTrait>(item.clone()) {
        return trait_macro(attr.into(), item).into();
    }
    function_macro(FnKind::Device, attr.into(), item).into()
}

/// `#[device]` on an impl block: the block checked and each function parsed; the block
/// and its slot generated (or, on an error, the block as written and the errors).
fn impl_macro(attr: proc_macro2::TokenStream, block: syn::ItemImpl) -> proc_macro2::TokenStream {
    item_macro(attr, &block, parse::impl_block, generate::device_impl)
}

/// `#[device]` on a trait: the trait and its default methods captured (or, on an error,
/// the trait as written and the errors).
fn trait_macro(attr: proc_macro2::TokenStream, item: syn::ItemTrait) -> proc_macro2::TokenStream {
    item_macro(attr, &item, parse::trait_item, generate::device_trait)
}

/// `#[device]` on an item other than a function: its arguments read, the item parsed and
/// generated, or on an error the item as written next to the errors.
fn item_macro<I: quote::ToTokens, P>(
    attr: proc_macro2::TokenStream,
    item: &I,
    parse: impl FnOnce(&I, &mut Errors) -> Option<P>,
    generate: impl FnOnce(&I, &P, &Paths) -> proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let mut errors = Errors::default();
    let arguments = parse::function_arguments(attr, FnKind::Device, &mut errors);
    let paths = Paths::new(arguments.crate_path.as_ref());
    match parse(item, &mut errors) {
        Some(parsed) if errors.is_empty() => generate(item, &parsed, &paths),
        _ => {
            let compile_errors = errors.into_compile_errors();
            quote::quote!(#compile_errors #item)
        }
    }
}

/// Declares external device functions that a device library the user supplies defines
/// (CUDA C++ compiled by nvcc to LTO-IR, a fatbin, PTX or a cubin).
///
/// On an `extern "C"` block; `library` names a `static` `cudajit::DeviceLibrary`. Kernels
/// and `#[device]` functions call the functions as ordinary Rust (no `unsafe`: the
/// declaration is trusted); nvJitLink links the library in, and with LTO-IR the calls
/// inline. Parameters and results are scalars (`bool` passes as a C `bool`, one byte). The
/// symbol is the Rust name, or `#[link_name = "c_name"]`. On the host the functions panic.
/// `crate = path` names the `cudajit` crate when it is renamed or re-exported.
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
    extern_device_macro(attr.into(), item.into()).into()
}

/// Lets kernels take a struct by value and in slices: `#[derive(Clone, Copy, DeviceCopy)]`
/// on a `#[repr(C)]` struct whose fields are scalars, `DeviceCopy` structs and arrays of
/// them (`[f32; 4]`, `[Vec2; 2]`). Kernels read and write its fields
/// (`p.mass`, `ps[i].pos_x += v`) and copy whole values (`let p = ps[i]; ps[j] = p;`).
///
/// On a fieldless enum with an integer `#[repr(u8..i64)]`, kernels take it by value and in
/// read-only slices as that integer, and name, compare and `match` its variants.
///
/// `#[cudajit(crate = path)]` on the type names the `cudajit` crate when it is renamed or
/// re-exported.
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
#[proc_macro_derive(DeviceCopy, attributes(device_drop, cudajit))]
pub fn device_copy(input: TokenStream) -> TokenStream {
    device_copy_derive(input.into()).into()
}

/// `#[kernel]` and `#[device]`: the function, its signature checked, its body parsed; the
/// kernel module or the device function's marker generated.
fn function_macro(
    kind: FnKind,
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let function = match parse::item_fn(item.clone(), kind) {
        Ok(function) => function,
        Err(error) => return fallback::unparsed(error, item),
    };
    let mut errors = Errors::default();
    let arguments = parse::function_arguments(attr, kind, &mut errors);
    let paths = Paths::new(arguments.crate_path.as_ref());
    parse::check::signature(&function, kind, &mut errors);
    match parse::function(&function, kind, &mut errors) {
        Some(mut parsed) if errors.is_empty() => {
            // In the captured text, so the source hash (and the cache key) changes with it.
            parsed.source.max_threads = arguments.max_threads;
            generate::function(kind, &function, &parsed, arguments.specific_arch, &paths)
        }
        _ => fallback::function(kind, &function, errors, &paths),
    }
}

/// `#[extern_device]`: the block and its library argument, the block's ABI checked, each
/// function's declaration parsed; host stubs and captured declarations generated.
fn extern_device_macro(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let block = match parse::extern_block(item.clone()) {
        Ok(block) => block,
        Err(error) => return fallback::unparsed(error, item),
    };
    let mut errors = Errors::default();
    let (library, crate_path) = parse::extern_device_arguments(attr, &mut errors);
    let paths = Paths::new(crate_path.as_ref());
    parse::check::extern_c_abi(&block, &mut errors);
    let declarations = parse::declarations(&block, &mut errors);
    match library {
        Some(library) if errors.is_empty() => {
            generate::extern_functions(&declarations, &library, &paths)
        }
        _ => fallback::extern_device(&block, errors, &paths),
    }
}

/// `#[derive(DeviceCopy)]`: the type checked, its fields or variants read; the layout
/// impls generated.
fn device_copy_derive(input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = Errors::default();
    let paths = Paths::new(parse::derive_crate_path(&input.attrs, &mut errors).as_ref());
    parse::check::device_copy(&input, &mut errors);
    match parse::device_copy(&input, &mut errors) {
        Some(parsed) if errors.is_empty() => generate::device_copy(&parsed, &paths),
        _ => errors.into_compile_errors(),
    }
}
