//! Agreement of the ranks of a device communicator on the kernels they launch.
//!
//! Ranks that launch different kernels (or different specialisations of one) on a
//! device communicator wait at each other's LSA barriers forever. Before the first launch
//! of each kernel identity on a device communicator, every rank therefore contributes
//! the identity it is about to launch, and a divergence is an error naming both sides:
//!
//! - every rank in this process ([`crate::Communicator::init_all`]): the launches of the local
//!   ranks come one after another from one thread, so a collective at the first rank's
//!   launch would wait for ranks that launch later. The comparison happens in the
//!   process instead ([`LocalAgreement`]): the n-th identity a local rank agrees on must be
//!   the n-th of the first local rank to get that far;
//! - one rank per process: an `ncclAllGather` of a [`RECORD_BYTES`] record per rank
//!   ([`LaunchIdentity::encode`]), synchronous, bounded by the communicator's timeout
//!   (a rank that never joins is an error, and the communicator is aborted);
//! - several processes with several ranks each (cudajit creates no such communicator
//!   today): the local ranks are compared in the process, nothing across processes.
//!
//! The n-th exchange of one rank pairs with the n-th of every other, so in a correct
//! program (every rank launches the same kernels in the same order) they pair up, and a
//! rank whose n-th new kernel differs meets the others' n-th and reports it.

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::error::{NcclError, Result};
use crate::safe::communicator::CommShared;

/// Bytes each rank contributes to an exchange.
pub const RECORD_BYTES: usize = 256;

/// Marks a record as one (a rank that contributed zeros took part in some other
/// collective).
const MAGIC: [u8; 8] = *b"cjagree1";

/// Bytes of the description a record carries (longer ones are cut at a character).
pub const DESCRIPTION_BYTES: usize = RECORD_BYTES - MAGIC.len() - 32;

/// What a rank is about to launch: the kernel's identity (a digest of its code and
/// specialisation) and a description for people (`all_reduce<T=f32>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaunchIdentity {
    /// BLAKE3 of the kernel's code and specialisation.
    pub digest: [u8; 32],
    /// The kernel and its specialisation, for messages.
    pub description: String,
}

impl LaunchIdentity {
    /// An identity.
    pub fn new(digest: [u8; 32], description: impl Into<String>) -> Self {
        LaunchIdentity {
            digest,
            description: description.into(),
        }
    }

