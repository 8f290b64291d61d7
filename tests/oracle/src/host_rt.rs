//! The device intrinsics as the host versions of generated programs see them: the index of
//! the thread being run, the block's shared arrays, and atomics (sequential here, so plain
//! read-modify-writes). [`run_host`](crate::run_host) sets them before each call.

use std::cell::{Cell, RefCell};

pub use cudajit::Dim3;

thread_local! {
    static THREAD: Cell<(Dim3, Dim3, Dim3, Dim3)> = const { Cell::new((ZERO, ZERO, ZERO, ZERO)) };
    /// The block's shared arrays, in the order the program asks for them, and how many
    /// the current call has asked for so far.
    static SHARED: RefCell<(Vec<Box<[u64]>>, usize)> = const { RefCell::new((Vec::new(), 0)) };
}

const ZERO: Dim3 = Dim3 { x: 0, y: 0, z: 0 };

fn dim(x: u32) -> Dim3 {
    Dim3 { x, y: 1, z: 1 }
}

/// A new block: its shared arrays start zeroed (what the simulator gives, and what the
/// programs never read before writing).
pub fn begin_block() {
    SHARED.with(|s| *s.borrow_mut() = (Vec::new(), 0));
}

/// The next call runs thread `thread` of block `block`.
pub fn enter_thread(thread: u32, block: u32, block_dim: u32, grid_dim: u32) {
    THREAD.with(|t| {
        t.set((
            Dim3 {
                x: thread,
                y: 0,
                z: 0,
            },
            Dim3 {
                x: block,
                y: 0,
                z: 0,
            },
            dim(block_dim),
            dim(grid_dim),
        ))
    });
    SHARED.with(|s| s.borrow_mut().1 = 0);
}

pub fn thread_idx() -> Dim3 {
    THREAD.with(|t| t.get().0)
}

pub fn block_idx() -> Dim3 {
    THREAD.with(|t| t.get().1)
}

pub fn block_dim() -> Dim3 {
    THREAD.with(|t| t.get().2)
}

pub fn grid_dim() -> Dim3 {
    THREAD.with(|t| t.get().3)
}

pub fn global_index() -> usize {
    block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize
}

/// The block's `k`-th shared array, for the `k`-th call in this thread's run.
///
/// Every thread of a block asks for the same arrays in the same order, so the `k`-th call
/// of each thread returns the same memory, as `__shared__` does.
pub fn shared_array<T: Copy>(len: usize) -> &'static mut [T] {
    assert!(std::mem::size_of::<T>() <= 8 && std::mem::align_of::<T>() <= 8);
    SHARED.with(|s| {
        let mut s = s.borrow_mut();
        let k = s.1;
        s.1 += 1;
        if s.0.len() <= k {
            s.0.push(vec![0u64; len].into_boxed_slice());
        }
        let words = &mut s.0[k];
        // SAFETY: the storage is 8-byte aligned and holds `len` elements of at most 8
        // bytes; it lives until the next `begin_block`, after every call of this block
        // has returned, and each call is the only user while it runs.
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<T>(), len) }
    })
}

macro_rules! atomics {
    ($($name:ident: |$old:ident, $value:ident| $new:expr;)*) => {$(
        /// The atomic, run alone: returns the old value.
        pub fn $name(target: &mut u32, $value: u32) -> u32 {
            let $old = *target;
            *target = $new;
            $old
        }
    )*};
}

atomics! {
    atomic_add: |old, value| old.wrapping_add(value);
    atomic_or: |old, value| old | value;
    atomic_xor: |old, value| old ^ value;
    atomic_and: |old, value| old & value;
    atomic_min: |old, value| old.min(value);
    atomic_max: |old, value| old.max(value);
}
