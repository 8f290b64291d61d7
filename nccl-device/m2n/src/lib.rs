//! M-to-N resharding of distributed tensors over NCCL's LSA device API, written in the
//! kernel language: the counterpart of nccl-extensions' `nccl.m2n` and of DTensor's
//! `redistribute`, in Rust from kernel to host.
//!
//! A tensor's layout is a [`TensorSpec`]: its global shape and element type, a
//! [`DeviceMesh`] (an N-dimensional grid of a communicator's ranks) and a [`Placement`]
//! per mesh dimension (`Shard(dim)`, even or uneven, `Replicate`, `Partial(sum | max)`).
//! [`plan`] computes, for two layouts over any two meshes (of other sizes and shapes,
//! disjoint or overlapping), the blocks each destination rank needs from each source
//! shard, who sends each when replicas hold it (balancing the bytes), and checks that
//! every destination element comes exactly once. A [`ReshardHandle`] holds a plan on the
//! ranks (GPUs, or a simulated [`SimWorld`](cudajit_nccl_sim::SimWorld)) and runs it any
//! number of times: [`ReshardHandle::reshard`] packs each source's pieces into a
//! symmetric staging window, then destinations pull them by LSA loads;
//! [`ReshardHandle::reshard_with_window`] pulls straight from a window the caller
//! registered around its source tensor. A [`DistributedTensor`] is a layout with its
//! shards in device memory (a symmetric window on every rank):
//! [`ReshardHandle::reshard_tensor`] and [`ReshardHandle::reshard_tensor_with_window`]
//! move one into another. `Partial` sources are reduced on the way.
//!
//! ```
//! use cudajit::bf16;
//! use cudajit::nccl::m2n::{plan, DType, DeviceMesh, M2nConfig, M2nRanks, Placement, ReshardHandle, TensorSpec};
//! use cudajit::nccl::sim::SimWorld;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let world = SimWorld::new(4)?;
//!     // A [6 × 8] weight: columns over ranks 0..4 → rows over ranks 2 and 3.
//!     let src = TensorSpec::new(&[6, 8], DType::Bf16, DeviceMesh::line(vec![0, 1, 2, 3])?,
//!         vec![Placement::Shard(1)])?;
//!     let dst = TensorSpec::new(&[6, 8], DType::Bf16, DeviceMesh::line(vec![2, 3])?,
//!         vec![Placement::Shard(0)])?;
//!     let config = M2nConfig { ctas: 2, threads: 64 };
//!     let handle = ReshardHandle::new(M2nRanks::Sim(&world), plan(&src, &dst)?, config)?;
//!     let value = |r: usize, c: usize| bf16::from_f32((r * 8 + c) as f32);
//!     for rank in 0..4 {
//!         // Rank `rank` holds columns 2 * rank .. 2 * rank + 2.
//!         let shard: Vec<bf16> = (0..6)
//!             .flat_map(|r| (0..2).map(move |c| value(r, 2 * rank + c)))
//!             .collect();
//!         handle.write_source(rank, &shard)?;
//!     }
//!     for rank in 0..4 {
//!         handle.reshard(rank, &handle.stream(rank)?)?;
//!     }
//!     world.synchronize()?;
//!     // Rank 3 holds rows 3..6.
//!     let rows = handle.read_destination::<bf16>(3)?;
//!     assert_eq!(rows[0], value(3, 0));
//!     assert_eq!(rows[23], value(5, 7));
//!     Ok(())
//! }
//! ```
//!
//! The rooms: `error.rs` ([`M2nError`]), `model.rs` (meshes, placements, specs, the
//! blocks ranks hold), `plan.rs` (pieces, replicas, coverage, runs), `tables.rs` (the
//! runs as the kernels' tables), `config.rs` (the grid), `ranks.rs` (GPUs or simulated
//! ranks and their [`SymmetricTensor`]s), `element.rs` (host element types),
//! `tensor.rs` (a layout with its shards in device memory), `kernels.rs` (pack and
//! pull), `handle.rs` (the launches). See docs/m2n.md.

// The macros' expansions name the runtime `::cudajit` (what the facade re-exports), so this
// crate, built on the runtime without the facade, names it so too.
extern crate cudajit_runtime as cudajit;

mod config;
mod element;
mod error;
mod handle;
pub mod kernels;
mod model;
mod plan;
mod ranks;
mod tables;
mod tensor;

pub use config::{M2nConfig, MAX_THREADS};
pub use element::Element;
pub use error::M2nError;
pub use handle::ReshardHandle;
pub use model::{Block, DType, DeviceMesh, Placement, ReduceOp, TensorSpec};
pub use plan::{plan, Piece, ReshardPlan, RUN_BYTES};
pub use ranks::{M2nRanks, SymmetricTensor};
pub use tensor::DistributedTensor;
