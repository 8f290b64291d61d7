//! NCCL's unique id over MPI, the way nccl-tests and NCCL EP share it (feature `mpi`,
//! through rsmpi): rank 0's id broadcast on an MPI communicator (`MPI_Bcast`), this
//! process's place read from MPI itself — rank and size from the communicator, the local
//! rank from its shared-memory split (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`) — and
//! every rank's host and GPU gathered (`MPI_Allgather`).
//!
//! The MPI launcher has already connected the ranks, so under `mpirun` or `srun --mpi` this
//! needs no `MASTER_ADDR`/`MASTER_PORT` and no `cudajit-nccl-launch`. It is chosen
//! explicitly ([`Communicator::from_mpi`]); [`Communicator::from_env`] keeps the TCP
//! exchange. MPI has no deadlines of its own: a rank that dies is the MPI launcher's to
//! detect (it ends the job).
//!
//! [`Communicator::from_env`]: crate::Communicator::from_env

use std::os::raw::c_int;
use std::sync::Arc;

/// The rsmpi crate this feature is built on: its communicators are what
/// [`Communicator::from_mpi`] takes, so a program names them through this re-export and
/// gets the same version.
pub use mpi;

use mpi::datatype::PartitionMut;
use mpi::topology::{Color, CommunicatorRelation, SimpleCommunicator};
use mpi::traits::{Communicator as MpiCommunicator, CommunicatorCollectives, Root};

use super::env::{declared_place, DeclaredPlace};
use super::exchange::Exchanged;
use super::host_name;
use crate::discover::SearchEnv;
use crate::error::{NcclError, Result};
use crate::loaded::{LoadedNccl, UniqueId};
use crate::safe::{Communicator, InitRank, PeerInfo};
use crate::sys::NCCL_UNIQUE_ID_BYTES;

/// One process's place in an MPI communicator, as MPI reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MpiPlace {
    /// This process's rank in the communicator.
    pub rank: usize,
    /// Processes in the communicator.
    pub world_size: usize,
    /// This process's rank among the communicator's processes on its host: its GPU.
    pub local_rank: usize,
    /// The communicator's processes on this host.
    pub local_world_size: usize,
    /// This host's index, hosts numbered in the order of their lowest rank.
    pub node_rank: usize,
    /// Hosts the communicator spans.
    pub nodes: usize,
}

/// Where this process is in `comm`. Collective: every rank of `comm` calls it. When `comm`
/// is (congruent with) `MPI_COMM_WORLD`, the launcher's variables, if any are set, must
/// agree with MPI (see [`super::BootstrapEnv`]'s table).
pub fn place<C: MpiCommunicator>(comm: &C) -> Result<MpiPlace> {
    ensure_running()?;
    let agrees = if is_world(comm) {
        declared_place(&SearchEnv::from_process())
            .and_then(|declared| check_launcher_agrees(comm, declared.as_ref()))
    } else {
        Ok(())
    };
    every_rank_ok(comm, agrees)?;
    let rank = comm.rank();
    let host = comm.split_shared(rank);
    // The hosts' lowest ranks, in rank order, number the hosts; each tells its host.
    let leader = host.rank() == 0;
    let leaders = comm.split_by_color(if leader {
        Color::with_value(0)
    } else {
        Color::undefined()
    });
    let mut node: [c_int; 2] = leaders.map_or([0, 0], |l| [l.rank(), l.size()]);
    host.process_at_rank(0).broadcast_into(&mut node[..]);
    Ok(MpiPlace {
        rank: rank as usize,
        world_size: comm.size() as usize,
        local_rank: host.rank() as usize,
        local_world_size: host.size() as usize,
        node_rank: node[0] as usize,
        nodes: node[1] as usize,
    })
}

/// Rank 0 of `comm` calls `make_id` and broadcasts the id; every rank learns every rank's
/// host and `device`. Collective: every rank of `comm` calls it. A failure of `make_id`
/// reaches every rank (as an error naming rank 0) instead of leaving them waiting.
pub fn exchange<C: MpiCommunicator>(
    comm: &C,
    device: usize,
    make_id: impl FnOnce() -> Result<UniqueId>,
) -> Result<Exchanged> {
    ensure_running()?;
    // One status byte (1: rank 0 has an id), then the id.
    let mut message = [0u8; 1 + NCCL_UNIQUE_ID_BYTES];
    let mut own_failure = None;
    if comm.rank() == 0 {
        match make_id() {
            Ok(id) => {
                message[0] = 1;
                message[1..].copy_from_slice(&id.0);
            }
            Err(e) => own_failure = Some(e),
        }
    }
    comm.process_at_rank(0).broadcast_into(&mut message[..]);
    if let Some(e) = own_failure {
        return Err(e);
    }
    if message[0] != 1 {
        return Err(NcclError::Bootstrap(
            "rank 0 could not create NCCL's unique id (its error says why)".into(),
        ));
    }
    let mut unique_id = UniqueId([0; NCCL_UNIQUE_ID_BYTES]);
    unique_id.0.copy_from_slice(&message[1..]);
    Ok(Exchanged {
        unique_id,
        peers: gather_peers(comm, device)?,
    })
}

