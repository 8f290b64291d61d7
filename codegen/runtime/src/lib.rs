//! cudajit's JIT runtime: what happens between a `#[kernel]`'s captured form and a kernel
//! running, on a GPU or on the CPU simulator.
//!
//! - [`Kernel`] (`kernel.rs`): cubin → module → function per CUDA context, compiled on the
//!   first launch through the codegen crate's cached pipeline; [`LoadedKernel`];
//! - the launch (`launch.rs` checks a [`LaunchConfig`] before the driver sees it,
//!   `cooperative.rs` what a cooperative launch asks of the device, `launch_check.rs` what
//!   a launch checks of its arguments: [`LaunchArgument`]);
//! - where a launch runs (`backend.rs`): a CUDA stream or the CPU simulator (`sim.rs`,
//!   [`SimStream`]), the portable [`Stream`] picking one; [`Buffer`], [`Event`];
//! - kernel parameters the launchers pack: slices ([`KernelSlice`]), `DeviceCopy` values
//!   ([`BufferElement`]) and TMA descriptors ([`tensor_map`]);
//! - the device helpers of the [`prelude`] written in the kernel language ([`warp`]).
//!
//! Programs use it through the facade crate `cudajit`, which re-exports all of it; the
//! macros' expansions name these items as `::cudajit::...`, so crates that build on the
//! runtime without the facade (cudajit's tensor-core layer and NCCL's device API) name it
//! `cudajit` at their root (`extern crate cudajit_runtime as cudajit;`).

// The macros name the runtime `::cudajit` (the facade re-exports it); inside it, too.
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
mod sim;
mod spec;
pub mod tensor_map;
pub mod warp;

pub use backend::{
    Backend, Buffer, KernelSlice, KernelSliceMut, LaunchStream, Stream, StreamTarget,
};
pub use buffer_element::BufferElement;
pub use cudajit_codegen::compile::{CompileOptions, CompileReport, CompiledKernel, CubinOrigin};
pub use cudajit_codegen::{Arch, ArchFeatures};
pub use cudajit_core::device::{DeviceMath, DeviceScalar, Dim3, Float, Int, Real};
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
pub use sim::{ExternsFactory, SimBuffer, SimGroup, SimStream};
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
    // The 16-bit float types kernels name (`shared_array::<bf16>`, `wgmma::<bf16, ..>`).
    pub use crate::warp::{warp_inclusive_scan, warp_max, warp_min, warp_sum};
    pub use crate::{device, extern_device, kernel, DeviceCopy, DeviceStruct, LaunchConfig};
    pub use cudajit_core::device::*;
    pub use cudajit_core::ptx;
    pub use half::{bf16, f16};
}

/// Items the crates built on the runtime use (NCCL's device API, simulated ranks, MoE):
/// simulator memory copies and the relaxed capture mode of a kernel's first load. Not
/// part of the public API.
#[doc(hidden)]
pub mod __runtime {
    pub use crate::buffer_element::{decode, encode};
    pub use crate::kernel::relaxed_capture;
    pub use crate::sim::SimCopy;
}

/// Items the generated code uses. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::buffer_element::{AsItself, BufferElement, ElementLayout};
    pub use crate::launch_check::LaunchArgument;
    pub use crate::spec::SpecBuilder;
    pub use cudajit_core::device::{printable, DeviceScalar};
    pub use cudajit_core::external::{extern_device_on_host, DeviceLibrary};
    pub use cudajit_core::layout::probe::{
        probe_layout, GenericArgument, GenericBase, GenericProbe, ProbeFallback,
    };
    pub use cudajit_core::layout::{
        DeviceStruct, DropHook, FieldLayout, FieldType, GenericValue, StructLayout, VariantLayout,
    };
    pub use cudajit_core::linkme;
    pub use cudajit_core::methods::{
        AssociatedType, DeviceImplBlock, DeviceTraitDefaults, MethodReceiver, MethodTable,
        NoDeviceImpls, DEVICE_IMPL_BLOCKS, DEVICE_TRAIT_DEFAULTS,
    };
    pub use cudajit_core::{CapturedFunction, ConstantValue, DeviceFunction, SpecificArch};
    pub use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

    /// The supertrait `#[device]` adds to a trait: its implementors are types kernels
    /// hold (`DeviceCopy` structs and enums, scalars). It lets a `#[device]` impl check,
    /// in a generic function over `T: Trait`, that the trait is a `#[device]` one (only
    /// the supertrait proves the bound there), and name the fix when it is not.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` implements a `#[device]` trait, whose implementors kernels hold: it must be `DeviceCopy`",
        label = "not `DeviceCopy`",
        note = "derive it: `#[derive(Clone, Copy, DeviceCopy)]` with `#[repr(C)]`"
    )]
    pub trait DeviceTraitImplementor {}

    // Not "the trait `HeldByKernels` is not implemented": the message above names the fix.
    #[diagnostic::do_not_recommend]
    impl<T: HeldByKernels + ?Sized> DeviceTraitImplementor for T {}

    /// What kernels hold by value: `DeviceCopy` structs and enums (`LaunchArgument`), and
    /// the scalars. Not "every cudarc `DeviceRepr`": `f16` and `bf16` are one only with
    /// cudarc's `f16` feature, which cudajit leaves off.
    pub trait HeldByKernels {}
    impl<T: LaunchArgument> HeldByKernels for T {}
    macro_rules! scalars_held {
        ($($t:ty),*) => {$(impl HeldByKernels for $t {})*};
    }
    scalars_held!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, bool, f32, f64);
    scalars_held!(half::f16, half::bf16);

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
