//! An all-reduce (sum) written as `#[kernel]`s over NCCL's LSA device API, checked against
//! a reference on the host, for f32 and i32, over sizes from 4 KB up.
//!
//!     cargo run --release --example allreduce_lsa                                 # one process, all GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/allreduce_lsa      # one process per GPU
//!     MAX_BYTES=1073741824 cargo run --release --example allreduce_lsa            # up to 1 GB
//!
//! Without a GPU (or with `CUDAJIT_BACKEND=sim`) the same kernels run on `SIM_RANKS`
//! (default 4) simulated ranks on the CPU (`cudajit::nccl::sim`), over sizes from 4 KB to
//! `MAX_BYTES` (default 64 KB, two-shot above 16 KB there).
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

/// The grid and the one-shot limit on simulated ranks.
const SIM_CTAS: u32 = 8;
const SIM_THREADS: u32 = 128;
const SIM_ONE_SHOT_MAX_BYTES: usize = 16 << 10;

/// [`check`] on simulated ranks: the same kernels, layout and reference.
fn check_simulated<T>(
    world: &cudajit::nccl::sim::SimWorld,
    count: usize,
    value: impl Fn(i32, usize) -> T,
    sum: impl Fn(T, T) -> T,
) -> setup::Result<()>
where
    T: cudajit::BufferElement
        + cudajit::DeviceScalar
        + core::ops::Add<Output = T>
        + PartialEq
        + std::fmt::Debug,
{
    let bytes = count * std::mem::size_of::<T>();
    let out_offset = bytes.div_ceil(4096) * 4096;
    let elems = out_offset / std::mem::size_of::<T>() + count;
    let buffer = world.alloc_symmetric::<T>(elems)?;
    let nranks = world.nranks();
    for rank in 0..nranks {
        let data: Vec<T> = (0..count).map(|k| value(rank as i32, k)).collect();
        buffer.copy_from_host(rank, &data)?;
    }
    let one_shot = bytes <= SIM_ONE_SHOT_MAX_BYTES;
    for rank in 0..nranks {
        let (stream, comm, window) = (
            world.stream(rank),
            world.dev_comm(rank),
            buffer.window(rank),
        );
        let config = setup::config(SIM_CTAS, SIM_THREADS);
        // Runs when the last rank has launched.
        if one_shot {
            all_reduce_one_shot::launch::<T>(stream, config, comm, window, count, out_offset)?;
        } else {
            all_reduce_two_shot::launch::<T>(stream, config, comm, window, count, out_offset)?;
        }
    }
    world.synchronize()?;
    for rank in 0..nranks {
        let all = buffer.to_vec(rank)?;
        let got = &all[out_offset / std::mem::size_of::<T>()..];
        let bad = got
            .iter()
            .enumerate()
            .filter(|&(k, g)| {
                *g != (1..nranks as i32).fold(value(0, k), |s, r| sum(s, value(r, k)))
            })
            .count();
        if bad != 0 {
            return Err(format!("simulated rank {rank}: {bad} of {count} wrong").into());
        }
    }
    println!(
        "{:>12} bytes {:>4} {}: correct on {nranks} simulated rank(s)",
        bytes,
        std::any::type_name::<T>(),
        if one_shot { "one-shot" } else { "two-shot" },
    );
    Ok(())
}

fn main() -> setup::Result<()> {
    let simulated = setup::simulate_instead();
    let max_bytes: usize = std::env::var("MAX_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if simulated.is_some() {
            64 << 10
        } else {
            64 << 20
        });
    if let Some(reason) = simulated {
        let nranks = setup::sim_ranks();
        println!("no GPU run: {nranks} simulated ranks on the CPU simulator ({reason})");
        let world = cudajit::nccl::sim::SimWorld::new(nranks)?;
        let mut bytes = 4096;
        while bytes <= max_bytes {
            for count in [bytes / 4, bytes / 4 + 3] {
                check_simulated(&world, count, f32_value, |a, b| a + b)?;
                check_simulated(&world, count, i32_value, i32::wrapping_add)?;
            }
            bytes *= 4;
        }
        return Ok(());
    }
    let Some(world) = setup::world(CTAS)? else {
        return Ok(());
    };
    let mut bytes = 4096;
    while bytes <= max_bytes {
        // Odd counts too, so the scalar tails run.
        for count in [bytes / 4, bytes / 4 + 3] {
            check(&world, count, f32_value, |a, b| a + b)?;
            check(&world, count, i32_value, i32::wrapping_add)?;
        }
        bytes *= 4;
    }
    world.close()
}

/// Small integers: every order of summation gives the same float.
fn f32_value(r: i32, i: usize) -> f32 {
    ((r as usize * 7 + i) % 1024) as f32
}

fn i32_value(r: i32, i: usize) -> i32 {
    (i as i32).wrapping_mul(31).wrapping_add(r * 1_000_003)
}
