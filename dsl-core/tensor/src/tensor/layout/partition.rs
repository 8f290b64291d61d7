//! How a warpgroup's accumulator tile is partitioned among its threads: `wgmma`'s m64nN
//! D fragment (PTX ISA, "wgmma 64xNx16 D fragments"), `mma.sync`'s m16n8 layout
//! ([`crate::tensor::mma::acc_position`]) stacked over the four warps along M and
//! repeated along N.
//!
//! Thread `t` (0–127) of the warpgroup, in warp `w = t / 32` with `g = (t % 32) / 4` and
//! `q = t % 4`, holds in register `r` (0 .. N/2) element (`16 w + g + 8 ((r % 4) / 2)`,
//! `8 (r / 4) + 2 q + r % 2`) of the 64×N tile.

use cudajit::device;

/// The (row, column) of the 64×N `wgmma` accumulator that register `register` of thread
/// `thread` (its index in the warpgroup, 0–127) holds.
#[device]
pub fn warpgroup_acc_position(thread: u32, register: u32) -> (u32, u32) {
    let (warp, lane) = (thread / 32, thread % 32);
    let row = 16 * warp + lane / 4 + 8 * ((register % 4) / 2);
    let column = 8 * (register / 4) + 2 * (lane % 4) + register % 2;
    (row, column)
}

/// The (thread, register) holding (row, column) of a 64×N `wgmma` accumulator: the inverse
/// of [`warpgroup_acc_position`].
#[device]
pub fn warpgroup_acc_owner(row: u32, column: u32) -> (u32, u32) {
    let thread = 32 * (row / 16) + 4 * (row % 8) + (column % 8) / 2;
    let register = 4 * (column / 8) + 2 * ((row % 16) / 8) + column % 2;
    (thread, register)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threads_cover_the_tile_once_and_owners_invert_positions() {
        let n = 256u32;
        let mut seen = vec![false; (64 * n) as usize];
        for thread in 0..128 {
            for register in 0..n / 2 {
                let (row, column) = warpgroup_acc_position(thread, register);
                let at = (row * n + column) as usize;
                assert!(!seen[at], "({row}, {column}) twice");
                seen[at] = true;
                assert_eq!(warpgroup_acc_owner(row, column), (thread, register));
            }
        }
        assert!(seen.iter().all(|&s| s));
        // Within one warp and 8 columns it is mma.sync's m16n8 accumulator.
        for lane in 0..32 {
            for e in 0..4 {
                assert_eq!(
                    warpgroup_acc_position(lane, e),
                    crate::tensor::mma::acc_position(lane, e)
                );
            }
        }
    }
}
