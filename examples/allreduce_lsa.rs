//! An all-reduce (sum) written as `#[kernel]`s over NCCL's LSA device API, checked against
//! a reference on the host, for f32, i32, bf16, i64, f64 and f16, over sizes from 4 KB up.
//!
//!     cargo run --release --example allreduce_lsa                                 # one process, all GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/allreduce_lsa      # one process per GPU
//!     MAX_BYTES=1073741824 cargo run --release --example allreduce_lsa            # up to 1 GB
//!     CUDAJIT_BACKEND=sim SIM_RANKS=8 cargo run --example allreduce_lsa               # 8 simulated ranks, no GPU
//!     DIVERGE=1 cargo run --release --example allreduce_lsa                       # rank 1 diverges
//!     DIVERGE=grid cargo run --release --example allreduce_lsa                    # too many CTAs
//!
//! `DIVERGE=1` makes rank 1 launch the i32 specialisation where the others launch f32:
//! the ranks agree on a kernel before its first launch, so the launch is an error naming
//! both specialisations instead of a hang (exit status 0 when it is). `DIVERGE=grid`
//! launches twice as many CTAs as the device communicator has LSA barriers: an error on
//! every rank before anything is enqueued. Both need GPUs.
//!
//! Each rank's input is the start of its symmetric window; the result goes to byte
//! `out_offset` of every rank's window. Small messages use the one-shot kernel (every
//! rank reads every peer's input), large ones the two-shot kernel (each rank reduces its
//! share of the vectors over all peers and stores the sum into every peer's output).
//! Entry barriers acquire, exit barriers release; accesses are 16-byte vectors.

#[path = "lsa/setup.rs"]
mod setup;

#[path = "lsa/kernels.rs"]
mod kernels;

use cudajit::bf16;
use cudajit::f16;
use kernels::{
    all_reduce_one_shot, all_reduce_one_shot_16, all_reduce_one_shot_64, all_reduce_one_shot_bf16,
    all_reduce_two_shot, all_reduce_two_shot_bf16,
};

/// The grid on GPUs (one LSA barrier per CTA).
const CTAS: u32 = 132;
const THREADS: u32 = 512;
/// Messages up to this many bytes take the one-shot kernel.
const ONE_SHOT_MAX_BYTES: usize = 256 << 10;

/// Runs the all-reduce of `count` elements (`value(rank, i)` on each rank) and checks the
/// result against the sum in rank order computed here.
fn check<T>(
    world: &setup::World,
    count: usize,
    value: impl Fn(i32, usize) -> T,
    sum: impl Fn(T, T) -> T,
) -> setup::Result<()>
where
    T: cudajit::DeviceScalar
        + cudajit::BufferElement
        + core::ops::Add<Output = T>
        + PartialEq
        + std::fmt::Debug,
{
    let lsa = world.lsa_size()?;
    // bf16 has kernels of its own (16-byte vectors of 8, summed in f32); 64-bit and
    // other 16-bit types take one-shot kernels with vectors of 2 and 8.
    let scalar = <T as cudajit::DeviceScalar>::SCALAR;
    let half = scalar == cudajit::core::Scalar::BF16;
    let width = scalar.size_bytes();
    // Simulated ranks see small sizes only: switch earlier so both kernels run.
    let limit = if world.simulated() {
        16 << 10
    } else {
        ONE_SHOT_MAX_BYTES
    };
    let one_shot = width == 8 || (width == 2 && !half) || count * std::mem::size_of::<T>() <= limit;
    // The sum over the rank's LSA team (every rank on one node).
    let expected = |rank: i32, k: usize| {
        let first = setup::lsa_first(rank, lsa);
        (first + 1..first + lsa).fold(value(first, k), |s, r| sum(s, value(r, k)))
    };
    let case = setup::Case {
        name: if one_shot { "one-shot" } else { "two-shot" },
        input_len: count,
        output_len: count,
        input: &value,
        expected: &expected,
    };
    setup::check_case(world, &case, |_, stream, comm, window, o| {
        let (c, n) = (world.config, count);
        if width == 8 {
            all_reduce_one_shot_64::launch::<T>(stream, c, comm, window, n, o)?;
            return Ok(());
        }
        if width == 2 && !half {
            all_reduce_one_shot_16::launch::<T>(stream, c, comm, window, n, o)?;
            return Ok(());
        }
        match (one_shot, half) {
            (true, false) => all_reduce_one_shot::launch::<T>(stream, c, comm, window, n, o)?,
            (false, false) => all_reduce_two_shot::launch::<T>(stream, c, comm, window, n, o)?,
            (true, true) => all_reduce_one_shot_bf16::launch(stream, c, comm, window, n, o)?,
            (false, true) => all_reduce_two_shot_bf16::launch(stream, c, comm, window, n, o)?,
        }
        Ok(())
    })
}

