//! Communicators: creation (init-all, init-rank), completion of non-blocking work with
//! a deadline, groups, and teardown.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cudarc::driver::CudaContext;

use crate::error::{NcclError, Result};
use crate::loaded::{LoadedNccl, UniqueId};
use crate::result::check;
use crate::sys::{ncclComm_t, ncclInProgress, ncclResult_t, ncclSuccess};

/// How long a non-blocking operation may take before the communicator is aborted,
/// unless `CUDAJIT_NCCL_TIMEOUT_S` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// One rank of the communicator that lives in this process.
#[derive(Debug)]
pub struct LocalRank {
    /// The rank in the communicator.
    pub rank: i32,
    /// The CUDA device ordinal it runs on.
    pub device: usize,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) comm: ncclComm_t,
}

/// This machine's host name (ranks with the same name share a host).
pub fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Where a rank of the job runs, as the bootstrap learned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// The rank.
    pub rank: i32,
    /// Its host name (ranks with this process's host name are local).
    pub host: String,
    /// Its CUDA device ordinal on that host.
    pub device: usize,
}

/// Parameters of [`Communicator::init_rank`] (one rank of a multi-process job).
#[derive(Debug, Clone)]
pub struct InitRank {
    /// The unique id rank 0 created and shared.
    pub unique_id: UniqueId,
    /// This process's rank.
    pub rank: i32,
    /// Ranks in the job.
    pub n_ranks: i32,
    /// The CUDA device to use.
    pub device: usize,
    /// Limit for each collective setup step (init, registration, dev comm creation).
    pub timeout: Duration,
    /// Every rank's host and device, when known (the TCP bootstrap provides it); the
    /// 2.28 capability check uses it to find the local ranks.
    pub peers: Option<Vec<PeerInfo>>,
}

/// A window/memory release that waits for the last dev comm.
pub(crate) type Release = Box<dyn FnOnce(&CommShared) + Send>;

pub(crate) struct Deferred {
    pub(crate) live_dev_comms: usize,
    pub(crate) releases: Vec<Release>,
}

/// The state every handle of one communicator shares.
pub(crate) struct CommShared {
    pub(crate) nccl: Arc<LoadedNccl>,
    pub(crate) ranks: Vec<LocalRank>,
    pub(crate) n_ranks: i32,
    pub(crate) nonblocking: bool,
    pub(crate) timeout: Duration,
    pub(crate) peers: Option<Vec<PeerInfo>>,
    aborted: AtomicBool,
    destroyed: AtomicBool,
    /// Serialises calls into NCCL on these communicators (NCCL forbids concurrent use).
    op: Mutex<()>,
    pub(crate) deferred: Mutex<Deferred>,
}

// SAFETY: the raw communicators are only used under `op` (or with exclusive access in
// `Drop`), NCCL communicators may be used from any thread, and `CudaContext` is Send +
// Sync.
unsafe impl Send for CommShared {}
// SAFETY: as above: shared access is serialised by `op`.
unsafe impl Sync for CommShared {}

/// A NCCL communicator: every rank of it that lives in this process.
#[derive(Clone)]
pub struct Communicator {
    pub(crate) shared: Arc<CommShared>,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("ranks", &self.shared.ranks)
            .field("n_ranks", &self.shared.n_ranks)
            .finish_non_exhaustive()
    }
}

/// Sets `NCCL_NVLS_ENABLE=0` unless the user set it: NVLink multicast (NVLS) must stay
/// off on shared machines, and cudajit never uses multimem.
pub(crate) fn disable_nvls_unless_set() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            // Racy only against other threads reading the environment at this moment;
            // done once, before NCCL's first communicator reads it.
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
    });
}

/// The variable that bounds NCCL's non-blocking operations, in seconds.
pub const TIMEOUT_VARIABLE: &str = "CUDAJIT_NCCL_TIMEOUT_S";

