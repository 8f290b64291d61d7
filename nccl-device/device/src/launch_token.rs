//! The launch token: the host-side identity of a [`DevComm`] kernel argument (device
//! communicator, local rank, LSA barrier count), packed into the word past the NCCL
//! struct so that a launch can check the grid and agree with the other ranks.
//!
//! [`DevComm`]: super::DevComm

use super::DEV_COMM_CAPACITY;

/// Where the [`LaunchToken`] lives in a [`DevComm`](super::DevComm): its last word.
pub(super) const TOKEN_OFFSET: usize = DEV_COMM_CAPACITY - 8;

/// The tag in the low byte of an encoded [`LaunchToken`].
const TOKEN_TAG: u64 = 0xA7;

/// The host-side identity of a [`DevComm`](super::DevComm) kernel argument, packed into
/// the 8 bytes past the NCCL struct: tag (8 bits), local rank index (8), LSA barrier count
/// (24, clamped), device communicator serial (24). Device code never reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchToken {
    /// [`cudajit_nccl::DevComm::serial`] of the device communicator.
    pub serial: u64,
    /// The local rank index (`DevComm::for_rank`'s `index`).
    pub local: usize,
    /// Its LSA barrier count (clamped to 2^24 - 1).
    pub lsa_barriers: u32,
}

impl LaunchToken {
    /// The largest barrier count a token records; larger counts record as this.
    pub const MAX_BARRIERS: u32 = (1 << 24) - 1;

    /// The packed word; `None` when the serial or the local index does not fit (more
    /// than 2^24 - 1 device communicators in the process, or 256 local ranks).
    pub fn encode(&self) -> Option<u64> {
        if self.serial == 0 || self.serial >= 1 << 24 || self.local > 0xFF {
            return None;
        }
        let barriers = self.lsa_barriers.min(Self::MAX_BARRIERS) as u64;
        Some(TOKEN_TAG | (self.local as u64) << 8 | barriers << 16 | self.serial << 40)
    }

    /// The token of a packed word; `None` without the tag (a `DevComm` built from bytes).
    pub fn decode(word: u64) -> Option<Self> {
        let serial = word >> 40;
        if word & 0xFF != TOKEN_TAG || serial == 0 {
            return None;
        }
        Some(LaunchToken {
            serial,
            local: ((word >> 8) & 0xFF) as usize,
            lsa_barriers: ((word >> 16) & 0xFF_FFFF) as u32,
        })
    }

    /// The key a launch remembers agreement under (with the kernel's specialisation and
    /// GPU, which the memo belongs to).
    pub(super) fn memo_key(&self) -> u64 {
        self.serial << 8 | self.local as u64
    }
}
