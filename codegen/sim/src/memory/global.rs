//! Global memory: the launch's buffers as relaxed atomic words, shared soundly by blocks on
//! different host threads, and the read-modify-write of every atomic.

use super::aligned;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

use cudajit_core::intrinsics::AtomicOp;
use cudajit_core::Scalar;

use crate::value::RegisterValue;

/// Device memory the simulator's kernels read and write: a block of bytes, 8-byte aligned
/// (the simulator treats every allocation as 256-byte aligned, as CUDA's are, for the
/// alignment rules of vector accesses).
pub struct DeviceMemory {
    words: Box<[AtomicU64]>,
    bytes: usize,
}

impl std::fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceMemory({} bytes)", self.bytes)
    }
}

impl DeviceMemory {
    /// `bytes` bytes of zeros.
    pub fn zeroed(bytes: usize) -> Self {
        DeviceMemory {
            words: (0..bytes.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
            bytes,
        }
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the memory has no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Copies `data` to the bytes starting at `offset`.
    ///
    /// # Panics
    /// If the bytes are outside the memory.
    pub fn write_bytes(&mut self, offset: usize, data: &[u8]) {
        assert!(
            offset + data.len() <= self.bytes,
            "write outside device memory"
        );
        for (i, &byte) in data.iter().enumerate() {
            let at = offset + i;
            let word = self.words[at / 8].get_mut();
            let shift = (at % 8) * 8;
            *word = (*word & !(0xff << shift)) | (u64::from(byte) << shift);
        }
    }

    /// Copies `data` to the bytes starting at `offset` through a shared reference (atomic
    /// byte stores), for memory that launches may share, e.g. an NCCL window held by a
    /// simulated world.
    ///
    /// # Panics
    /// If the bytes are outside the memory.
    pub fn store_bytes(&self, offset: usize, data: &[u8]) {
        assert!(
            offset + data.len() <= self.bytes,
            "write outside device memory"
        );
        for (i, &byte) in data.iter().enumerate() {
            // SAFETY: inside the allocation (checked above); every access to device memory
            // is atomic.
            unsafe { AtomicU8::from_ptr(self.base().add(offset + i)) }
                .store(byte, Ordering::Relaxed);
        }
    }

    /// [`Self::write_values`] through a shared reference (see [`Self::store_bytes`]).
    pub fn store_values<T: RegisterValue>(&self, first: usize, values: &[T]) {
        let size = T::SCALAR.size_bytes() as usize;
        let mut bytes = Vec::with_capacity(values.len() * size);
        for value in values {
            bytes.extend_from_slice(&value.to_register().to_le_bytes()[..size]);
        }
        self.store_bytes(first * size, &bytes);
    }

    /// Copies the bytes starting at `offset` into `out`.
    ///
    /// # Panics
    /// If the bytes are outside the memory.
    pub fn read_bytes(&self, offset: usize, out: &mut [u8]) {
        assert!(
            offset + out.len() <= self.bytes,
            "read outside device memory"
        );
        let mut i = 0;
        while i < out.len() {
            let at = offset + i;
            let word = self.words[at / 8].load(Ordering::Relaxed).to_le_bytes();
            let start = at % 8;
            let take = (8 - start).min(out.len() - i);
            out[i..i + take].copy_from_slice(&word[start..start + take]);
            i += take;
        }
    }

    /// Copies `values` to the elements starting at element `first`.
    pub fn write_values<T: RegisterValue>(&mut self, first: usize, values: &[T]) {
        let size = T::SCALAR.size_bytes() as usize;
        let mut bytes = Vec::with_capacity(values.len() * size);
        for value in values {
            bytes.extend_from_slice(&value.to_register().to_le_bytes()[..size]);
        }
        self.write_bytes(first * size, &bytes);
    }

    /// The `count` elements starting at element `first`.
    pub fn read_values<T: RegisterValue>(&self, first: usize, count: usize) -> Vec<T> {
        let size = T::SCALAR.size_bytes() as usize;
        let mut bytes = vec![0u8; count * size];
        self.read_bytes(first * size, &mut bytes);
        bytes
            .chunks_exact(size)
            .map(|chunk| {
                let mut word = [0u8; 8];
                word[..size].copy_from_slice(chunk);
                T::from_register(u64::from_le_bytes(word))
            })
            .collect()
    }

    #[inline(always)]
    pub(super) fn base(&self) -> *mut u8 {
        self.words.as_ptr() as *mut u8
    }

    /// Whether `size` bytes at `offset` (an offset of a pointer, below 2^48, so the sum
    /// cannot overflow) lie inside the memory.
    #[inline(always)]
    pub(super) fn contains(&self, offset: u64, size: u64) -> bool {
        offset + size <= self.bytes as u64
    }

    /// Loads `size` bytes (1, 2, 4 or 8) at `offset`, which the caller checked lies inside
    /// the memory and is aligned to `size`.
    #[inline(always)]
    pub(super) fn load(&self, offset: u64, size: u32) -> u64 {
        debug_assert!(self.contains(offset, size as u64) && aligned(offset, size));
        // SAFETY: the access is inside the allocation (checked by the caller) and aligned to
        // its size (the allocation is 8-byte aligned and the offset a multiple of `size`),
        // and all concurrent accesses to these bytes are atomic.
        unsafe {
            let at = self.base().add(offset as usize);
            match size {
                1 => u64::from(AtomicU8::from_ptr(at).load(Ordering::Relaxed)),
                2 => u64::from(AtomicU16::from_ptr(at.cast()).load(Ordering::Relaxed)),
                4 => u64::from(AtomicU32::from_ptr(at.cast()).load(Ordering::Relaxed)),
                _ => AtomicU64::from_ptr(at.cast()).load(Ordering::Relaxed),
            }
        }
    }

    /// Stores the low `size` bytes of `value` at `offset` (checked as for [`Self::load`]).
    #[inline(always)]
    pub(super) fn store(&self, offset: u64, size: u32, value: u64) {
        debug_assert!(self.contains(offset, size as u64) && aligned(offset, size));
        // SAFETY: as in `load`.
        unsafe {
            let at = self.base().add(offset as usize);
            match size {
                1 => AtomicU8::from_ptr(at).store(value as u8, Ordering::Relaxed),
                2 => AtomicU16::from_ptr(at.cast()).store(value as u16, Ordering::Relaxed),
                4 => AtomicU32::from_ptr(at.cast()).store(value as u32, Ordering::Relaxed),
                _ => AtomicU64::from_ptr(at.cast()).store(value, Ordering::Relaxed),
            }
        }
    }

    /// An atomic read-modify-write of a 4- or 8-byte element (checked as for
    /// [`Self::load`]); returns the old value.
    #[inline]
    pub(super) fn atomic(&self, offset: u64, kind: Scalar, op: AtomicOp, a: u64, b: u64) -> u64 {
        // SAFETY: as in `load`.
        unsafe {
            let at = self.base().add(offset as usize);
            if kind.size_bytes() == 4 {
                let cell = AtomicU32::from_ptr(at.cast());
                let mut old = cell.load(Ordering::Relaxed);
                loop {
                    let new = rmw(kind, op, u64::from(old), a, b) as u32;
                    match cell.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
                    {
                        Ok(_) => return u64::from(old),
                        Err(current) => old = current,
                    }
                }
            } else {
                let cell = AtomicU64::from_ptr(at.cast());
                let mut old = cell.load(Ordering::Relaxed);
                loop {
                    let new = rmw(kind, op, old, a, b);
                    match cell.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
                    {
                        Ok(_) => return old,
                        Err(current) => old = current,
                    }
                }
            }
        }
    }
}

/// The new value of an atomic `op` on an element of type `kind` holding `old`, with
/// operands `a` (and `b` for compare-exchange: `a` is the expected value, `b` the new one).
/// Compare-exchange compares bits, as the GPU does (floats through their integer bits).
pub(crate) fn rmw(kind: Scalar, op: AtomicOp, old: u64, a: u64, b: u64) -> u64 {
    pub(super) fn ord<T: RegisterValue + PartialOrd>(op: AtomicOp, old: u64, a: u64) -> u64 {
        let (x, y) = (T::from_register(old), T::from_register(a));
        let take_new = match op {
            AtomicOp::Min => y < x,
            _ => y > x,
        };
        if take_new {
            a
        } else {
            old
        }
    }
    match op {
        AtomicOp::Exchange => a,
        AtomicOp::CompareExchange => {
            if old == a {
                b
            } else {
                old
            }
        }
        AtomicOp::And => old & a,
        AtomicOp::Or => old | a,
        AtomicOp::Xor => old ^ a,
        AtomicOp::Add | AtomicOp::Sub => {
            let add = op == AtomicOp::Add;
            match kind {
                Scalar::F32 => {
                    let (x, y) = (f32::from_register(old), f32::from_register(a));
                    (if add { x + y } else { x - y }).to_register()
                }
                Scalar::F64 => {
                    let (x, y) = (f64::from_register(old), f64::from_register(a));
                    (if add { x + y } else { x - y }).to_register()
                }
                _ => {
                    let sum = if add {
                        old.wrapping_add(a)
                    } else {
                        old.wrapping_sub(a)
                    };
                    crate::value::canonical(sum, kind)
                }
            }
        }
        AtomicOp::Min | AtomicOp::Max => match kind {
            Scalar::I32 => ord::<i32>(op, old, a),
            Scalar::U32 => ord::<u32>(op, old, a),
            Scalar::I64 | Scalar::Isize => ord::<i64>(op, old, a),
            _ => ord::<u64>(op, old, a),
        },
    }
}

/// One global buffer of a launch: device memory seen from a given byte offset, read-only
/// or writable.
#[derive(Clone, Copy, Debug)]
pub struct GlobalRegion<'a> {
    pub memory: &'a DeviceMemory,
    pub writable: bool,
}
