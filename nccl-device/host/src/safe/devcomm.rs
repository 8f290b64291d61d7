//! Device communicators: `ncclDevCommCreate` for every local rank in one group, the
//! opaque `ncclDevComm` kept in host memory so kernels can take it by value.

use std::ffi::c_int;
use std::sync::Arc;

use crate::error::{NcclError, Result};
use crate::safe::communicator::{CommShared, Communicator};
use crate::sys::layout::{DevCommLayout, RawStruct, RequirementField};

/// What a device communicator must provide (`ncclDevCommRequirements`, typed). Counts
/// left at zero are not requested; a non-zero count the loaded release has no field for
/// is an error, not silently dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DevCommRequirements {
    /// LSA barriers: one per CTA that synchronises (`lsaBarrierCount >= gridDim.x`).
    pub lsa_barrier_count: u32,
    /// World barriers (`barrierCount`, 2.28.9+).
    pub barrier_count: u32,
    /// Rail GIN barriers (2.28.9+).
    pub rail_gin_barrier_count: u32,
    /// World GIN barriers (2.30+).
    pub world_gin_barrier_count: u32,
    /// GIN contexts (a hint; the header default when `None`).
    pub gin_context_count: Option<u32>,
    /// GIN signals (2.28.9+).
    pub gin_signal_count: u32,
    /// GIN counters (2.28.9+).
    pub gin_counter_count: u32,
}

impl DevCommRequirements {
    /// Requirements with `n` LSA barriers and nothing else.
    pub fn lsa_barriers(n: u32) -> Self {
        DevCommRequirements {
            lsa_barrier_count: n,
            ..Self::default()
        }
    }

    /// The fields to set, as `(field, value)`.
    pub(crate) fn fields(&self) -> Result<Vec<(RequirementField, c_int)>> {
        let mut out = Vec::new();
        let mut push = |field: RequirementField, value: u32, always: bool| -> Result<()> {
            if value == 0 && !always {
                return Ok(());
            }
            let v = c_int::try_from(value).map_err(|_| {
                NcclError::InvalidArgument(format!("{} = {value} exceeds a C int", field.c_name()))
            })?;
            out.push((field, v));
            Ok(())
        };
        push(
            RequirementField::LsaBarrierCount,
            self.lsa_barrier_count,
            false,
        )?;
        push(RequirementField::BarrierCount, self.barrier_count, false)?;
        push(
            RequirementField::RailGinBarrierCount,
            self.rail_gin_barrier_count,
            false,
        )?;
        push(
            RequirementField::WorldGinBarrierCount,
            self.world_gin_barrier_count,
            false,
        )?;
        if let Some(n) = self.gin_context_count {
            push(RequirementField::GinContextCount, n, true)?;
        }
        push(
            RequirementField::GinSignalCount,
            self.gin_signal_count,
            false,
        )?;
        push(
            RequirementField::GinCounterCount,
            self.gin_counter_count,
            false,
        )?;
        Ok(out)
    }
}

/// Slack beyond the probed `sizeof(ncclDevComm)`: NCCL writes the struct of its own
/// build, and a wrong size must never become a heap overflow.
const STORAGE_SLACK: usize = 1024;

/// One `ncclDevComm` per local rank, destroyed (in one group) before any window or
/// memory of the communicator is released.
pub struct DevComm {
    comm: Arc<CommShared>,
    /// Unique in the process; kernel arguments carry it (`cudajit::nccl::device::DevComm`).
    serial: u64,
    /// What launches of kernels taking it agree through; alive as long as it is.
    _agreement: Arc<crate::safe::agreement::Agreement>,
    parts: Vec<RawStruct>,
    layout: DevCommLayout,
    requirements: DevCommRequirements,
}

impl std::fmt::Debug for DevComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevComm")
            .field("layout", &self.layout)
            .field("serial", &self.serial)
            .field("requirements", &self.requirements)
            .field("ranks", &self.parts.len())
            .finish_non_exhaustive()
    }
}

