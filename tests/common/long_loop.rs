//! A kernel that runs as long as its argument says.

use cudajit::prelude::*;

/// One thread counts to `n`: a long loop that ends.
#[kernel]
pub fn count_to(n: u32, out: &mut [u32]) {
    if global_index() == 0 {
        let mut k = 0u32;
        let mut sum = 0u32;
        while k < n {
            sum = sum.wrapping_add(k ^ 0x5a5a);
            k += 1;
        }
        out[0] = sum;
    }
}
