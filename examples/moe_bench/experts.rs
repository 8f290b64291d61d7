//! The benchmark's experts: the identity, so every contender's combined tokens are known
//! on the host.

use cudajit::bf16;
use cudajit::nccl::device::{self as nccl, Window};
use cudajit::prelude::*;

/// The experts of the benchmark: the identity (each received row is its own output), a
/// copy of the receive window into the expert-output window.
#[kernel]
pub fn identity_experts(received: Window, output: Window, elements: u64) {
    let x = unsafe { slice_at::<bf16>(nccl::local_address(received, 0), elements as usize) };
    let y = unsafe { slice_at_mut::<bf16>(nccl::local_address(output, 0), elements as usize) };
    let mut v = global_index();
    while v < elements as usize / 8 {
        let (a, b, c, d, e, f, g, h) = vload8(x, v);
        vstore8(y, v, (a, b, c, d, e, f, g, h));
        v += grid_stride();
    }
}