impl Communicator {
    /// Creates a device communicator on every local rank. Checks first that the device
    /// API is usable ([`Communicator::device_api_status`]) and that this release's
    /// layouts were generated, so failures name their reason instead of NCCL's generic
    /// error.
    pub fn create_dev_comm(&self, requirements: &DevCommRequirements) -> Result<DevComm> {
        let shared = &self.shared;
        let nccl = &shared.nccl;
        let generation = nccl.layouts().exact("ncclDevComm")?;
        self.device_api_status()?.into_result()?;
        let fields = requirements.fields()?;
        let reqs = (generation.requirements)(&fields, nccl.version().code()).map_err(|field| {
            NcclError::UnsupportedRequirement {
                version: nccl.version(),
                field: field.c_name(),
            }
        })?;
        let layout = generation.dev_comm;
        let _op = shared.lock()?;
        let mut parts: Vec<RawStruct> = (0..shared.ranks.len())
            .map(|_| RawStruct::zeroed(layout.size + STORAGE_SLACK))
            .collect();
        let sys = nccl.sys();
        let outs: Vec<*mut std::ffi::c_void> =
            parts.iter_mut().map(RawStruct::as_mut_ptr).collect();
        let created = shared.grouped("ncclDevCommCreate", |i, r| {
            // SAFETY: `reqs` is this release's ncclDevCommRequirements; `outs[i]` has room
            // for its ncclDevComm (plus slack) and outlives the group.
            unsafe { (sys.dev_comm_create)(r.comm, reqs.as_ptr(), outs[i]) }
        });
        if let Err(e) = created {
            // Destroy whichever were created (a non-zero struct), unless aborted.
            if !shared.is_aborted() {
                let _ = shared.grouped("ncclDevCommDestroy", |i, r| {
                    if parts[i].bytes().iter().all(|&b| b == 0) {
                        return crate::sys::ncclSuccess;
                    }
                    // SAFETY: a dev comm NCCL filled in for this communicator.
                    unsafe { (sys.dev_comm_destroy)(r.comm, parts[i].as_ptr()) }
                });
            }
            return Err(e);
        }
        shared
            .deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .live_dev_comms += 1;
        let (serial, agreement) = crate::safe::agreement::register(shared);
        Ok(DevComm {
            comm: shared.clone(),
            serial,
            _agreement: agreement,
            parts,
            layout,
            requirements: *requirements,
        })
    }
}

impl DevComm {
    /// `sizeof`/`alignof` and field offsets of this release's `ncclDevComm`.
    pub fn layout(&self) -> DevCommLayout {
        self.layout
    }

    /// A number no other device communicator of this process has (never 0): kernel
    /// arguments built from it carry it, so launches find their agreement state
    /// ([`crate::safe::agreement::agree_on_launch`]).
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The LSA barriers it has (one per CTA of the kernels that synchronise through
    /// them, barrier index `blockIdx.x`): what it was created with.
    pub fn lsa_barrier_count(&self) -> u32 {
        self.requirements.lsa_barrier_count
    }

    /// Local ranks it covers.
    pub fn local_ranks(&self) -> usize {
        self.parts.len()
    }

    /// The requirements it was created with.
    pub fn requirements(&self) -> &DevCommRequirements {
        &self.requirements
    }

    /// Local rank `i`'s `ncclDevComm`, exactly `layout().size` bytes, to pass to a
    /// kernel by value (copy them into an argument aligned to `layout().align`).
    pub fn as_bytes(&self, i: usize) -> Option<&[u8]> {
        self.parts.get(i).map(|p| &p.bytes()[..self.layout.size])
    }

    fn int_at(&self, i: usize, offset: usize) -> Option<i32> {
        let b = self.as_bytes(i)?.get(offset..offset + 4)?;
        Some(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Local rank `i`'s rank as the dev comm records it.
    pub fn rank(&self, i: usize) -> Option<i32> {
        self.int_at(i, self.layout.rank)
    }

    /// The communicator size the dev comm records.
    pub fn n_ranks(&self, i: usize) -> Option<i32> {
        self.int_at(i, self.layout.n_ranks)
    }

    /// Local rank `i`'s rank within its LSA team (GPUs reachable by load/store).
    pub fn lsa_rank(&self, i: usize) -> Option<i32> {
        self.int_at(i, self.layout.lsa_rank)
    }

    /// The size of local rank `i`'s LSA team.
    pub fn lsa_size(&self, i: usize) -> Option<i32> {
        self.int_at(i, self.layout.lsa_size)
    }

    /// Destroys the dev comms now, returning any error.
    pub fn close(mut self) -> Result<()> {
        self.destroy()
    }

    fn destroy(&mut self) -> Result<()> {
        if self.parts.is_empty() {
            return Ok(());
        }
        let parts = std::mem::take(&mut self.parts);
        let comm = &self.comm;
        let result = if comm.is_aborted() {
            Ok(())
        } else {
            let _op = comm.op_lock_for_teardown();
            let sys = comm.nccl.sys();
            comm.grouped("ncclDevCommDestroy", |i, r| {
                // SAFETY: the dev comm created for this communicator, destroyed once.
                unsafe { (sys.dev_comm_destroy)(r.comm, parts[i].as_ptr()) }
            })
        };
        // The last dev comm gone: run the window releases that waited for it.
        let releases = {
            let mut d = comm.deferred.lock().unwrap_or_else(|p| p.into_inner());
            d.live_dev_comms -= 1;
            if d.live_dev_comms == 0 {
                std::mem::take(&mut d.releases)
            } else {
                Vec::new()
            }
        };
        if !releases.is_empty() {
            let _op = comm.op_lock_for_teardown();
            for release in releases {
                release(comm);
            }
        }
        result
    }
}

impl Drop for DevComm {
    fn drop(&mut self) {
        if let Err(e) = self.destroy() {
            tracing::warn!(error = %e, "destroying a device communicator failed");
        }
    }
}