/// `CUDAJIT_NCCL_TIMEOUT_S`, else [`DEFAULT_TIMEOUT`]; an error when it is not a number of
/// seconds above 0.
pub(crate) fn timeout_from_env() -> Result<Duration> {
    let timeout = cudajit_core::EnvVar::process(TIMEOUT_VARIABLE).seconds(None)?;
    Ok(timeout.unwrap_or(DEFAULT_TIMEOUT))
}

fn context(device: usize) -> Result<Arc<CudaContext>> {
    // SAFETY: only probes whether libcuda can be opened (cudarc panics otherwise).
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(NcclError::cuda(
            "loading the driver",
            "libcuda.so.1 is not installed (no NVIDIA driver on this machine)",
        ));
    }
    CudaContext::new(device).map_err(|e| NcclError::cuda(format!("context on GPU {device}"), e))
}

impl Communicator {
    /// One communicator over `devices`, all in this process (`ncclCommInitAll`).
    pub fn init_all(nccl: &Arc<LoadedNccl>, devices: &[usize]) -> Result<Communicator> {
        disable_nvls_unless_set();
        if devices.is_empty() {
            return Err(NcclError::InvalidArgument(
                "init_all needs at least one device".into(),
            ));
        }
        let ctxs = devices
            .iter()
            .map(|&d| context(d))
            .collect::<Result<Vec<_>>>()?;
        let list: Vec<c_int> = devices.iter().map(|&d| d as c_int).collect();
        let mut comms: Vec<ncclComm_t> = vec![std::ptr::null_mut(); devices.len()];
        let sys = nccl.sys();
        // SAFETY: `comms` has room for `list.len()` communicators; the device list is
        // valid for the call.
        let code =
            unsafe { (sys.comm_init_all)(comms.as_mut_ptr(), list.len() as c_int, list.as_ptr()) };
        // SAFETY: null communicator: only the global last error is read.
        unsafe { check(sys, "ncclCommInitAll", code, std::ptr::null_mut()) }?;
        let ranks = comms
            .into_iter()
            .zip(ctxs)
            .zip(devices)
            .enumerate()
            .map(|(i, ((comm, ctx), &device))| LocalRank {
                rank: i as i32,
                device,
                ctx,
                comm,
            })
            .collect();
        let peers = (0..devices.len())
            .map(|i| PeerInfo {
                rank: i as i32,
                host: host_name(),
                device: devices[i],
            })
            .collect();
        Ok(Communicator::new(
            nccl,
            ranks,
            devices.len() as i32,
            false,
            timeout_from_env()?,
            Some(peers),
        ))
    }

    /// This process's rank of a multi-process job (`ncclCommInitRankConfig`, non-blocking,
    /// so a peer that never arrives or dies is an error after `timeout`, not a hang).
    pub fn init_rank(nccl: &Arc<LoadedNccl>, params: InitRank) -> Result<Communicator> {
        disable_nvls_unless_set();
        if params.rank < 0 || params.rank >= params.n_ranks {
            return Err(NcclError::InvalidArgument(format!(
                "rank {} outside 0..{}",
                params.rank, params.n_ranks
            )));
        }
        let ctx = context(params.device)?;
        ctx.bind_to_thread()
            .map_err(|e| NcclError::cuda(format!("binding GPU {}", params.device), e))?;
        let mut config = (nccl.layouts().generation.config)(false, nccl.layouts().struct_version());
        let mut comm: ncclComm_t = std::ptr::null_mut();
        let sys = nccl.sys();
        // SAFETY: valid out-pointer; `config` is this release's ncclConfig_t (or an older,
        // self-describing one) and outlives the call.
        let code = unsafe {
            (sys.comm_init_rank_config)(
                &mut comm,
                params.n_ranks,
                params.unique_id.to_c(),
                params.rank,
                config.as_mut_ptr(),
            )
        };
        if code != ncclSuccess && code != ncclInProgress {
            // SAFETY: `comm` is null or the half-built communicator NCCL returned.
            let err = unsafe { check(sys, "ncclCommInitRankConfig", code, comm) };
            if !comm.is_null() {
                // SAFETY: NCCL handed back a communicator that must be aborted.
                unsafe { (sys.comm_abort)(comm) };
            }
            err?;
        }
        let rank = LocalRank {
            rank: params.rank,
            device: params.device,
            ctx,
            comm,
        };
        let c = Communicator::new(
            nccl,
            vec![rank],
            params.n_ranks,
            true,
            params.timeout,
            params.peers,
        );
        c.shared.wait("ncclCommInitRankConfig")?;
        Ok(c)
    }

