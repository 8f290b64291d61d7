//! Which swizzle TMA wrote shared memory with, per 16-byte chunk, so that a `wgmma` reading
//! a tile through a descriptor of another layout is reported instead of multiplying
//! scrambled data. A TMA load records its map's swizzle over its box as it lands; any other
//! write (a thread's store, a `cp.async`, another block's `st.shared::cluster`) forgets it.
//!
//! On a GPU the mismatch is silent: the tensor cores read the bytes where the
//! descriptor's swizzle says they are, and the product is wrong.

/// Bytes per tracked chunk: the unit every swizzle permutes.
const CHUNK: usize = 16;

/// The swizzle of the last TMA write of each 16-byte chunk of a block's shared memory.
#[derive(Debug, Default)]
pub(crate) struct TmaSwizzles {
    /// Whether writes are tracked (the kernel runs `wgmma`).
    pub enabled: bool,
    /// Per chunk: 0 when no TMA load wrote it last, else 1 + the swizzle's code
    /// ([`code`]).
    chunks: Vec<u8>,
}

/// The code of a swizzle of `width` bytes (0: none).
fn code(width: u32) -> u8 {
    match width {
        32 => 1,
        64 => 2,
        128 => 3,
        _ => 0,
    }
}

fn width(code: u8) -> u32 {
    match code {
        1 => 32,
        2 => 64,
        3 => 128,
        _ => 0,
    }
}

/// A swizzle's name in messages.
pub(crate) fn describe(width: u32) -> String {
    match width {
        0 => "no swizzle (interleaved)".to_owned(),
        w => format!("the {w}-byte swizzle"),
    }
}

impl TmaSwizzles {
    pub(crate) fn start_block(&mut self, shared_bytes: usize) {
        if self.enabled {
            self.chunks.clear();
            self.chunks.resize(shared_bytes.div_ceil(CHUNK), 0);
        }
    }

    /// A TMA load with the swizzle of `width` bytes landed on `start .. start + bytes`.
    pub(crate) fn tma_wrote(&mut self, start: usize, bytes: usize, width: u32) {
        if self.enabled && bytes > 0 {
            let marked = 1 + code(width);
            let end = (start + bytes).div_ceil(CHUNK).min(self.chunks.len());
            for chunk in &mut self.chunks[start / CHUNK..end] {
                *chunk = marked;
            }
        }
    }

    /// Another write of `size` bytes at `at`: the chunk is no longer TMA's.
    #[inline]
    pub(crate) fn other_wrote(&mut self, at: usize, size: u32) {
        if self.enabled {
            let end = (at + size as usize).div_ceil(CHUNK).min(self.chunks.len());
            for chunk in &mut self.chunks[at / CHUNK..end] {
                *chunk = 0;
            }
        }
    }

    /// The swizzle width TMA last wrote the byte at `at` with, if a TMA load was its last
    /// writer.
    pub(crate) fn written_with(&self, at: usize) -> Option<u32> {
        match self.chunks.get(at / CHUNK) {
            Some(&marked) if marked > 0 => Some(width(marked - 1)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_forget_the_swizzle_of_their_chunks_only() {
        let mut swizzles = TmaSwizzles {
            enabled: true,
            ..Default::default()
        };
        swizzles.start_block(1024);
        swizzles.tma_wrote(0, 256, 128);
        assert_eq!(swizzles.written_with(255), Some(128));
        assert_eq!(swizzles.written_with(256), None);
        swizzles.other_wrote(20, 4);
        assert_eq!(swizzles.written_with(16), None);
        assert_eq!(swizzles.written_with(32), Some(128));
        swizzles.tma_wrote(0, 64, 0);
        assert_eq!(swizzles.written_with(0), Some(0));
    }
}
