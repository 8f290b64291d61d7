//! Each rank reads the window of its next LSA peer with a `#[kernel]` that calls NCCL's
//! device API, and checks what it read.
//!
//!     cargo run --release --example lsa_peer_read                                   # one process, all GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/lsa_peer_read        # one process per GPU
//!
//! Needs at least 2 GPUs connected by NVLink and NCCL >= 2.28 (see docs/nccl.md). Without
//! a GPU (or with `CUDAJIT_BACKEND=sim`) it runs the same kernel on `SIM_RANKS` (default 4)
//! simulated ranks on the CPU (`cudajit::nccl::sim`), with a small `COUNT`.

#[path = "lsa/setup.rs"]
mod setup;

#[path = "lsa/kernels.rs"]
mod kernels;

use kernels::peer_read;

const CTAS: u32 = 64;

/// The grid and default size on simulated ranks.
const SIM_CTAS: u32 = 8;
const SIM_THREADS: u32 = 128;
const SIM_COUNT: usize = (1 << 12) + 3;

fn value(rank: i32, i: usize) -> f32 {
    (rank * 1000) as f32 + (i % 977) as f32
}

/// The example on `SIM_RANKS` simulated ranks: the same kernel, layout and check.
fn simulated(reason: &str) -> setup::Result<()> {
    use cudajit::nccl::sim::SimWorld;
    let nranks = setup::sim_ranks();
    println!("no GPU run: {nranks} simulated ranks on the CPU simulator ({reason})");
    let world = SimWorld::new(nranks)?;
    let count: usize = std::env::var("COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SIM_COUNT);
    let out_offset = (count * 4).div_ceil(4096) * 4096;
    let buffer = world.alloc_symmetric::<f32>(out_offset / 4 + count)?;
    for rank in 0..nranks {
        let data: Vec<f32> = (0..count).map(|k| value(rank as i32, k)).collect();
        buffer.copy_from_host(rank, &data)?;
    }
    for rank in 0..nranks {
        // Runs when the last rank has launched.
        peer_read::launch(
            world.stream(rank),
            setup::config(SIM_CTAS, SIM_THREADS),
            world.dev_comm(rank),
            buffer.window(rank),
            count,
            out_offset,
        )?;
    }
    world.synchronize()?;
    for rank in 0..nranks {
        let all = buffer.to_vec(rank)?;
        let peer = ((rank + 1) % nranks) as i32;
        let got = &all[out_offset / 4..];
        let bad = (0..count).filter(|&k| got[k] != value(peer, k)).count();
        println!(
            "simulated rank {rank}: read {count} floats of LSA peer {peer}: {}",
            if bad == 0 {
                "all correct".to_owned()
            } else {
                format!("{bad} WRONG")
            }
        );
        if bad != 0 {
            return Err(format!("simulated rank {rank}: {bad} mismatches").into());
        }
    }
    Ok(())
}

fn main() -> setup::Result<()> {
    if let Some(reason) = setup::simulate_instead() {
        return simulated(&reason);
    }
    let Some(world) = setup::world(CTAS)? else {
        return Ok(());
    };
    let count: usize = std::env::var("COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or((1 << 24) + 3);
    // Input at byte 0, output at the next 4096-byte boundary (window offsets must be).
    let out_offset = (count * 4).div_ceil(4096) * 4096;
    let buffer = world.comm.alloc_symmetric::<f32>(out_offset / 4 + count)?;
    for i in 0..world.local() {
        let data: Vec<f32> = (0..count).map(|k| value(world.rank(i), k)).collect();
        buffer.copy_from_host(i, &data)?;
    }
    let lsa_size = world.dev.lsa_size(0).ok_or("no LSA size")?;
    world.launch_all(|i, stream| {
        let (comm, window) = world.params(&buffer, i)?;
        peer_read::launch(
            stream,
            setup::config(CTAS, 512),
            comm,
            window,
            count,
            out_offset,
        )?;
        Ok(())
    })?;
    let mut all = vec![0f32; out_offset / 4 + count];
    for i in 0..world.local() {
        buffer.copy_to_host(i, &mut all)?;
        let lsa_rank = world.dev.lsa_rank(i).ok_or("no LSA rank")?;
        let peer = (lsa_rank + 1) % lsa_size;
        let got = &all[out_offset / 4..];
        let bad = (0..count).filter(|&k| got[k] != value(peer, k)).count();
        println!(
            "rank {}: read {count} floats of LSA peer {peer}: {}",
            world.rank(i),
            if bad == 0 {
                "all correct".to_owned()
            } else {
                format!("{bad} WRONG")
            }
        );
        if bad != 0 {
            return Err(format!("rank {}: {bad} mismatches", world.rank(i)).into());
        }
    }
    buffer.close()?;
    world.close()
}
