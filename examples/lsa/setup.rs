//! What the LSA examples share: the ranks of this process communicating, their symmetric
//! buffers, and a checked run of a collective.
//!
//! On GPUs: all visible GPUs in one process (`ncclCommInitAll`), or the one GPU of this
//! rank under `cudajit-nccl-launch`/torchrun. Without a GPU (or with
//! `CUDAJIT_BACKEND=sim`): `SIM_RANKS` (default 4) simulated ranks on the CPU
//! (`cudajit::nccl::sim`), running the same kernels on smaller sizes and grids; with
//! `SIM_NODES=n`, on each of `n` simulated nodes (the collectives run within each node's
//! LSA team, as they would on `n` hosts).

use std::error::Error;

use cudajit::nccl::device::{DevComm, Window};
use cudajit::nccl::sim::{SimSymmetricBuffer, SimWorld};
use cudajit::nccl::{Communicator, LoadedNccl, SymmetricBuffer};
use cudajit::{BufferElement, LaunchConfig, Stream};

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The ranks of this process, on GPUs or simulated.
pub struct World {
    ranks: Ranks,
    /// One stream per local rank.
    pub streams: Vec<Stream>,
    /// Every rank's launch configuration.
    pub config: LaunchConfig,
}

enum Ranks {
    Gpu {
        comm: Communicator,
        dev: cudajit::nccl::DevComm,
    },
    Sim(SimWorld),
}

/// A symmetric buffer of the world's backend.
pub enum Buffer<T> {
    Gpu(SymmetricBuffer<T>),
    Sim(SimSymmetricBuffer<T>),
}

