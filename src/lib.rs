//! # cudajit
//!
//! Rust GPU kernels as ordinary Rust functions, JIT-compiled for the GPU they run on.
//!
//! ```no_run
//! use cudajit::prelude::*;
//!
//! #[kernel]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = global_index();
//!     if i < y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! fn main() -> Result<(), cudajit::Error> {
//!     let context = cudajit::default_context()?;
//!     let stream = context.default_stream();
//!     let x = stream.clone_htod(&vec![1.0f32; 1 << 20])?;
//!     let mut y = stream.clone_htod(&vec![2.0f32; 1 << 20])?;
//!     saxpy::launch(&stream, LaunchConfig::for_elements(1 << 20), 3.0, &x, &mut y)?;
//!     let y = stream.clone_dtoh(&y)?;
//!     assert!(y.iter().all(|&v| v == 5.0));
//!     Ok(())
//! }
//! ```
//!
//! `#[kernel]` keeps the body as Rust that rustc type-checks and captures it; the first
//! launch on a GPU lowers it to NVVM IR, compiles it with libNVVM, links it with nvJitLink
//! into a cubin for exactly that GPU, caches the cubin in memory and on disk, and loads it.
//! Later launches cost one driver call plus a configuration check. See `docs/` for the
//! language reference and the pipeline.
//!
//! ## What `#[kernel]` generates
//!
//! `#[kernel] fn saxpy(..)` becomes a module `saxpy` holding
//! - `launch(stream, config, args..)`: the typed launcher. `stream` is anything kernels
//!   launch on ([`LaunchStream`]: a portable [`Stream`], a cudarc `CudaStream` or a
//!   [`SimStream`]), `config` a [`LaunchConfig`] (or cudarc's), and the arguments follow the
//!   kernel's parameters: scalars and `#[derive(DeviceCopy)]` values by value, a `&[T]`
//!   parameter as `&impl KernelSlice<T>` and a `&mut [T]` as `&mut impl KernelSliceMut<T>`
//!   ([`Buffer`], `CudaSlice`, `CudaView`, [`SimBuffer`]), so the borrow checker holds
//!   launches to the kernel's aliasing rules; generic parameters become the launcher's, and
//!   `#[comptime]` ones are arguments compiled into the code;
//! - `compile(context, comptime args..)`: compiles and loads the kernel on a GPU ahead of
//!   its first launch and returns the [`LoadedKernel`] with its compile report;
//! - `KERNEL`: the kernel's [`Kernel`], its captured form and per-process state (its name,
//!   its NVVM IR, compiles for an architecture without a GPU).
//!
//! On the CPU simulator, which needs neither a GPU nor NVIDIA's compilers:
//!
//! ```
//! use cudajit::prelude::*;
//! use cudajit::Stream;
//!
//! #[kernel]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = global_index();
//!     if i < y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! fn main() -> Result<(), cudajit::Error> {
//!     // `Stream::new()` picks the GPU when there is one; this example always simulates.
//!     let stream = Stream::simulator();
//!     let x = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;
//!     let mut y = stream.clone_htod(&[10.0f32, 20.0, 30.0])?;
//!     saxpy::launch(&stream, LaunchConfig::for_elements(3), 2.0, &x, &mut y)?;
//!     assert_eq!(stream.clone_dtoh(&y)?, [12.0, 24.0, 36.0]);
//!     assert_eq!(saxpy::KERNEL.name(), "saxpy");
//!     Ok(())
//! }
//! ```
//!
//! The simulator runs a kernel without a GPU but does not compile it for one. The GPU
//! compile itself (NVVM IR, libNVVM, nvJitLink, a checked cubin) needs NVIDIA's compiler
//! libraries but no GPU: [`Kernel::compile_for_arch`] (and `compile_for_arch_with` for a
//! specialisation) is how a test or CI holds a kernel to a real build.
//!
//! ```no_run
//! # use cudajit::prelude::*;
//! # #[kernel]
//! # fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {}
//! # fn main() -> Result<(), cudajit::Error> {
//! let compiled = saxpy::KERNEL.compile_for_arch(cudajit::Arch::SM_90)?;
//! println!("{} bytes of sm_90 cubin for `{}`", compiled.cubin.len(), compiled.entry);
//! // The NVVM IR alone needs no NVIDIA library at all.
//! assert!(saxpy::KERNEL.nvvm_ir()?.contains("saxpy"));
//! # Ok(())
//! # }
//! ```
//!
//! cudajit logs through `tracing` and installs no subscriber: see [`log`].
//!
//! A generic kernel's launcher is generic over the same parameters, and a `#[comptime]`
//! argument is compiled in: each combination is a specialisation, compiled once.
//!
//! ```
//! use cudajit::prelude::*;
//!
//! #[kernel]
//! fn power<T: Float>(#[comptime] exponent: u32, values: &mut [T]) {
//!     let i = global_index();
//!     if i < values.len() {
//!         let base = values[i];
//!         let mut result = base;
//!         for _ in 1..exponent {
//!             result = result * base;
//!         }
//!         values[i] = result;
//!     }
//! }
//!
//! fn main() -> Result<(), cudajit::Error> {
//!     let stream = cudajit::Stream::simulator();
//!     let mut values = stream.clone_htod(&[1.0f64, 2.0, 3.0])?;
//!     power::launch::<f64>(&stream, LaunchConfig::for_elements(3), 3, &mut values)?;
//!     assert_eq!(stream.clone_dtoh(&values)?, [1.0, 8.0, 27.0]);
//!     Ok(())
//! }
//! ```
//!
//! On a GPU, `compile` moves the compile out of the first launch (and out of a timing):
//!
//! ```no_run
//! # use cudajit::prelude::*;
//! # #[kernel]
//! # fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {}
//! # fn main() -> Result<(), cudajit::Error> {
//! let context = cudajit::default_context()?;
//! let loaded = saxpy::compile(&context)?;
//! let report = &loaded.compiled().report;
//! println!("{:?} in {:?} (libNVVM) + {:?} (nvJitLink)", report.origin, report.nvvm, report.link);
//! println!("at most {} threads per block", loaded.max_threads_per_block());
//! # Ok(())
//! # }
//! ```
//!
//! The crates behind the facade: `cudajit-macros` (the macro), `cudajit-core` (captured
//! syntax, IR, validation), the two back ends `cudajit-codegen` (NVVM IR writer, toolchain,
//! cache) and `cudajit-sim` (the CPU simulator), and `cudajit-nccl` (NCCL's host layer; its
//! device API for kernels is [`nccl::device`]).

