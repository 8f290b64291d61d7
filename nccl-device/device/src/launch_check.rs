//! The host-side checks of a launch that takes a [`DevComm`]: the grid against the device
//! communicator's LSA barriers ([`check_lsa_barriers`]), and at the first launch of a
//! specialisation the agreement of every rank on the kernel
//! ([`cudajit_nccl::safe::agreement`]).

use cudajit_nccl::safe::agreement::{agree_on_launch, LaunchIdentity};

use super::{lsa_barrier_init, lsa_session_init, DevComm};
use cudajit::LaunchInfo;

/// Memo keys (top bit set: no token key has it) caching whether a kernel calls
/// [`lsa_barrier_init`].
const USES_BARRIERS: u64 = 1 << 63 | 1;
const USES_NO_BARRIERS: u64 = 1 << 63 | 2;

/// Whether the kernel of `launch` reaches [`lsa_barrier_init`] (memoised per loaded kernel).
fn uses_lsa_barriers(launch: &LaunchInfo<'_>) -> bool {
    if launch.memo.contains(USES_BARRIERS) {
        return true;
    }
    if launch.memo.contains(USES_NO_BARRIERS) {
        return false;
    }
    // The CTA session's start, in either form (`[u64; 8]` or `LsaBarrierSession`).
    let starts = [
        <lsa_barrier_init as cudajit::__private::DeviceFunction>::CAPTURED,
        <lsa_session_init as cudajit::__private::DeviceFunction>::CAPTURED,
    ];
    let uses = launch.captured.reachable().iter().any(|f| {
        starts
            .iter()
            .any(|init| f.name == init.name && f.source_hash == init.source_hash)
    });
    launch.memo.insert(if uses {
        USES_BARRIERS
    } else {
        USES_NO_BARRIERS
    });
    uses
}

/// The grid of `launch` against a device communicator with `lsa_barriers` LSA barriers:
/// every CTA needs its own (barrier index `block_idx().x`).
pub fn check_lsa_barriers(launch: &LaunchInfo<'_>, lsa_barriers: u32) -> Result<(), String> {
    let ctas = launch.ctas();
    if ctas <= lsa_barriers as u64 {
        return Ok(());
    }
    let (x, y, z) = launch.grid;
    Err(format!(
        "the grid has {ctas} CTAs ({x}x{y}x{z}) but the device communicator has {lsa_barriers} \
         LSA barriers, one per CTA (barrier index block_idx().x); the kernel would \
         synchronise CTAs on barriers they share and hang. Create the device communicator \
         with DevCommRequirements::lsa_barriers({ctas}), or launch at most {lsa_barriers} CTAs"
    ))
}

/// [`DevComm`]'s launch check: barriers against the grid on every launch; agreement of
/// the ranks on the kernel at its first launch per device communicator and local rank
/// (then a lock-free memo lookup).
pub(super) fn dev_comm_launch_check(comm: &DevComm, launch: &LaunchInfo<'_>) -> Result<(), String> {
    let Some(token) = comm.token() else {
        return Ok(());
    };
    if uses_lsa_barriers(launch) {
        check_lsa_barriers(launch, token.lsa_barriers)?;
    }
    let key = token.memo_key();
    if launch.memo.contains(key) {
        return Ok(());
    }
    let identity = LaunchIdentity::new(*launch.identity, launch.description);
    // The exchange allocates and waits on a stream of its own: allowed even while this
    // thread captures a CUDA Graph (the first launch may happen inside one).
    cudajit::__runtime::relaxed_capture(|| agree_on_launch(token.serial, token.local, &identity))
        .map_err(|e| e.to_string())?;
    launch.memo.insert(key);
    Ok(())
}
