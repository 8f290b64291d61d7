//! Warp-level reductions and scans, written in the kernel language itself: `#[device]`
//! functions that kernels call like any other (they inline into the kernel).
//!
//! Every lane of the warp must call them together (they shuffle across all 32 lanes).

use cudajit_core::device::{lane_id, shfl_up_sync, shfl_xor_sync, DeviceScalar, FULL_WARP};
use cudajit_macros::device;

/// The sum of `value` over the 32 lanes of the warp, in every lane (a butterfly of
/// `shfl_xor_sync`).
///
/// ```no_run
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn row_sums(data: &[f32], sums: &mut [f32]) {
///     let total = warp_sum(data[global_index()]);
///     if lane_id() == 0 {
///         sums[global_index() / 32] = total;
///     }
/// }
/// # fn main() {}
/// ```
#[device]
pub fn warp_sum<T: DeviceScalar + core::ops::Add<Output = T>>(value: T) -> T {
    let mut sum = value;
    let mut offset = 16;
    while offset > 0 {
        sum = sum + shfl_xor_sync(FULL_WARP, sum, offset);
        offset /= 2;
    }
    sum
}

/// The largest `value` over the warp, in every lane.
#[device]
pub fn warp_max<T: DeviceScalar + PartialOrd>(value: T) -> T {
    let mut best = value;
    let mut offset = 16;
    while offset > 0 {
        let other = shfl_xor_sync(FULL_WARP, best, offset);
        if other > best {
            best = other;
        }
        offset /= 2;
    }
    best
}

/// The smallest `value` over the warp, in every lane.
#[device]
pub fn warp_min<T: DeviceScalar + PartialOrd>(value: T) -> T {
    let mut best = value;
    let mut offset = 16;
    while offset > 0 {
        let other = shfl_xor_sync(FULL_WARP, best, offset);
        if other < best {
            best = other;
        }
        offset /= 2;
    }
    best
}

/// The sum of `value` over lanes `0..=lane_id()` (an inclusive scan with `shfl_up_sync`).
#[device]
pub fn warp_inclusive_scan<T: DeviceScalar + core::ops::Add<Output = T>>(value: T) -> T {
    let mut running = value;
    let mut delta = 1;
    while delta < 32 {
        let up = shfl_up_sync(FULL_WARP, running, delta);
        if lane_id() >= delta {
            running = running + up;
        }
        delta *= 2;
    }
    running
}