    fn new(
        nccl: &Arc<LoadedNccl>,
        ranks: Vec<LocalRank>,
        n_ranks: i32,
        nonblocking: bool,
        timeout: Duration,
        peers: Option<Vec<PeerInfo>>,
    ) -> Communicator {
        Communicator {
            shared: Arc::new(CommShared {
                nccl: nccl.clone(),
                ranks,
                n_ranks,
                nonblocking,
                timeout,
                peers,
                aborted: AtomicBool::new(false),
                destroyed: AtomicBool::new(false),
                op: Mutex::new(()),
                deferred: Mutex::new(Deferred {
                    live_dev_comms: 0,
                    releases: Vec::new(),
                }),
            }),
        }
    }

    /// The ranks of this communicator that live in this process.
    pub fn local_ranks(&self) -> &[LocalRank] {
        &self.shared.ranks
    }

    /// Ranks in the communicator.
    pub fn n_ranks(&self) -> i32 {
        self.shared.n_ranks
    }

    /// The loaded NCCL.
    pub fn nccl(&self) -> &Arc<LoadedNccl> {
        &self.shared.nccl
    }

    /// Whether a timeout aborted the communicator (every later call fails).
    pub fn is_aborted(&self) -> bool {
        self.shared.aborted.load(Ordering::SeqCst)
    }

    /// The CUDA context of local rank `i` (to launch kernels or copy memory).
    pub fn context(&self, i: usize) -> Option<&Arc<CudaContext>> {
        self.shared.ranks.get(i).map(|r| &r.ctx)
    }

    /// Finalizes and destroys the communicator now, returning any error. Fails with
    /// `InvalidArgument` while buffers or dev comms still use it.
    pub fn close(self) -> Result<()> {
        match Arc::try_unwrap(self.shared) {
            Ok(shared) => shared.teardown(),
            Err(shared) => Err(NcclError::InvalidArgument(format!(
                "communicator still used by {} buffers/dev comms; drop them first",
                Arc::strong_count(&shared) - 1
            ))),
        }
    }
}

