//! Mixture-of-experts dispatch and combine over NCCL's LSA device API, written in the
//! kernel language: the counterpart of NCCL EP (`ncclEpDispatch`/`ncclEpCombine`,
//! `nccl.ep`) and DeepEP, in Rust from kernel to host.
//!
//! A [`MoeGroup`] spreads `experts` over the ranks of a communicator (or of a simulated
//! [`SimWorld`](cudajit_nccl_sim::SimWorld)); a [`MoeHandle`] holds one routing (each
//! token's top-k experts and weights, on the device) and what dispatch derives from it.
//! Low-latency mode ([`MoeMode::LowLatency`]): dispatch writes every token straight into
//! its experts' slots on their ranks, expert-major `[local experts × ranks × max tokens ×
//! hidden]`, with per-expert received counts; combine reads the experts' outputs back and
//! sums them with the top-k weights into `[tokens × hidden]`. High-throughput mode
//! ([`MoeMode::HighThroughput`]): a layout pass, then each token once to each rank holding
//! one of its experts, flat `[received tokens × hidden]` with its routing, combine back,
//! and the backward form. Either mode can dispatch FP8 e4m3 with per-token-per-128-channel
//! scales ([`DispatchFormat::Fp8E4m3`], [`fp8`]).
//!
//! ```
//! use cudajit::bf16;
//! use cudajit::nccl::moe::{MoeConfig, MoeGroup, MoeRanks};
//! use cudajit::nccl::sim::SimWorld;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let world = SimWorld::new(2)?;
//!     let mut config = MoeConfig::low_latency(4, 8, 16); // 4 experts, 8 tokens, hidden 16
//!     config.ctas = 2;
//!     config.threads = 32;
//!     let group = MoeGroup::new(MoeRanks::Sim(&world), config)?;
//!     let mut handle = group.handle(2)?; // top-2
//!     for rank in 0..2 {
//!         let tokens: Vec<bf16> = (0..3 * 16).map(|k| bf16::from_f32(k as f32)).collect();
//!         group.tokens().copy_from_host(rank, &tokens)?;
//!         // Three tokens, each to experts 0 and 3 (ranks 0 and 1), weights 0.5 and 0.25.
//!         handle.set_routing(rank, &[0, 3, 0, 3, 0, 3], &[0.5, 0.25, 0.5, 0.25, 0.5, 0.25])?;
//!     }
//!     for rank in 0..2 {
//!         group.dispatch(rank, &group.stream(rank)?, &handle)?;
//!     }
//!     world.synchronize()?;
//!     // Local expert 0 of rank 1 (expert 2) got nothing; local expert 1 (expert 3) three
//!     // tokens from each rank.
//!     assert_eq!(handle.read_expert_counts(1)?, [0, 6]);
//!     // The experts: the identity, so each token comes back as 0.75 of itself.
//!     for rank in 0..2 {
//!         let received = group.received()?;
//!         let rows = received.to_vec(rank, received.len())?;
//!         group.expert_output().copy_from_host(rank, &rows)?;
//!     }
//!     for rank in 0..2 {
//!         group.combine(rank, &group.stream(rank)?, &handle)?;
//!     }
//!     world.synchronize()?;
//!     let combined = group.combined().to_vec(0, 3 * 16)?;
//!     assert_eq!(combined[5], bf16::from_f32(5.0 * 0.75));
//!     Ok(())
//! }
//! ```
//!
//! The rooms: `config.rs` (the group's limits and [`MoeError`]), `ranks.rs` (GPUs or
//! simulated ranks, and their [`SymmetricTensor`]s), `group.rs` (the buffers and the
//! launches), `handle.rs` (a routing), `shape.rs` (the dimensions kernels take),
//! `steps.rs` (device functions both modes share), `low_latency.rs` and
//! `high_throughput.rs` (the kernels), `fp8.rs` (e4m3 quantisation), `reference.rs` (the
//! host reference). See docs/moe.md.

// The macros' expansions name the runtime `::cudajit` (what the facade re-exports), so this
// crate, built on the runtime without the facade, names it so too.
extern crate cudajit_runtime as cudajit;

mod buffers;
mod config;
pub mod fp8;
mod group;
mod handle;
pub mod high_throughput;
pub mod low_latency;
mod ranks;
pub mod reference;
mod shape;
mod steps;

pub use buffers::{TokenBuffer, TokenBufferMut};
pub use config::{DispatchFormat, MoeConfig, MoeError, MoeMode};
pub use group::MoeGroup;
pub use handle::MoeHandle;
pub use ranks::{MoeRanks, SymmetricTensor};
pub use shape::{MoeShape, MAX_LOCAL_EXPERTS, MAX_RANKS, MAX_THREADS, MAX_TOP_K};