/// The ranks of this process, with one LSA barrier per CTA of `config` (GPUs) or the
/// simulator's smaller grid; `None` (after saying why) on a machine with one GPU.
pub fn world(config: LaunchConfig) -> Result<Option<World>> {
    if let Some(reason) = simulate_instead() {
        let number = |name: &str, default: usize| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let (nodes, per_node) = (number("SIM_NODES", 1), number("SIM_RANKS", 4));
        let sim = SimWorld::with_nodes(nodes, per_node)?;
        let nranks = sim.nranks();
        if nodes == 1 {
            println!("no GPU run: {nranks} simulated ranks on the CPU simulator ({reason})");
        } else {
            println!(
                "no GPU run: {nodes} simulated nodes of {per_node} ranks on the CPU simulator \
                 ({reason})"
            );
        }
        let streams = (0..nranks)
            .map(|r| Stream::from_sim(sim.stream(r).clone()))
            .collect();
        // Small grids: the simulator runs every thread.
        let config = LaunchConfig::new(8, 128);
        return Ok(Some(World {
            ranks: Ranks::Sim(sim),
            streams,
            config,
        }));
    }
    // NVLink multicast must stay off on shared machines.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: set before any thread starts and before NCCL reads it.
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    let nccl = LoadedNccl::global()?;
    let comm = if std::env::var_os("RANK").is_some() {
        Communicator::from_env(&nccl)?
    } else {
        let gpus = cudajit::gpu_count()?;
        if gpus < 2 {
            println!("skipped: the LSA examples need at least 2 GPUs, this machine has {gpus}");
            return Ok(None);
        }
        Communicator::init_all(&nccl, &(0..gpus).collect::<Vec<_>>())?
    };
    // One LSA barrier per CTA (what the launch check of the kernels asks for), and enough
    // for a barrier per thread (the thread-session kernel; the warp, half-warp and
    // warp-span kernels need fewer).
    let mut requirements = cudajit::nccl::device::requirements_for(&config);
    let threads = config.grid.x
        * config.grid.y
        * config.grid.z
        * config.block.x
        * config.block.y
        * config.block.z;
    requirements.lsa_barrier_count = requirements.lsa_barrier_count.max(threads);
    let dev = comm.create_dev_comm(&requirements)?;
    let streams = (0..comm.local_ranks().len())
        .map(|i| {
            comm.context(i)
                .map(|c| Stream::from_cuda(c.default_stream()))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or("a local rank without a CUDA context")?;
    Ok(Some(World {
        ranks: Ranks::Gpu { comm, dev },
        streams,
        config,
    }))
}

/// Why the example runs on simulated ranks instead of GPUs: `CUDAJIT_BACKEND=sim`, or no
/// GPU at all (and no launcher's `RANK`). `None` when GPUs run it.
fn simulate_instead() -> Option<String> {
    match std::env::var("CUDAJIT_BACKEND").as_deref() {
        Ok("sim" | "simulator" | "cpu") => return Some("CUDAJIT_BACKEND=sim".into()),
        Ok("gpu" | "cuda") => return None,
        _ => {}
    }
    if std::env::var_os("RANK").is_some() {
        return None;
    }
    cudajit::gpu_count().err().map(|e| e.to_string())
}

impl World {
    /// Whether the ranks are simulated.
    pub fn simulated(&self) -> bool {
        matches!(self.ranks, Ranks::Sim(_))
    }

    /// The local ranks of this process.
    pub fn local(&self) -> usize {
        self.streams.len()
    }

    /// Ranks in each LSA team (the ranks of one node).
    pub fn lsa_size(&self) -> Result<i32> {
        match &self.ranks {
            Ranks::Gpu { dev, .. } => Ok(dev.lsa_size(0).ok_or("no LSA team size")?),
            Ranks::Sim(sim) => Ok(sim.ranks_per_node() as i32),
        }
    }

    /// World rank of local rank `i`.
    pub fn rank(&self, i: usize) -> i32 {
        match &self.ranks {
            Ranks::Gpu { comm, .. } => comm.local_ranks()[i].rank,
            Ranks::Sim(_) => i as i32,
        }
    }

    /// A symmetric buffer of `len` elements on every rank.
    pub fn alloc_symmetric<T: BufferElement + Copy + 'static>(
        &self,
        len: usize,
    ) -> Result<Buffer<T>> {
        Ok(match &self.ranks {
            Ranks::Gpu { comm, .. } => Buffer::Gpu(comm.alloc_symmetric::<T>(len)?),
            Ranks::Sim(sim) => Buffer::Sim(sim.alloc_symmetric::<T>(len)?),
        })
    }

    /// Kernel parameters of local rank `i`.
    pub fn params<T: BufferElement + Copy + 'static>(
        &self,
        buffer: &Buffer<T>,
        i: usize,
    ) -> Result<(DevComm, Window)> {
        match (&self.ranks, buffer) {
            (Ranks::Gpu { dev, .. }, Buffer::Gpu(b)) => Ok((
                DevComm::for_rank(dev, i)?,
                Window::for_rank(b, i).ok_or("the buffer has no window")?,
            )),
            (Ranks::Sim(sim), Buffer::Sim(b)) => Ok((sim.dev_comm(i), b.window(i))),
            _ => Err("a buffer of another backend".into()),
        }
    }

    /// Runs `launch` for every local rank before waiting on any (the barriers span ranks),
    /// then waits for all.
    pub fn launch_all(&self, mut launch: impl FnMut(usize, &Stream) -> Result<()>) -> Result<()> {
        for (i, stream) in self.streams.iter().enumerate() {
            launch(i, stream)?;
        }
        match &self.ranks {
            Ranks::Gpu { .. } => {
                for stream in &self.streams {
                    stream.synchronize()?;
                }
            }
            Ranks::Sim(sim) => sim.synchronize()?,
        }
        Ok(())
    }

    /// Input sizes in bytes from 4 KB to `MAX_BYTES` (default `default_max`; 64 KB on
    /// simulated ranks), by 4.
    pub fn sizes(&self, default_max: usize) -> Vec<usize> {
        let max: usize = std::env::var("MAX_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if self.simulated() {
                64 << 10
            } else {
                default_max
            });
        std::iter::successors(Some(4096usize), |b| Some(b * 4))
            .take_while(|&b| b <= max)
            .collect()
    }

    pub fn close(self) -> Result<()> {
        if let Ranks::Gpu { comm, dev } = self.ranks {
            dev.close()?;
            comm.close()?;
        }
        Ok(())
    }
}