// The macros name this crate `::cudajit`; inside it, too.
extern crate self as cudajit;

mod backend;
mod buffer_element;
mod cooperative;
mod error;
mod event;
mod gpu;
mod kernel;
mod launch;
mod launch_check;
pub mod nccl;
mod sim;
mod spec;
pub mod tensor;
pub mod tensor_map;
pub mod warp;

pub use backend::{
    Backend, Buffer, KernelSlice, KernelSliceMut, LaunchStream, Stream, StreamTarget,
};
pub use buffer_element::BufferElement;
pub use cudajit_codegen::compile::{CompileOptions, CompileReport, CompiledKernel, CubinOrigin};
pub use cudajit_codegen::{Arch, ArchFeatures};
pub use cudajit_core::device::{DeviceMath, DeviceScalar, Dim3, Float, Int};
pub use cudajit_core::external::{
    DeviceLibrary, LibraryError, LibraryKind, LibraryPart, LibraryProvider, ProvidedLibrary,
};
pub use cudajit_core::layout::DeviceStruct;
pub use cudajit_core::lower::Specialization;
pub use cudajit_macros::{device, extern_device, kernel, DeviceCopy};
pub use cudajit_sim::{PrintTarget, SimError, SimOptions, SimReport};
pub use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut,
    DeviceSlice, DriverError,
};
pub use error::Error;
pub use event::Event;
pub use gpu::{default_context, gpu_count};
/// The 16-bit float types kernels take (`half`'s).
pub use half::{bf16, f16};
pub use kernel::{Kernel, LoadedKernel};
pub use launch::{LaunchConfig, LaunchConfigError};
pub use launch_check::{LaunchArgument, LaunchCheck, LaunchInfo, LaunchMemo, LAUNCH_MEMO_SLOTS};
pub use sim::{SimBuffer, SimGroup, SimStream};
pub use tensor_map::{TensorMap, TensorMapLayout};