/// `DIVERGE=1` or `DIVERGE=grid`: launches that must fail (see the top of the file).
/// Exits the process: in one process, the local ranks that launched before the divergence
/// was found wait at their barriers for ranks that never arrive.
fn diverge(world: &setup::World, how: &str) -> setup::Result<()> {
    if world.simulated() {
        return Err("DIVERGE checks the launch-time agreement of GPU ranks: it needs GPUs".into());
    }
    let count = 1024;
    let out_offset = setup::out_offset::<f32>(count);
    let buffer = world.alloc_symmetric::<f32>(out_offset / 4 + count)?;
    let mut refused = 0;
    for (i, stream) in world.streams.iter().enumerate() {
        let (comm, window) = world.params(&buffer, i)?;
        let rank = world.rank(i);
        let (c, o) = (world.config, out_offset);
        let result = match how {
            "grid" => {
                // Twice the CTAs of the device communicator's LSA barriers (the setup
                // requests more than the grid: one per thread, for the thread sessions).
                let barriers = comm.token().map_or(CTAS, |token| token.lsa_barriers);
                let twice = cudajit::LaunchConfig::new(barriers.saturating_mul(2), THREADS);
                all_reduce_one_shot::launch::<f32>(stream, twice, comm, window, count, o)
            }
            _ if rank == 1 => all_reduce_one_shot::launch::<i32>(stream, c, comm, window, count, o),
            _ => all_reduce_one_shot::launch::<f32>(stream, c, comm, window, count, o),
        };
        match result {
            Ok(()) => println!("rank {rank}: launched"),
            Err(e @ cudajit::Error::Collective { .. }) => {
                println!("rank {rank}: refused as expected: {e}");
                refused += 1;
            }
            Err(e) => return Err(e.into()),
        }
    }
    // Every rank refuses a grid too large; of a divergence, every rank that exchanges
    // identities (one process per GPU) or the first local rank that differs (one process).
    let expected = how != "grid" || refused == world.local();
    let status = if refused > 0 && expected {
        println!("DIVERGE={how}: detected");
        0
    } else {
        eprintln!(
            "DIVERGE={how}: {refused} of {} launches refused",
            world.local()
        );
        1
    };
    leave_now(status)
}

/// Ends the process without exit handlers: with one process over all GPUs, the CUDA
/// driver's would wait for the local ranks' kernels that are stuck at their barriers
/// (found on 2xH200: `std::process::exit` hangs there). The driver reclaims the contexts.
fn leave_now(status: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    extern "C" {
        fn _exit(status: i32) -> !;
    }
    // SAFETY: `_exit` ends the process at once; nothing of this process runs after it.
    unsafe { _exit(status) }
}

fn main() -> setup::Result<()> {
    let Some(world) = setup::world(cudajit::LaunchConfig::new(CTAS, THREADS))? else {
        return Ok(());
    };
    if let Ok(how) = std::env::var("DIVERGE") {
        return diverge(&world, &how);
    }
    for bytes in world.sizes(64 << 20) {
        // Odd counts too, so the scalar tails run.
        for count in [bytes / 4, bytes / 4 + 3] {
            // Small integers: every order of summation gives the same float.
            check(
                &world,
                count,
                |r, i| ((r as usize * 7 + i) % 1024) as f32,
                |a, b| a + b,
            )?;
            check(
                &world,
                count,
                |r, i| (i as i32).wrapping_mul(31).wrapping_add(r * 1_000_003),
                i32::wrapping_add,
            )?;
            check(
                &world,
                count,
                |r, i| (i as i64) * 1_000_000_007 + r as i64,
                i64::wrapping_add,
            )?;
            check(
                &world,
                count,
                |r, i| (r as f64) * 0.25 + (i % 4093) as f64,
                |a, b| a + b,
            )?;
            check(
                &world,
                count,
                |r, i| f16::from_f32(((r as usize * 5 + i) % 64) as f32),
                |a, b| f16::from_f32(a.to_f32() + b.to_f32()),
            )?;
            // Small integers are exact in bf16 too (8 bits of mantissa): sums up to 256 (8 ranks).
            check(
                &world,
                count,
                |r, i| bf16::from_f32(((r as usize * 3 + i) % 32) as f32),
                |a, b| bf16::from_f32(a.to_f32() + b.to_f32()),
            )?;
        }
    }
    world.close()
}