impl<T: BufferElement + Copy + 'static> Buffer<T> {
    /// Copies `data` to the start of local rank `i`'s part.
    pub fn copy_from_host(&self, i: usize, data: &[T]) -> Result<()> {
        match self {
            Buffer::Gpu(b) => b.copy_from_host(i, data)?,
            Buffer::Sim(b) => b.copy_from_host(i, data)?,
        }
        Ok(())
    }

    /// Copies the start of local rank `i`'s part into `out`.
    pub fn copy_to_host(&self, i: usize, out: &mut [T]) -> Result<()> {
        match self {
            Buffer::Gpu(b) => b.copy_to_host(i, out)?,
            Buffer::Sim(b) => b.copy_to_host(i, out)?,
        }
        Ok(())
    }

    /// Releases the buffer (simulated buffers go with their world).
    pub fn close(self) -> Result<()> {
        if let Buffer::Gpu(b) = self {
            b.close()?;
        }
        Ok(())
    }
}

/// One checked run of a collective: every rank's input, the window layout, and the output
/// each rank must end with.
pub struct Case<'a, T> {
    /// What runs, for the report (e.g. "two-shot").
    pub name: &'a str,
    /// Input elements per rank, at byte 0 of the window.
    pub input_len: usize,
    /// Output elements per rank, at `out_offset` (the input rounded up to 4096 bytes).
    pub output_len: usize,
    /// Element `k` of world rank `rank`'s input.
    pub input: &'a dyn Fn(i32, usize) -> T,
    /// Element `k` of world rank `rank`'s output.
    pub expected: &'a dyn Fn(i32, usize) -> T,
}

/// The first world rank of world rank `rank`'s LSA team of `lsa_size` ranks (NCCL's LSA
/// team is consecutive world ranks: `ncclTeamLsa` has stride 1).
pub fn lsa_first(rank: i32, lsa_size: i32) -> i32 {
    rank - rank % lsa_size
}

/// Where the output starts: the input's bytes rounded up to 4096 (window offsets must).
pub fn out_offset<T>(input_len: usize) -> usize {
    (input_len * std::mem::size_of::<T>()).div_ceil(4096) * 4096
}

/// Fills every rank's window with its input, runs `launch(local rank, stream, comm,
/// window, out_offset)` on every rank, and compares every rank's output with
/// `case.expected`.
pub fn check_case<T>(
    world: &World,
    case: &Case<'_, T>,
    mut launch: impl FnMut(usize, &Stream, DevComm, Window, usize) -> Result<()>,
) -> Result<()>
where
    T: cudajit::DeviceScalar + BufferElement + Copy + PartialEq + std::fmt::Debug + 'static,
{
    let elem = std::mem::size_of::<T>();
    let out_offset = out_offset::<T>(case.input_len);
    let len = out_offset / elem + case.output_len;
    let buffer = world.alloc_symmetric::<T>(len)?;
    for i in 0..world.local() {
        let data: Vec<T> = (0..case.input_len)
            .map(|k| (case.input)(world.rank(i), k))
            .collect();
        buffer.copy_from_host(i, &data)?;
    }
    world.launch_all(|i, stream| {
        let (comm, window) = world.params(&buffer, i)?;
        launch(i, stream, comm, window, out_offset)
    })?;
    let mut all = vec![(case.input)(0, 0); len];
    for i in 0..world.local() {
        buffer.copy_to_host(i, &mut all)?;
        let rank = world.rank(i);
        let got = &all[out_offset / elem..];
        let wrong: Vec<usize> = (0..case.output_len)
            .filter(|&k| got[k] != (case.expected)(rank, k))
            .collect();
        if let Some(&k) = wrong.first() {
            return Err(format!(
                "{} on rank {rank}: {} of {} elements wrong, the first at {k}: {:?}, expected {:?}",
                case.name,
                wrong.len(),
                case.output_len,
                got[k],
                (case.expected)(rank, k)
            )
            .into());
        }
    }
    println!(
        "{:>12} bytes in {:>4} {:<10}: correct on {} {}rank(s)",
        case.input_len * elem,
        <T as cudajit::DeviceScalar>::SCALAR.rust_name(),
        case.name,
        world.local(),
        if world.simulated() {
            "simulated "
        } else {
            "local "
        }
    );
    buffer.close()?;
    Ok(())
}