/// cudajit's log, for programs: cudajit logs through `tracing` and installs no subscriber;
/// [`log::init`] installs a stderr logger filtered by `CUDAJIT_LOG` for programs without
/// one of their own. A program with its own subscriber sees cudajit's events and spans
/// there (targets `cudajit`, `cudajit_codegen`, ...): see [`codegen::log`].
///
/// ```no_run
/// fn main() -> Result<(), cudajit::Error> {
///     // `CUDAJIT_LOG=debug cargo run` then explains every cache miss on stderr.
///     cudajit::log::init()?;
///     // ...
///     Ok(())
/// }
/// ```
pub mod log {
    pub use cudajit_codegen::log::{env_filter, init, InitError, VARIABLE};
}

/// The codegen crate: toolchain discovery, NVVM IR, the cache, ahead-of-time compiles.
pub use cudajit_codegen as codegen;
/// The language crate: captured syntax, IR, validator.
pub use cudajit_core as core;
/// The simulator crate: the CPU back end that runs validated kernel IR with CUDA's semantics.
pub use cudajit_sim as simulator;
/// The cudarc cudajit is built on (0.19, see `docs/cudarc.md`): its `CudaContext`,
/// `CudaStream` and `CudaSlice` are the types launchers take, so a program can use
/// `cudajit::cudarc` without a cudarc dependency of its own, or name the same version.
pub use cudarc;

/// What kernel code and launch code need: the attributes, the intrinsics, the warp
/// helpers, the traits of generic kernels and the launch API.
pub mod prelude {
    pub use crate::tensor_map::{tensor_map_address, TensorMap};
    pub use crate::warp::{warp_inclusive_scan, warp_max, warp_min, warp_sum};
    pub use crate::{device, extern_device, kernel, DeviceCopy, DeviceStruct, LaunchConfig};
    pub use cudajit_core::device::*;
    pub use cudajit_core::ptx;
}

