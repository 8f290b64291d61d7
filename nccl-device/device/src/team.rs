//! Teams: sets of ranks with a stride, as NCCL's `ncclTeam` (`{nRanks, rank, stride}`),
//! and the conversions between a team's ranks and world or LSA ranks.
//!
//! The functions are `#[device]` functions over the communicator's ranks, the same
//! arithmetic as NCCL's inline `ncclTeam*` functions in `nccl_device/core.h`, so they
//! inline into the kernel like any other device function (nothing is linked for them).
//!
//! ```no_run
//! use cudajit::nccl::device::{self as nccl, DevComm, Window};
//! use cudajit::prelude::*;
//!
//! /// Reads element `i` of the next LSA peer's window, naming the peer by its LSA team rank.
//! #[kernel]
//! fn next_peer(comm: DevComm, window: Window, out: &mut [f32]) {
//!     let lsa = nccl::team_lsa(&comm);
//!     let peer = (lsa.rank + 1) % lsa.nranks;
//!     let n = out.len();
//!     let src = unsafe { slice_at::<f32>(nccl::team_peer_address(&comm, window, 0, lsa, peer), n) };
//!     let i = global_index();
//!     if i < n {
//!         out[i] = src[i];
//!     }
//! }
//! # fn main() {}
//! ```

use super::{lsa_address, lsa_rank, lsa_size, nranks, rank, DevComm, Window};
use cudajit::{device, DeviceCopy};

/// A team of ranks: `nranks` ranks, this rank being number `rank`, consecutive team ranks
/// `stride` world ranks apart (NCCL's `ncclTeam`, same layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct Team {
    /// Ranks in the team.
    pub nranks: i32,
    /// This rank's number in the team.
    pub rank: i32,
    /// World ranks between consecutive team ranks.
    pub stride: i32,
}

/// Every rank of the communicator (`ncclTeamWorld`).
#[device]
pub fn team_world(comm: &DevComm) -> Team {
    Team {
        nranks: nranks(comm),
        rank: rank(comm),
        stride: 1,
    }
}

/// The ranks this GPU reaches by load/store (`ncclTeamLsa`).
#[device]
pub fn team_lsa(comm: &DevComm) -> Team {
    Team {
        nranks: lsa_size(comm),
        rank: lsa_rank(comm),
        stride: 1,
    }
}

/// The ranks with this rank's LSA rank in every LSA team: one per node on a rail
/// (`ncclTeamRail`).
#[device]
pub fn team_rail(comm: &DevComm) -> Team {
    let lsa = lsa_size(comm);
    Team {
        nranks: nranks(comm) / lsa,
        rank: rank(comm) / lsa,
        stride: lsa,
    }
}

/// The world rank of rank `team_rank` of `team` (`ncclTeamRankToWorld`).
#[device]
pub fn team_rank_to_world(comm: &DevComm, team: Team, team_rank: i32) -> i32 {
    rank(comm) + (team_rank - team.rank) * team.stride
}

/// The LSA rank of rank `team_rank` of `team`, which must be in this rank's LSA team
/// (`ncclTeamRankToLsa`).
#[device]
pub fn team_rank_to_lsa(comm: &DevComm, team: Team, team_rank: i32) -> i32 {
    lsa_rank(comm) + (team_rank - team.rank) * team.stride
}

/// Whether rank `b_rank` of team `b` is a rank of team `a` (`ncclTeamRankIsMember`).
#[device]
pub fn team_rank_is_member(a: Team, b: Team, b_rank: i32) -> bool {
    let world_delta = (b_rank - b.rank) * b.stride;
    let a_rank = a.rank + world_delta / a.stride;
    0 <= a_rank && a_rank < a.nranks && world_delta % a.stride == 0
}

/// The rank in team `a` of rank `b_rank` of team `b`, which must be a member of `a`
/// (`ncclTeamRankToTeam`).
#[device]
pub fn team_rank_to_team(a: Team, b: Team, b_rank: i32) -> i32 {
    a.rank + (b_rank - b.rank) * b.stride / a.stride
}

/// The team of `inner_size` consecutive ranks of `parent` that holds this rank
/// (`ncclTeamInnerFactor`).
#[device]
pub fn team_inner_factor(parent: Team, inner_size: i32) -> Team {
    Team {
        nranks: inner_size,
        rank: parent.rank % inner_size,
        stride: parent.stride,
    }
}

/// The team of the ranks of `parent` with this rank's position in its inner team of
/// `inner_size` (`ncclTeamOuterFactor`).
#[device]
pub fn team_outer_factor(parent: Team, inner_size: i32) -> Team {
    Team {
        nranks: parent.nranks / inner_size,
        rank: parent.rank / inner_size,
        stride: parent.stride * inner_size,
    }
}

/// The address of byte `offset` of `window` at rank `peer` of `team`, which must be in
/// this rank's LSA team (`ncclGetPeerPointer` with a team): read or write it through
/// `slice_at`/`slice_at_mut`.
#[device]
pub fn team_peer_address(
    comm: &DevComm,
    window: Window,
    offset: usize,
    team: Team,
    peer: i32,
) -> usize {
    lsa_address(window, offset, team_rank_to_lsa(comm, team, peer))
}
