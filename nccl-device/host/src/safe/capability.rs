//! Whether the NCCL device API can work on a communicator, asked before
//! `ncclDevCommCreate` so a refusal names its reason.
//!
//! 2.29+: `ncclCommQueryProperties` reports `deviceApiSupport` per rank. 2.28 has no
//! query; its preconditions (from NCCL's sources) are checked directly: at least two
//! ranks on this host, peer access between every pair of their GPUs, and cuMem (virtual
//! memory management) on each.

use cudarc::driver::sys::{self as cu, CUdevice_attribute};

use crate::error::{NcclError, Result};
use crate::result::check;
use crate::safe::communicator::Communicator;
use crate::sys::layout::CommProperties;

/// The answer of [`Communicator::device_api_status`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceApiStatus {
    /// `ncclDevCommCreate` is expected to work.
    Usable,
    /// It is not; the reason says which precondition fails.
    Unusable(String),
}

impl DeviceApiStatus {
    /// `Ok(())` when usable, else [`NcclError::DeviceApiUnavailable`].
    pub fn into_result(self) -> Result<()> {
        match self {
            DeviceApiStatus::Usable => Ok(()),
            DeviceApiStatus::Unusable(reason) => Err(NcclError::DeviceApiUnavailable { reason }),
        }
    }
}

impl Communicator {
    /// `ncclCommQueryProperties` for every local rank (NCCL 2.29+), or `None` on 2.28.
    pub fn properties(&self) -> Result<Option<Vec<CommProperties>>> {
        let shared = &self.shared;
        let nccl = &shared.nccl;
        let (Some(query), Some(ops)) = (
            nccl.sys().comm_query_properties,
            nccl.layouts().generation.properties,
        ) else {
            return Ok(None);
        };
        let _op = shared.lock()?;
        let mut all = Vec::new();
        for r in &shared.ranks {
            let mut raw = (ops.init)(nccl.layouts().struct_version());
            // SAFETY: a live communicator; `raw` is a ncclCommProperties initialised as
            // the headers' NCCL_COMM_PROPERTIES_INITIALIZER (size/magic/version set).
            let code = unsafe { query(r.comm, raw.as_mut_ptr()) };
            // SAFETY: as above.
            unsafe { check(nccl.sys(), "ncclCommQueryProperties", code, r.comm) }?;
            all.push((ops.read)(&raw));
        }
        Ok(Some(all))
    }

    /// Whether the device API is usable on this communicator, and if not, why.
    pub fn device_api_status(&self) -> Result<DeviceApiStatus> {
        if let Some(props) = self.properties()? {
            for (p, r) in props.iter().zip(self.local_ranks()) {
                if !p.device_api_support {
                    return Ok(DeviceApiStatus::Unusable(format!(
                        "ncclCommQueryProperties reports deviceApiSupport = false for rank {} on GPU {} \
                         (NCCL {}: the device API needs GPUs connected by NVLink or PCIe peer access, and cuMem)",
                        r.rank,
                        r.device,
                        self.nccl().version()
                    )));
                }
            }
            return Ok(DeviceApiStatus::Usable);
        }
        self.status_2_28()
    }

    fn status_2_28(&self) -> Result<DeviceApiStatus> {
        let version = self.nccl().version();
        let host = super::host_name();
        let devices: Vec<usize> = match &self.shared.peers {
            Some(peers) => peers
                .iter()
                .filter(|p| p.host == host)
                .map(|p| p.device)
                .collect(),
            None => {
                tracing::warn!("no peer table: counting only this process's ranks as local");
                self.local_ranks().iter().map(|r| r.device).collect()
            }
        };
        if devices.len() < 2 {
            return Ok(DeviceApiStatus::Unusable(format!(
                "NCCL {version} offers the device API only with at least 2 ranks on one host; this \
                 communicator has {} here",
                devices.len()
            )));
        }
        let _op = self.shared.lock()?;
        for &d in &devices {
            let vmm = attribute(
                d,
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
            )?;
            if vmm == 0 {
                return Ok(DeviceApiStatus::Unusable(format!(
                    "GPU {d} does not support cuMem (virtual memory management), which NCCL {version}'s device API needs"
                )));
            }
            for &e in &devices {
                if d != e && !can_access_peer(d, e)? {
                    return Ok(DeviceApiStatus::Unusable(format!(
                        "GPU {d} cannot access GPU {e} as a peer; NCCL {version}'s device API needs peer access between all local GPUs"
                    )));
                }
            }
        }
        Ok(DeviceApiStatus::Usable)
    }
}

fn device(ordinal: usize) -> Result<cu::CUdevice> {
    let mut dev: cu::CUdevice = 0;
    // SAFETY: the driver is loaded (a communicator exists, so contexts were created);
    // valid out-pointer.
    let code = unsafe { cu::cuDeviceGet(&mut dev, ordinal as i32) };
    code.result()
        .map_err(|e| NcclError::cuda(format!("cuDeviceGet({ordinal})"), e))?;
    Ok(dev)
}

fn attribute(ordinal: usize, attr: CUdevice_attribute) -> Result<i32> {
    let dev = device(ordinal)?;
    let mut v = 0;
    // SAFETY: a valid device and out-pointer.
    let code = unsafe { cu::cuDeviceGetAttribute(&mut v, attr, dev) };
    code.result()
        .map_err(|e| NcclError::cuda(format!("cuDeviceGetAttribute on GPU {ordinal}"), e))?;
    Ok(v)
}

fn can_access_peer(a: usize, b: usize) -> Result<bool> {
    let (da, db) = (device(a)?, device(b)?);
    let mut v = 0;
    // SAFETY: valid devices and out-pointer.
    let code = unsafe { cu::cuDeviceCanAccessPeer(&mut v, da, db) };
    code.result()
        .map_err(|e| NcclError::cuda(format!("cuDeviceCanAccessPeer({a}, {b})"), e))?;
    Ok(v != 0)
}
