//! An all-gather written as a `#[kernel]` over NCCL's LSA device API (each rank stores its
//! block into every peer's output), checked against the expected blocks on the host for
//! f32, i32 and bf16 over sizes from 4 KB up, odd sizes included.
//!
//!     cargo run --release --example allgather_lsa                                 # one process, all GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/allgather_lsa      # one process per GPU
//!     MAX_BYTES=268435456 cargo run --release --example allgather_lsa             # up to 256 MB per rank
//!     CUDAJIT_BACKEND=sim SIM_RANKS=8 cargo run --example allgather_lsa               # 8 simulated ranks, no GPU

#[path = "lsa/setup.rs"]
mod setup;

#[path = "lsa/kernels.rs"]
mod kernels;

use cudajit::bf16;
use kernels::all_gather;

/// The grid on GPUs (one LSA barrier per CTA).
const CTAS: u32 = 132;
const THREADS: u32 = 512;

/// All-gathers `count` elements per rank (`value(rank, k)`).
fn check<T>(
    world: &setup::World,
    count: usize,
    value: impl Fn(i32, usize) -> T,
) -> setup::Result<()>
where
    T: cudajit::DeviceScalar + cudajit::BufferElement + PartialEq + std::fmt::Debug,
{
    let lsa = world.lsa_size()?;
    let ranks = lsa as usize;
    // Block p of every output is LSA peer p's input.
    let expected =
        |rank: i32, k: usize| value(setup::lsa_first(rank, lsa) + (k / count) as i32, k % count);
    let case = setup::Case {
        name: "all-gather",
        input_len: count,
        output_len: ranks * count,
        input: &value,
        expected: &expected,
    };
    let block_bytes = count * std::mem::size_of::<T>();
    setup::check_case(world, &case, |_, stream, comm, window, out| {
        let config = world.config;
        all_gather::launch::<T>(stream, config, comm, window, count, block_bytes, out)?;
        Ok(())
    })
}

fn main() -> setup::Result<()> {
    let Some(world) = setup::world(cudajit::LaunchConfig::new(CTAS, THREADS))? else {
        return Ok(());
    };
    for bytes in world.sizes(64 << 20) {
        for count in [bytes / 4, bytes / 4 + 3] {
            check(&world, count, |r, k| (r as f32) * 1e6 + (k % 4093) as f32)?;
            check(&world, count, |r, k| r * 1_000_003 + (k as i32 % 9973))?;
            check(&world, count, |r, k| {
                bf16::from_f32(((r as usize * 5 + k) % 97) as f32)
            })?;
        }
    }
    world.close()
}
