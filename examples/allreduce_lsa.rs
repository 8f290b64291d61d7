//! An all-reduce (sum) written as `#[kernel]`s over NCCL's LSA device API, checked against
//! a reference on the host, for f32 and i32, over sizes from 4 KB up.
//!
//!     cargo run --release --example allreduce_lsa                                 # one process, all GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/allreduce_lsa      # one process per GPU
//!     MAX_BYTES=1073741824 cargo run --release --example allreduce_lsa            # up to 1 GB
//!     DIVERGE=1 cargo run --release --example allreduce_lsa                       # rank 1 diverges
//!     DIVERGE=grid cargo run --release --example allreduce_lsa                    # too many CTAs
//!
//! `DIVERGE=1` makes rank 1 launch the i32 specialisation where the others launch f32:
//! the ranks agree on a kernel before its first launch, so the launch is an error naming
//! both specialisations instead of a hang (exit status 0 when it is). `DIVERGE=grid`
//! launches twice as many CTAs as the device communicator has LSA barriers: an error on
//! every rank before anything is enqueued.
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

use kernels::{all_reduce_one_shot, all_reduce_two_shot};

const CTAS: u32 = 132;
const THREADS: u32 = 512;
/// Messages up to this many bytes take the one-shot kernel.
const ONE_SHOT_MAX_BYTES: usize = 256 << 10;

/// Runs the all-reduce of `count` elements (`value(rank, i)` on each rank) and checks the
/// result against the sum computed here.
fn check<T>(
    world: &setup::World,
    count: usize,
    value: impl Fn(i32, usize) -> T,
    sum: impl Fn(T, T) -> T,
) -> setup::Result<()>
where
    T: cudajit::DeviceScalar + core::ops::Add<Output = T> + PartialEq + std::fmt::Debug,
{
    let bytes = count * std::mem::size_of::<T>();
    let out_offset = bytes.div_ceil(4096) * 4096;
    let elems = out_offset / std::mem::size_of::<T>() + count;
    let buffer = world.comm.alloc_symmetric::<T>(elems)?;
    let ranks: Vec<i32> = (0..world.dev.n_ranks(0).ok_or("no size")?).collect();
    for i in 0..world.local() {
        let data: Vec<T> = (0..count).map(|k| value(world.rank(i), k)).collect();
        buffer.copy_from_host(i, &data)?;
    }
    let one_shot = bytes <= ONE_SHOT_MAX_BYTES;
    world.launch_all(|i, stream| {
        let (comm, window) = world.params(&buffer, i)?;
        let config = setup::config(CTAS, THREADS);
        if one_shot {
            all_reduce_one_shot::launch::<T>(stream, config, comm, window, count, out_offset)?;
        } else {
            all_reduce_two_shot::launch::<T>(stream, config, comm, window, count, out_offset)?;
        }
        Ok(())
    })?;
    let mut all = vec![value(0, 0); elems];
    for i in 0..world.local() {
        buffer.copy_to_host(i, &mut all)?;
        let got = &all[out_offset / std::mem::size_of::<T>()..];
        let mut bad = 0;
        for (k, g) in got.iter().enumerate() {
            let want = ranks[1..]
                .iter()
                .fold(value(ranks[0], k), |s, &r| sum(s, value(r, k)));
            if *g != want {
                if bad == 0 {
                    eprintln!(
                        "rank {}: element {k} is {g:?}, expected {want:?}",
                        world.rank(i)
                    );
                }
                bad += 1;
            }
        }
        if bad != 0 {
            return Err(format!("rank {}: {bad} of {count} wrong", world.rank(i)).into());
        }
    }
    println!(
        "{:>12} bytes {:>4} {}: correct on {} local rank(s)",
        bytes,
        std::any::type_name::<T>(),
        if one_shot { "one-shot" } else { "two-shot" },
        world.local()
    );
    buffer.close()?;
    Ok(())
}

/// `DIVERGE=1` or `DIVERGE=grid`: launches that must fail (see the top of the file).
/// Exits the process: in one process, the local ranks that launched before the divergence
/// was found wait at their barriers for ranks that never arrive.
fn diverge(world: &setup::World, how: &str) -> setup::Result<()> {
    let count = 1024;
    let out_offset = 4096;
    let buffer = world.comm.alloc_symmetric::<f32>(out_offset / 4 + count)?;
    let mut refused = 0;
    for (i, stream) in world.streams.iter().enumerate() {
        let (comm, window) = world.params(&buffer, i)?;
        let rank = world.rank(i);
        let result = match how {
            "grid" => all_reduce_one_shot::launch::<f32>(
                stream,
                setup::config(2 * CTAS, THREADS),
                comm,
                window,
                count,
                out_offset,
            ),
            _ if rank == 1 => all_reduce_one_shot::launch::<i32>(
                stream,
                setup::config(CTAS, THREADS),
                comm,
                window,
                count,
                out_offset,
            ),
            _ => all_reduce_one_shot::launch::<f32>(
                stream,
                setup::config(CTAS, THREADS),
                comm,
                window,
                count,
                out_offset,
            ),
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
    if refused > 0 && expected {
        println!("DIVERGE={how}: detected");
        std::process::exit(0);
    }
    eprintln!(
        "DIVERGE={how}: {refused} of {} launches refused",
        world.local()
    );
    std::process::exit(1);
}

fn main() -> setup::Result<()> {
    let Some(world) = setup::world(CTAS)? else {
        return Ok(());
    };
    if let Ok(how) = std::env::var("DIVERGE") {
        return diverge(&world, &how);
    }
    let max_bytes: usize = std::env::var("MAX_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64 << 20);
    let mut bytes = 4096;
    while bytes <= max_bytes {
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
        }
        bytes *= 4;
    }
    world.close()
}
