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
//! Later launches cost one driver call plus a configuration check. The [`guide`] holds the
//! language reference, the pipeline, the simulator, tensor cores and NCCL.
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
//! ## The crates behind the facade
//!
//! This crate only re-exports; each part is a crate of its own, in the folder of its role:
//!
//! | re-exported as | crate | folder | role |
//! | --- | --- | --- | --- |
//! | [`kernel`], [`device`], ... | `cudajit-macros` | `macros/` | the attributes: parse, check, generate |
//! | [`core`] | `cudajit-core` | `dsl-core/` | the language: captured syntax, inference, lowering, IR, validator |
//! | [`tensor`] | `cudajit-tensor` | `dsl-core/tensor/` | the tensor cores, a device library written in the language |
//! | [`codegen`] | `cudajit-codegen` | `codegen/` | the NVVM back end, toolchain, compile pipeline, JIT cache |
//! | [`simulator`] | `cudajit-sim` | `codegen/sim/` | the CPU back end |
//! | the root, [`prelude`] | `cudajit-runtime` | `codegen/runtime/` | the JIT runtime: kernels, launches, streams, buffers, tensor maps |
//! | `nccl` (feature `nccl`) | `cudajit-nccl` | `nccl-device/host/` | NCCL's host layer |
//! | `nccl::device` (feature `nccl`) | `cudajit-nccl-device` | `nccl-device/device/` | NCCL's device API for kernels |
//! | `nccl::sim` (feature `nccl`) | `cudajit-nccl-sim` | `nccl-device/sim/` | NCCL's device API on simulated ranks |
//! | `nccl::moe` (feature `moe`) | `cudajit-moe` | `nccl-device/moe/` | mixture-of-experts dispatch and combine |
//! | `nccl::m2n` (feature `m2n`) | `cudajit-m2n` | `nccl-device/m2n/` | M-to-N resharding of distributed tensors |
//! | the `cudajit` tool (feature `cli`) | `cudajit-cli` | `codegen/cli/` | doctor, cache, emit |
//!
//! Features, all off by default: `nccl` (NCCL's host layer, device API and simulated
//! ranks), `moe` and `m2n` (with `nccl`), `cli` (the `cudajit` binary), `mpi` (NCCL's unique id over
//! MPI; needs a system MPI and libclang to build).

pub use cudajit_runtime::*;

/// The tensor cores from kernels: `mma.sync` fragments, `ldmatrix`, `cp.async`, and
/// Hopper's TMA, `mbarrier`, `wgmma` and clusters (`cudajit-tensor`).
pub use cudajit_tensor::tensor;

#[cfg(feature = "nccl")]
pub mod nccl;

/// The user guide, the pages of the repository's `docs/` as rustdoc shows them (links
/// between pages lead to the repository's files). Documentation only (not built when
/// rustdoc collects doctests): the examples in it are checked where the guide's code lives
/// (the tests and the examples).
#[cfg(all(doc, not(doctest)))]
pub mod guide {
    #[doc = include_str!("../docs/language.md")]
    pub mod language {}
    #[doc = include_str!("../docs/pipeline.md")]
    pub mod pipeline {}
    #[doc = include_str!("../docs/simulator.md")]
    pub mod simulator {}
    #[doc = include_str!("../docs/tensor-cores.md")]
    pub mod tensor_cores {}
    #[doc = include_str!("../docs/nccl.md")]
    pub mod nccl {}
    #[doc = include_str!("../docs/moe.md")]
    pub mod moe {}
    #[doc = include_str!("../docs/m2n.md")]
    pub mod m2n {}
    #[doc = include_str!("../docs/multi-node.md")]
    pub mod multi_node {}
    #[doc = include_str!("../docs/cudarc.md")]
    pub mod cudarc {}
    #[doc = include_str!("../docs/README.md")]
    pub mod code_tour {}
}
