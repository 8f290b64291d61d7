//! The generic and asynchronous proxies: threads' stores to shared memory reach the
//! tensor cores (`wgmma`) and TMA stores, which read through the asynchronous proxy, only
//! after the writing thread's `fence.proxy.async` (PTX ISA, "Proxies"). A `sync_threads()`
//! does not order the two proxies.
//!
//! For kernels that read shared memory through the asynchronous proxy (which
//! `program::uses::reads_through_async_proxy` tells), each shared byte
//! remembers the thread that last stored it and how many proxy fences that thread had
//! issued; an asynchronous read of a byte whose writer has issued none since is reported.
//! Copies that land through `cp.async` and TMA loads are not counted as such stores.

use super::AccessFault;

/// The proxy state of a block's shared memory.
#[derive(Debug, Default)]
pub(crate) struct ProxyWrites {
    /// Whether stores are tracked (the kernel reads through the asynchronous proxy).
    pub enabled: bool,
    /// Per byte: the last storing thread + 1 (0: none) in the high half, that thread's
    /// fence count at the store in the low half.
    writes: Vec<u64>,
    /// Per thread: `fence.proxy.async`s issued.
    fences: Vec<u32>,
}

impl ProxyWrites {
    pub(crate) fn start_block(&mut self, shared_bytes: usize) {
        if self.enabled {
            self.writes.clear();
            self.writes.resize(shared_bytes, 0);
            self.fences.clear();
        }
    }

    fn fences_of(&self, thread: u32) -> u32 {
        self.fences.get(thread as usize).copied().unwrap_or(0)
    }

    /// A store of `size` bytes at `at` by `thread` through the generic proxy.
    #[inline]
    pub(crate) fn store(&mut self, at: usize, size: u32, thread: u32) {
        if !self.enabled {
            return;
        }
        let mark = (u64::from(thread + 1) << 32) | u64::from(self.fences_of(thread));
        for byte in &mut self.writes[at..at + size as usize] {
            *byte = mark;
        }
    }

    /// `fence.proxy.async` by `thread`.
    pub(crate) fn fence(&mut self, thread: u32) {
        if !self.enabled {
            return;
        }
        let index = thread as usize;
        if self.fences.len() <= index {
            self.fences.resize(index + 1, 0);
        }
        self.fences[index] = self.fences[index].wrapping_add(1);
    }

    /// Whether the asynchronous proxy may read `size` bytes at `at`.
    pub(crate) fn check(&self, at: usize, size: u32) -> Result<(), AccessFault> {
        if !self.enabled {
            return Ok(());
        }
        for byte in at..at + size as usize {
            let mark = self.writes[byte];
            let writer = (mark >> 32) as u32;
            if writer != 0 && self.fences_of(writer - 1) == mark as u32 {
                return Err(AccessFault::Unfenced {
                    offset: byte as u64,
                    writer: writer - 1,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_visible_to_the_async_proxy_after_its_writers_fence() {
        let mut proxy = ProxyWrites {
            enabled: true,
            ..ProxyWrites::default()
        };
        proxy.start_block(64);
        proxy.store(16, 4, 3);
        assert_eq!(
            proxy.check(16, 16),
            Err(AccessFault::Unfenced {
                offset: 16,
                writer: 3
            })
        );
        // Another thread's fence does not order thread 3's store.
        proxy.fence(2);
        assert!(proxy.check(18, 1).is_err());
        proxy.fence(3);
        assert!(proxy.check(0, 64).is_ok());
        proxy.store(16, 4, 3);
        assert!(proxy.check(16, 4).is_err());
    }
}