impl CommShared {
    /// Serialises a sequence of NCCL calls.
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, ()>> {
        if self.aborted.load(Ordering::SeqCst) {
            return Err(NcclError::InvalidArgument(
                "the communicator was aborted after an earlier failure; create a new one".into(),
            ));
        }
        Ok(self.op.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The call lock for teardown paths, which run even after an abort.
    pub(crate) fn op_lock_for_teardown(&self) -> MutexGuard<'_, ()> {
        self.op.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    /// Binds local rank `r`'s context to this thread (NCCL uses the current device).
    pub(crate) fn bind(&self, r: &LocalRank) -> Result<()> {
        r.ctx
            .bind_to_thread()
            .map_err(|e| NcclError::cuda(format!("binding GPU {}", r.device), e))
    }

    /// Runs `call` for every local rank inside one NCCL group, then waits for
    /// completion. The first failure wins; the group is always closed.
    pub(crate) fn grouped(
        &self,
        function: &'static str,
        mut call: impl FnMut(usize, &LocalRank) -> ncclResult_t,
    ) -> Result<()> {
        let sys = self.nccl.sys();
        // SAFETY: ncclGroupStart has no preconditions.
        unsafe {
            check(
                sys,
                "ncclGroupStart",
                (sys.group_start)(),
                std::ptr::null_mut(),
            )
        }?;
        let mut first: Result<()> = Ok(());
        for (i, r) in self.ranks.iter().enumerate() {
            if let Err(e) = self.bind(r) {
                first = first.and(Err(e));
                continue;
            }
            let code = call(i, r);
            if code != ncclSuccess && code != ncclInProgress {
                // SAFETY: `r.comm` is live (not aborted: checked by `lock`).
                first = first.and(unsafe { check(sys, function, code, r.comm) });
            }
        }
        // SAFETY: closes the group opened above.
        let end = unsafe { (sys.group_end)() };
        if end != ncclSuccess && end != ncclInProgress {
            let comm = self.ranks.first().map_or(std::ptr::null_mut(), |r| r.comm);
            // SAFETY: a live communicator (or null) for the last-error text.
            first = first.and(unsafe { check(sys, "ncclGroupEnd", end, comm) });
        }
        first?;
        self.wait(function)
    }

    /// For non-blocking communicators: polls `ncclCommGetAsyncError` until every local
    /// communicator is idle; after `timeout` aborts them and fails.
    pub(crate) fn wait(&self, operation: &'static str) -> Result<()> {
        if !self.nonblocking {
            return Ok(());
        }
        let sys = self.nccl.sys();
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_micros(50);
        for r in &self.ranks {
            loop {
                let mut state: ncclResult_t = ncclInProgress;
                // SAFETY: a live communicator and a valid out-pointer.
                let code = unsafe { (sys.comm_get_async_error)(r.comm, &mut state) };
                // SAFETY: as above.
                unsafe { check(sys, "ncclCommGetAsyncError", code, r.comm) }?;
                if state == ncclSuccess {
                    break;
                }
                if state != ncclInProgress {
                    // SAFETY: as above.
                    let err = unsafe { check(sys, operation, state, r.comm) };
                    self.abort_all();
                    return err;
                }
                if Instant::now() >= deadline {
                    self.abort_all();
                    return Err(NcclError::Timeout {
                        operation: operation.to_owned(),
                        after: self.timeout,
                    });
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
        }
        Ok(())
    }

    /// `ncclCommAbort` on every local communicator; afterwards no call may use them.
    pub(crate) fn abort_all(&self) {
        if self.aborted.swap(true, Ordering::SeqCst) {
            return;
        }
        let sys = self.nccl.sys();
        for r in &self.ranks {
            // SAFETY: live communicator, never used again (aborted flag).
            let code = unsafe { (sys.comm_abort)(r.comm) };
            if code != ncclSuccess {
                tracing::warn!(rank = r.rank, code, "ncclCommAbort failed");
            }
        }
        tracing::warn!(ranks = self.ranks.len(), "NCCL communicator aborted");
    }

    /// Runs deferred releases, then finalizes (in one group) and destroys every local
    /// communicator.
    fn teardown(&self) -> Result<()> {
        if self.destroyed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let releases = std::mem::take(
            &mut self
                .deferred
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .releases,
        );
        for release in releases {
            release(self);
        }
        if self.is_aborted() {
            return Ok(()); // ncclCommAbort already freed the communicators
        }
        let sys = self.nccl.sys();
        // SAFETY: live communicators; finalize flushes outstanding work collectively.
        let finalized = self.grouped("ncclCommFinalize", |_, r| unsafe {
            (sys.comm_finalize)(r.comm)
        });
        if let Err(e) = finalized {
            if self.is_aborted() {
                return Err(e);
            }
            self.abort_all();
            return Err(e);
        }
        let mut first = Ok(());
        for r in &self.ranks {
            let _ = self.bind(r);
            // SAFETY: finalized communicator, destroyed once (`destroyed` flag).
            let code = unsafe { (sys.comm_destroy)(r.comm) };
            // SAFETY: null communicator: the global last error.
            first = first.and(unsafe { check(sys, "ncclCommDestroy", code, std::ptr::null_mut()) });
        }
        first
    }
}

impl Drop for CommShared {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            tracing::warn!(error = %e, "NCCL communicator teardown failed");
        }
    }
}
