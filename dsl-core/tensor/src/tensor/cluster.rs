//! Thread-block clusters (sm_90): blocks launched together on neighbouring SMs
//! (`LaunchConfig::with_cluster`), which synchronise with one barrier, read and write each
//! other's shared memory (distributed shared memory) and receive one TMA load together
//! (multicast).
//!
//! A `.shared::cluster` address names shared memory anywhere in the cluster: a block's own
//! `.shared` addresses (`shared_address(&x[i])`) are valid ones for itself, and
//! [`map_shared_rank`] turns one into the same variable's address in block `rank`.
//!
//! ```no_run
//! use cudajit::prelude::*;
//! use cudajit::tensor::cluster::{cluster_ctarank, cluster_sync, dsmem_load_u32, map_shared_rank};
//!
//! /// Each block of a 2-block cluster reads its neighbour's word.
//! #[kernel]
//! fn swap_pairs(out: &mut [u32]) {
//!     let word = shared_array::<u32>(1);
//!     let rank = cluster_ctarank();
//!     if thread_idx().x == 0 {
//!         word[0] = 100 + rank;
//!     }
//!     cluster_sync(); // every block's word is written
//!     if thread_idx().x == 0 {
//!         let theirs = map_shared_rank(shared_address(&word[0]), rank ^ 1);
//!         out[block_idx().x as usize] = dsmem_load_u32(theirs);
//!     }
//!     cluster_sync(); // the neighbour has read before this block's memory goes away
//! }
//! # fn main() {}
//! ```

use cudajit::device;
use cudajit_core::ptx;

/// This block's rank in its cluster (0 to the cluster's size − 1).
#[device]
pub fn cluster_ctarank() -> u32 {
    ptx!(u32: "mov.u32 $0, %cluster_ctarank;")
}

/// The number of blocks in this block's cluster.
#[device]
pub fn cluster_nctarank() -> u32 {
    ptx!(u32: "mov.u32 $0, %cluster_nctarank;")
}

/// Every thread of every block of the cluster arrives and waits (`barrier.cluster`, release
/// and acquire: shared-memory writes before it are visible to the cluster after it).
#[device]
pub fn cluster_sync() {
    ptx!("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;");
}

/// The `.shared::cluster` address of the variable at this block's `.shared` address
/// `address` in the shared memory of block `rank` of the cluster.
#[device]
pub fn map_shared_rank(address: u32, rank: u32) -> u32 {
    ptx!(u32: "mapa.shared::cluster.u32 $0, $1, $2;", address, rank)
}

/// Reads a word of distributed shared memory (a `.shared::cluster` address).
#[device]
pub fn dsmem_load_u32(address: u32) -> u32 {
    ptx!(u32: "ld.shared::cluster.u32 $0, [$1];", address)
}

/// Writes a word of distributed shared memory.
#[device]
pub fn dsmem_store_u32(address: u32, value: u32) {
    ptx!("st.shared::cluster.u32 [$0], $1;", address, value);
}

/// One arrival on an mbarrier anywhere in the cluster (`address` from
/// [`map_shared_rank`]), releasing this thread's earlier accesses at cluster scope.
#[device]
pub fn mbarrier_arrive_cluster(address: u32) {
    ptx!(
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [$0];",
        address
    );
}

/// A TMA load of the box at (`x`, `y`) delivered to the same `destination` and completing
/// the same `barrier` offsets in every block of the cluster whose bit is set in `mask`
/// (bit `r` for rank `r`, 16 bits).
#[device]
pub fn tma_load_2d_multicast(destination: u32, map: u64, x: i32, y: i32, barrier: u32, mask: u32) {
    // The mask is a 16-bit operand; `ptx!` registers are 32-bit at least.
    ptx!(
        "{\n\t.reg .b16 mask;\n\tcvt.u16.u32 mask, $5;\n\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [$0], [$1, {$2, $3}], [$4], mask;\n}",
        destination,
        map,
        x,
        y,
        barrier,
        mask
    );
}