impl Communicator {
    /// Joins the NCCL job formed by the ranks of the MPI communicator `comm` (usually
    /// `universe.world()`; any intra-communicator works): this rank is `comm`'s, its GPU
    /// the local rank from `comm`'s shared-memory split, and the unique id is broadcast
    /// from `comm`'s rank 0. MPI must be initialised (`mpi::initialize()`) and stay so
    /// until this returns. Collective over `comm`; NCCL's own steps are bounded by
    /// `CUDAJIT_NCCL_TIMEOUT_S` (default 120 s).
    pub fn from_mpi<C: MpiCommunicator>(nccl: &Arc<LoadedNccl>, comm: &C) -> Result<Communicator> {
        let place = place(comm)?;
        let timeout = crate::safe::communicator_timeout()?;
        let Exchanged { unique_id, peers } = exchange(comm, place.local_rank, || nccl.unique_id())?;
        Communicator::init_rank(
            nccl,
            InitRank {
                unique_id,
                rank: place.rank as i32,
                n_ranks: place.world_size as i32,
                device: place.local_rank,
                timeout,
                peers: Some(peers),
            },
        )
    }
}

/// MPI calls before `MPI_Init` or after `MPI_Finalize` abort the process; this turns that
/// into an error with the fix.
fn ensure_running() -> Result<()> {
    // MPI_Initialized stays true after MPI_Finalize, so the finalised case comes first.
    if mpi::environment::is_finalized() {
        return Err(NcclError::Bootstrap(
            "MPI is already finalised (its Universe was dropped): keep the Universe that \
             mpi::initialize() returned alive until the NCCL communicator exists"
                .into(),
        ));
    }
    if !mpi::environment::is_initialized() {
        return Err(NcclError::Bootstrap(
            "MPI is not initialised: call mpi::initialize() (cudajit_nccl::bootstrap::mpi::mpi) \
             first and keep its Universe alive, then pass universe.world()"
                .into(),
        ));
    }
    Ok(())
}

/// Makes one rank's failure every rank's before the next collective, which the failed
/// rank would never join (leaving the others waiting in it).
fn every_rank_ok<C: MpiCommunicator>(comm: &C, own: Result<()>) -> Result<()> {
    let mut failed = vec![0u8; comm.size() as usize];
    comm.all_gather_into(&u8::from(own.is_err()), &mut failed[..]);
    own?;
    match failed.iter().position(|&f| f != 0) {
        Some(rank) => Err(NcclError::Bootstrap(format!(
            "rank {rank} disagrees with its launcher's variables (its error says how)"
        ))),
        None => Ok(()),
    }
}

fn is_world<C: MpiCommunicator>(comm: &C) -> bool {
    matches!(
        comm.compare(&SimpleCommunicator::world()),
        CommunicatorRelation::Identical | CommunicatorRelation::Congruent
    )
}

/// A launcher's variables that disagree with `MPI_COMM_WORLD` mean this process was not
/// started by that MPI job (run without `mpirun`, MPI starts it alone, as a singleton) or
/// a variable was set by hand; either way MPI's answer would silently differ from the
/// launcher's.
fn check_launcher_agrees<C: MpiCommunicator>(
    world: &C,
    declared: Option<&DeclaredPlace>,
) -> Result<()> {
    let Some(declared) = declared else {
        return Ok(());
    };
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let fix = "start every rank with mpirun or srun (one MPI job), or use \
               Communicator::from_env for the TCP exchange";
    if let Some((var, n)) = declared.world_size.filter(|&(_, n)| n != size) {
        return Err(NcclError::Bootstrap(format!(
            "MPI_COMM_WORLD has {size} rank(s) but {var}={n} ({}): {fix}",
            declared.launcher
        )));
    }
    if declared.rank != rank {
        return Err(NcclError::Bootstrap(format!(
            "MPI_COMM_WORLD's rank is {rank} but {}={} ({}): {fix}",
            declared.rank_var, declared.rank, declared.launcher
        )));
    }
    Ok(())
}

/// Every rank's host name and device, by rank: the devices in one `MPI_Allgather`, the
/// names' lengths in another, then the names (`MPI_Allgatherv`).
fn gather_peers<C: MpiCommunicator>(comm: &C, device: usize) -> Result<Vec<PeerInfo>> {
    let size = comm.size() as usize;
    let host = host_name();
    let mut devices = vec![0u64; size];
    comm.all_gather_into(&(device as u64), &mut devices[..]);
    let mut lengths = vec![0 as c_int; size];
    let own_length = c_int::try_from(host.len())
        .map_err(|_| NcclError::Bootstrap(format!("host name too long: {host:?}")))?;
    comm.all_gather_into(&own_length, &mut lengths[..]);
    let offsets: Vec<c_int> = lengths
        .iter()
        .scan(0, |at, &n| {
            let start = *at;
            *at += n;
            Some(start)
        })
        .collect();
    let mut names = vec![0u8; lengths.iter().map(|&n| n as usize).sum()];
    {
        let mut partition = PartitionMut::new(&mut names[..], &lengths[..], &offsets[..]);
        comm.all_gather_varcount_into(host.as_bytes(), &mut partition);
    }
    Ok((0..size)
        .map(|rank| {
            let start = offsets[rank] as usize;
            let name = &names[start..start + lengths[rank] as usize];
            PeerInfo {
                rank: rank as i32,
                host: String::from_utf8_lossy(name).into_owned(),
                device: devices[rank] as usize,
            }
        })
        .collect())
}
