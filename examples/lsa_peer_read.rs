//! Each rank reads the window of its next LSA peer with a `#[kernel]` that calls NCCL's
//! device API, and checks what it read.
//!
//!     cargo run --release --example lsa_peer_read                                   # one process, all GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/lsa_peer_read        # one process per GPU
//!
//! Needs at least 2 GPUs connected by NVLink and NCCL >= 2.28 (see docs/nccl.md); without
//! a GPU (or with `CUDAJIT_BACKEND=sim`) it runs on `SIM_RANKS` (default 4) simulated ranks,
//! or on each of `SIM_NODES` simulated nodes of `SIM_RANKS` ranks:
//!
//!     CUDAJIT_BACKEND=sim SIM_NODES=2 SIM_RANKS=4 cargo run --example lsa_peer_read

#[path = "lsa/setup.rs"]
mod setup;

#[path = "lsa/kernels.rs"]
mod kernels;

use cudajit::nccl::device::{DevComm, Window};
use cudajit::{LaunchConfig, Stream};
use kernels::{
    peer_read, peer_read_half_warps, peer_read_threads, peer_read_warp_spans, peer_read_warps,
};

/// The grid on GPUs (one LSA barrier per CTA; the device communicator has one per thread,
/// for the thread-session case).
const CTAS: u32 = 64;
const THREADS: u32 = 512;

fn main() -> setup::Result<()> {
    let Some(world) = setup::world(LaunchConfig::new(CTAS, THREADS))? else {
        return Ok(());
    };
    let lsa_size = world.lsa_size()?;
    let value = |rank: i32, k: usize| (rank * 1000) as f32 + (k % 977) as f32;
    // Every rank ends with its next LSA peer's input.
    let expected = |rank: i32, k: usize| {
        let first = setup::lsa_first(rank, lsa_size);
        value(first + (rank - first + 1) % lsa_size, k)
    };
    for bytes in world.sizes(64 << 20) {
        for count in [bytes / 4, bytes / 4 + 3] {
            let case = setup::Case {
                name: "peer read",
                input_len: count,
                output_len: count,
                input: &value,
                expected: &expected,
            };
            setup::check_case(&world, &case, |_, stream, comm, window, out| {
                let config = world.config;
                peer_read::launch(stream, config, comm, window, count, out)?;
                Ok(())
            })?;
            // The same with the barriers of NCCL's other cooperative groups: per warp, per
            // span of 4 warps, per half warp and per thread (the device communicator has a
            // barrier per thread of the grid).
            type Launch = fn(
                &Stream,
                LaunchConfig,
                DevComm,
                Window,
                usize,
                usize,
            ) -> Result<(), cudajit::Error>;
            let groups: [(&str, Launch); 4] = [
                ("peer read, warp barriers", |s, c, comm, w, n, o| {
                    peer_read_warps::launch(s, c, comm, w, n, o)
                }),
                ("peer read, warp-span barriers", |s, c, comm, w, n, o| {
                    peer_read_warp_spans::launch(s, c, comm, w, n, o)
                }),
                ("peer read, half-warp barriers", |s, c, comm, w, n, o| {
                    peer_read_half_warps::launch(s, c, comm, w, n, o)
                }),
                ("peer read, thread barriers", |s, c, comm, w, n, o| {
                    peer_read_threads::launch(s, c, comm, w, n, o)
                }),
            ];
            for (name, launch) in groups {
                let case = setup::Case { name, ..case };
                setup::check_case(&world, &case, |_, stream, comm, window, out| {
                    launch(stream, world.config, comm, window, count, out)?;
                    Ok(())
                })?;
            }
        }
    }
    world.close()
}
