//! An all-to-all written as a `#[kernel]` over NCCL's LSA device API (each rank stores block
//! `p` of its input into block `rank` of peer `p`'s output), checked on the host for f32,
//! i32 and bf16 over sizes from 4 KB per block up, odd sizes included.
//!
//!     cargo run --release --example alltoall_lsa                                  # one process, all GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/alltoall_lsa       # one process per GPU
//!     MAX_BYTES=268435456 cargo run --release --example alltoall_lsa              # blocks up to 256 MB
//!     CUDAJIT_BACKEND=sim SIM_RANKS=8 cargo run --example alltoall_lsa                # 8 simulated ranks, no GPU

#[path = "lsa/setup.rs"]
mod setup;

#[path = "lsa/kernels.rs"]
mod kernels;

use cudajit::bf16;
use kernels::all_to_all;

/// The grid on GPUs (one LSA barrier per CTA).
const CTAS: u32 = 132;
const THREADS: u32 = 512;

/// All-to-all of blocks of `count` elements; element `k` of block `p` of rank `r`'s input
/// is `value(r, p, k)`.
fn check<T>(
    world: &setup::World,
    count: usize,
    value: impl Fn(i32, usize, usize) -> T,
) -> setup::Result<()>
where
    T: cudajit::DeviceScalar + cudajit::BufferElement + PartialEq + std::fmt::Debug,
{
    let lsa = world.lsa_size()?;
    let ranks = lsa as usize;
    let input = |r: i32, k: usize| value(r, k / count, k % count);
    // Block q of rank r's output is block (r's LSA rank) of LSA peer q's input.
    let expected = |r: i32, k: usize| {
        let first = setup::lsa_first(r, lsa);
        value(first + (k / count) as i32, (r - first) as usize, k % count)
    };
    let case = setup::Case {
        name: "all-to-all",
        input_len: ranks * count,
        output_len: ranks * count,
        input: &input,
        expected: &expected,
    };
    let block_bytes = count * std::mem::size_of::<T>();
    setup::check_case(world, &case, |_, stream, comm, window, out| {
        let config = world.config;
        all_to_all::launch::<T>(stream, config, comm, window, count, block_bytes, out)?;
        Ok(())
    })
}

fn main() -> setup::Result<()> {
    let Some(world) = setup::world(cudajit::LaunchConfig::new(CTAS, THREADS))? else {
        return Ok(());
    };
    for bytes in world.sizes(16 << 20) {
        for count in [bytes / 4, bytes / 4 + 3] {
            check(&world, count, |r, p, k| {
                (r * 100 + p as i32) as f32 * 1e4 + (k % 4093) as f32
            })?;
            check(&world, count, |r, p, k| {
                r * 1_000_003 + p as i32 * 10_007 + (k as i32 % 9973)
            })?;
            check(&world, count, |r, p, k| {
                bf16::from_f32(((r as usize * 7 + p * 3 + k) % 97) as f32)
            })?;
        }
    }
    world.close()
}