/// Items the generated code uses. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::buffer_element::{BufferElement, ElementLayout};
    pub use crate::launch_check::LaunchArgument;
    pub use crate::spec::SpecBuilder;
    pub use cudajit_core::external::{extern_device_on_host, DeviceLibrary};
    pub use cudajit_core::layout::{
        DeviceStruct, DropHook, FieldLayout, FieldType, StructLayout, VariantLayout,
    };
    pub use cudajit_core::methods::{MethodReceiver, MethodTable, NoDeviceImpls};
    pub use cudajit_core::{CapturedFunction, ConstantValue, DeviceFunction, SpecificArch};
    pub use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

    /// A kernel argument: a pointer to the value, as `cuLaunchKernel` wants it.
    #[inline(always)]
    pub fn arg<T>(value: &T) -> *mut core::ffi::c_void {
        value as *const T as *mut core::ffi::c_void
    }

    /// A scalar launch argument for the CPU simulator.
    #[inline]
    pub fn sim_scalar<T: cudajit_core::device::DeviceScalar>(
        value: T,
    ) -> cudajit_sim::SimArg<'static> {
        scalar_bits(&value, T::SCALAR)
    }

    /// A `DeviceCopy` launch argument for the CPU simulator: an enum is its integer
    /// representation, a struct its fields' bytes at their offsets (padding zeroed).
    pub fn sim_struct_value<T: cudajit_core::layout::DeviceStruct>(
        kernel: &str,
        value: T,
    ) -> Result<cudajit_sim::SimArg<'static>, crate::Error> {
        let layout = T::LAYOUT;
        if let Some(repr) = layout.enum_repr {
            return Ok(scalar_bits(&value, repr));
        }
        // Every scalar, nested structs' and arrays' included.
        let scalars = layout.scalar_fields();
        if layout.size != core::mem::size_of::<T>()
            || scalars
                .iter()
                .any(|(offset, scalar)| offset + scalar.size_bytes() as usize > layout.size)
        {
            return Err(sim_unsupported(
                kernel,
                "a struct parameter whose layout does not match its type",
            ));
        }
        let mut bytes = vec![0u8; layout.size];
        for (offset, scalar) in scalars {
            let size = scalar.size_bytes() as usize;
            // SAFETY: the scalar lies inside the value (checked above: the layout is the
            // type's, from `DeviceStruct`), and a scalar has no padding bytes.
            let source = unsafe {
                core::slice::from_raw_parts((&value as *const T as *const u8).add(offset), size)
            };
            bytes[offset..offset + size].copy_from_slice(source);
        }
        Ok(cudajit_sim::SimArg::Struct {
            bytes: bytes.into(),
        })
    }

    /// `value`'s bytes as a simulator scalar of type `scalar` (zero when the sizes differ,
    /// which the derive and the `DeviceScalar` impls rule out).
    fn scalar_bits<T>(value: &T, scalar: crate::core::Scalar) -> cudajit_sim::SimArg<'static> {
        let size = core::mem::size_of::<T>();
        let mut bits = [0u8; 8];
        if size == scalar.size_bytes() as usize && size <= 8 {
            // SAFETY: `T` is a scalar or a fieldless enum of `size` bytes (checked against
            // its IR type), read as plain bytes; every bit pattern is a valid `u8`.
            let bytes =
                unsafe { core::slice::from_raw_parts(value as *const T as *const u8, size) };
            bits[..size].copy_from_slice(bytes);
        }
        cudajit_sim::SimArg::Scalar {
            scalar,
            bits: u64::from_le_bytes(bits),
        }
    }

    /// A `TensorMap` launch argument for the CPU simulator: a map made by
    /// `TensorMap::encode_sim`; one the driver encoded (for GPU memory) is refused.
    pub fn sim_tensor_map<'a>(
        kernel: &str,
        map: &crate::TensorMap<'a>,
    ) -> Result<cudajit_sim::SimArg<'a>, crate::Error> {
        map.sim_arg().ok_or_else(|| {
            sim_unsupported(
                kernel,
                "a tensor map encoded by the CUDA driver for GPU memory (the simulator's TMA reads maps made by `TensorMap::encode_sim` over a simulator buffer, or `TensorMap::encode_buffer`)",
            )
        })
    }

    /// Checks a `TensorMap` argument of a GPU launch: a map made for the simulator
    /// (`TensorMap::encode_sim`) describes no GPU memory.
    pub fn gpu_tensor_map(kernel: &str, map: &crate::TensorMap<'_>) -> Result<(), crate::Error> {
        if map.is_sim() {
            return Err(crate::Error::Backend(format!(
                "kernel `{kernel}`: a tensor map made for the CPU simulator (`TensorMap::encode_sim`) given to a GPU launch: encode it over GPU memory with `TensorMap::encode` (or `TensorMap::encode_buffer` over a `Buffer` of the launch's stream)"
            )));
        }
        Ok(())
    }

    /// The error of a simulated launch of a kernel whose parameters the simulator cannot
    /// take yet.
    pub fn sim_unsupported(kernel: &str, what: &str) -> crate::Error {
        crate::Error::Simulator(cudajit_sim::SimError::Unsupported {
            kernel: kernel.to_owned(),
            function: kernel.to_owned(),
            location: String::from("its signature"),
            what: what.to_owned(),
        })
    }
}