    /// The record a rank contributes: magic, digest, description (UTF-8, cut to
    /// [`DESCRIPTION_BYTES`] at a character boundary, zero-padded).
    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        out[..MAGIC.len()].copy_from_slice(&MAGIC);
        out[MAGIC.len()..MAGIC.len() + 32].copy_from_slice(&self.digest);
        let mut end = self.description.len().min(DESCRIPTION_BYTES);
        while !self.description.is_char_boundary(end) {
            end -= 1;
        }
        out[MAGIC.len() + 32..MAGIC.len() + 32 + end]
            .copy_from_slice(&self.description.as_bytes()[..end]);
        out
    }

    /// A record back; `None` for one without the magic (all zeros: the rank was in
    /// another collective) or of the wrong size.
    pub fn decode(record: &[u8]) -> Option<Self> {
        if record.len() != RECORD_BYTES || record[..MAGIC.len()] != MAGIC {
            return None;
        }
        let mut digest = [0u8; 32];
        digest.copy_from_slice(&record[MAGIC.len()..MAGIC.len() + 32]);
        let text = &record[MAGIC.len() + 32..];
        let len = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        Some(LaunchIdentity {
            digest,
            description: String::from_utf8_lossy(&text[..len]).into_owned(),
        })
    }

    /// The first 16 hex digits of the digest.
    pub fn short_digest(&self) -> String {
        self.digest[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// Two ranks about to launch different kernels on one device communicator.
#[derive(Clone, PartialEq, Eq, cudajit_error_debug::ReadableDebug)]
pub struct Divergence {
    /// This rank.
    pub rank: i32,
    /// What it launches.
    pub ours: LaunchIdentity,
    /// The first rank that launches something else.
    pub other_rank: i32,
    /// What that rank launches; `None` when it contributed no identity (it was in another
    /// NCCL collective at this point).
    pub theirs: Option<LaunchIdentity>,
    /// Found in the process ([`LocalAgreement`]): the other rank's kernel is already
    /// enqueued and waits at its barriers for this one.
    pub in_process: bool,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Divergence {
            rank,
            ours,
            other_rank,
            theirs,
            in_process,
        } = self;
        write!(
            f,
            "the ranks of the device communicator do not launch the same kernel: rank {rank} \
             launches `{}`",
            ours.description
        )?;
        match theirs {
            Some(theirs) if theirs.description == ours.description => write!(
                f,
                ", rank {other_rank} the same name and specialisation with different code \
                 (identity {} here, {} there: the ranks run different builds, or two \
                 kernels of that name)",
                ours.short_digest(),
                theirs.short_digest()
            )?,
            Some(theirs) => write!(
                f,
                " but rank {other_rank} launches `{}`",
                theirs.description
            )?,
            None => write!(
                f,
                " but rank {other_rank} was in another NCCL collective at this point"
            )?,
        }
        write!(
            f,
            ". Every rank must launch the same kernels, with the same specialisations, in the \
             same order (the first launch of each is agreed on); launched as they are, they \
             would wait at each other's barriers forever"
        )?;
        if *in_process {
            write!(
                f,
                ". Rank {other_rank}'s kernel is already enqueued and waits for this one: end \
                 the process rather than tear the communicator down"
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Divergence {}

/// The in-process agreement of the local ranks of one device communicator: the n-th
/// new identity of each local rank is compared with the n-th recorded (by whichever local
/// rank got there first). Pure bookkeeping, no NCCL.
#[derive(Debug, Default)]
pub struct LocalAgreement {
    /// Identities in the order first agreed on, with the rank that recorded each.
    log: Vec<(LaunchIdentity, i32)>,
    /// Per local rank: how many identities it agreed on (its position in `log`).
    next: Vec<usize>,
    /// (local rank, digest) pairs agreed on.
    agreed: HashSet<(usize, [u8; 32])>,
}

impl LocalAgreement {
    /// For `local_ranks` ranks in this process.
    pub fn new(local_ranks: usize) -> Self {
        LocalAgreement {
            log: Vec::new(),
            next: vec![0; local_ranks],
            agreed: HashSet::new(),
        }
    }

    /// Whether local rank `local` already agreed on `digest`.
    pub fn is_agreed(&self, local: usize, digest: &[u8; 32]) -> bool {
        self.agreed.contains(&(local, *digest))
    }

    /// Local rank `local` (world rank `rank`) is about to launch `identity` for the first
    /// time: the first local rank to get this far records it, the others compare. Agreed
    /// identities stay agreed (a later call is `Ok` without a new step); a divergence
    /// leaves the rank where it was.
    pub fn agree(
        &mut self,
        local: usize,
        rank: i32,
        identity: &LaunchIdentity,
    ) -> Result<(), Box<Divergence>> {
        if self.is_agreed(local, &identity.digest) {
            return Ok(());
        }
        if local >= self.next.len() {
            self.next.resize(local + 1, 0);
        }
        let position = self.next[local];
        match self.log.get(position) {
            Some((recorded, by)) if recorded.digest != identity.digest => {
                return Err(Box::new(Divergence {
                    rank,
                    ours: identity.clone(),
                    other_rank: *by,
                    theirs: Some(recorded.clone()),
                    in_process: true,
                }))
            }
            Some(_) => {}
            None => self.log.push((identity.clone(), rank)),
        }
        self.next[local] = position + 1;
        self.agreed.insert((local, identity.digest));
        Ok(())
    }
}

/// Compares this rank's identity with every rank's record of an all-gather (`records`:
/// [`RECORD_BYTES`] per rank, in rank order); the first rank that differs is the error.
pub fn compare_gathered(
    rank: i32,
    ours: &LaunchIdentity,
    records: &[u8],
) -> Result<(), Box<Divergence>> {
    for (other, record) in records.chunks(RECORD_BYTES).enumerate() {
        let theirs = LaunchIdentity::decode(record);
        if theirs.as_ref().map(|t| t.digest) != Some(ours.digest) {
            return Err(Box::new(Divergence {
                rank,
                ours: ours.clone(),
                other_rank: other as i32,
                theirs,
                in_process: false,
            }));
        }
    }
    Ok(())
}

/// Why a launch could not be agreed on.
#[derive(Clone, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum AgreeError {
    /// The ranks launch different kernels.
    #[error(transparent)]
    Divergence(#[from] Box<Divergence>),
    /// The device communicator the kernel argument came from was destroyed.
    #[error(
        "its DevComm argument belongs to a device communicator that was destroyed (or never \
         created in this process); build kernel arguments from a live cudajit_nccl::DevComm"
    )]
    Destroyed,
    /// The exchange failed (a timeout: a rank that launched nothing, or a different
    /// kernel it had launched before; or an NCCL or CUDA error).
    #[error("agreeing on the kernel with the other ranks failed: {0}")]
    Exchange(#[from] NcclError),
}

/// What a device communicator shares with the launch checks of its kernel arguments.
pub(crate) struct Agreement {
    comm: Weak<CommShared>,
    /// World rank of each local rank.
    ranks: Vec<i32>,
    n_ranks: i32,
    local: Mutex<LocalAgreement>,
}

/// Device communicators alive in this process, by serial.
static LIVE: Mutex<Vec<(u64, Weak<Agreement>)>> = Mutex::new(Vec::new());
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// Registers the agreement state of a new device communicator; returns its serial
/// (unique in the process, never 0) and the state the device communicator keeps alive.
pub(crate) fn register(comm: &Arc<CommShared>) -> (u64, Arc<Agreement>) {
    let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
    let agreement = Arc::new(Agreement {
        comm: Arc::downgrade(comm),
        ranks: comm.ranks.iter().map(|r| r.rank).collect(),
        n_ranks: comm.n_ranks,
        local: Mutex::new(LocalAgreement::new(comm.ranks.len())),
    });
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    live.retain(|(_, w)| w.strong_count() > 0);
    live.push((serial, Arc::downgrade(&agreement)));
    (serial, agreement)
}

/// Before local rank `local` of device communicator `serial` launches `identity` for the
/// first time: agrees on it with the other ranks (see the module documentation). Cheap
/// once agreed (a lock and a set lookup); callers cache success themselves.
pub fn agree_on_launch(
    serial: u64,
    local: usize,
    identity: &LaunchIdentity,
) -> Result<(), AgreeError> {
    let agreement = {
        let live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        live.iter()
            .find(|(s, _)| *s == serial)
            .and_then(|(_, w)| w.upgrade())
            .ok_or(AgreeError::Destroyed)?
    };
    let Some(&rank) = agreement.ranks.get(local) else {
        return Err(AgreeError::Destroyed);
    };
    // Held through the exchange: exchanges of one device communicator are ordered.
    let mut state = agreement.local.lock().unwrap_or_else(|p| p.into_inner());
    if state.is_agreed(local, &identity.digest) {
        return Ok(());
    }
    let n_local = agreement.ranks.len();
    if n_local == 1 && agreement.n_ranks > 1 {
        let comm = agreement.comm.upgrade().ok_or(AgreeError::Destroyed)?;
        let records = comm.all_gather_records(&identity.encode())?;
        compare_gathered(rank, identity, &records)?;
    } else if n_local as i32 != agreement.n_ranks {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            tracing::warn!(
                local = n_local,
                ranks = agreement.n_ranks,
                "kernel agreement compares only the ranks of this process: communicators \
                 with several ranks in each of several processes are not checked across \
                 processes"
            )
        });
    }
    state.agree(local, rank, identity)?;
    Ok(())
}

impl CommShared {
    /// `ncclAllGather` of one [`RECORD_BYTES`] record from the (single) local rank
    /// through a small device buffer on a private stream, waited for with the
    /// communicator's timeout; the records of every rank, in rank order.
    pub(crate) fn all_gather_records(&self, record: &[u8; RECORD_BYTES]) -> Result<Vec<u8>> {
        use cudarc::driver::result::{self as cu, stream::StreamKind};
        let [r] = self.ranks.as_slice() else {
            return Err(NcclError::InvalidArgument(
                "the identity exchange runs with one local rank".into(),
            ));
        };
        let n = self.n_ranks as usize;
        let cuda = |what: &'static str| move |e| NcclError::cuda(what, e);
        self.bind(r)?;
        // A stream of its own, non-blocking: nothing waits for the program's own work,
        // which may be a kernel waiting for its peers.
        let stream = cu::stream::create(StreamKind::NonBlocking)
            .map_err(cuda("creating the stream of the identity exchange"))?;
        let sys = self.nccl.sys();
        // SAFETY: stream-ordered allocations and copies on the stream just created; the
        // host slices live until the stream is known to be idle (polled below) or the
        // communicator is aborted and the memory given up.
        let (send, recv) = unsafe {
            let send = cu::malloc_async(stream, RECORD_BYTES)
                .map_err(cuda("allocating the identity exchange"))?;
            let recv = cu::malloc_async(stream, RECORD_BYTES * n)
                .map_err(cuda("allocating the identity exchange"))?;
            cu::memcpy_htod_async(send, record.as_slice(), stream)
                .map_err(cuda("copying the kernel identity"))?;
            (send, recv)
        };
        let gathered = {
            let _op = self.lock()?;
            self.grouped("ncclAllGather", |_, r| {
                // SAFETY: `send` holds RECORD_BYTES and `recv` n * RECORD_BYTES bytes on
                // this rank's device, ordered on `stream`.
                unsafe {
                    (sys.all_gather)(
                        send as *const _,
                        recv as *mut _,
                        RECORD_BYTES,
                        crate::sys::ncclUint8,
                        r.comm,
                        stream as _,
                    )
                }
            })
        };
        if let Err(e) = gathered {
            if !self.is_aborted() {
                // SAFETY: nothing was enqueued that uses the allocations; freed once.
                unsafe {
                    let _ = cu::free_async(send, stream);
                    let _ = cu::free_async(recv, stream);
                    let _ = cu::stream::destroy(stream);
                }
            }
            return Err(e);
        }
        // Poll rather than synchronise: a peer that never joins is an error after the
        // communicator's timeout, not a hang.
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_micros(20);
        loop {
            // SAFETY: a live stream of the bound context.
            let state = unsafe { cudarc::driver::sys::cuStreamQuery(stream) };
            match state {
                cudarc::driver::sys::CUresult::CUDA_SUCCESS => break,
                cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY => {}
                other => {
                    return Err(NcclError::cuda(
                        "the identity exchange",
                        format!("{other:?}"),
                    ))
                }
            }
            if Instant::now() >= deadline {
                // The all-gather may still run: abort NCCL, leave the memory and stream.
                self.abort_all();
                return Err(NcclError::Timeout {
                    operation: "the all-gather of kernel identities before a kernel's first \
                                launch: another rank launched no kernel here, or one it had \
                                launched before while this rank launches a new one"
                        .into(),
                    after: self.timeout,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
        let mut out = vec![0u8; RECORD_BYTES * n];
        // SAFETY: the all-gather finished (the stream is idle); `out` has room for every
        // record; the allocations are freed once, on their stream, which is then drained
        // and destroyed.
        unsafe {
            cu::memcpy_dtoh_async(&mut out, recv, stream)
                .map_err(cuda("copying the kernel identities"))?;
            let _ = cu::free_async(send, stream);
            let _ = cu::free_async(recv, stream);
            cu::stream::synchronize(stream).map_err(cuda("the identity exchange"))?;
            let _ = cu::stream::destroy(stream);
        }
        Ok(out)
    }
}
