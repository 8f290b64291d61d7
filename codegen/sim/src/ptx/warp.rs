//! The warp-collective instructions, run once all 32 lanes of a warp have reached them:
//! `mma.sync` ([`super::mma`]), and the shared-memory matrix moves `ldmatrix` and
//! `stmatrix` over every lane's registers at once, with the distribution of the PTX ISA
//! ("ldmatrix", "stmatrix"): lanes `8m..8m + 8` give the row addresses of matrix `m`, and
//! lane `l` holds row `l / 4`, elements `2(l % 4)` and `2(l % 4) + 1` of each matrix (the
//! transpose's, with `.trans`), the lower-numbered in the low half of its register.

use super::super::memory::{AccessFault, SharedMemory};
use super::mma::run_mma;
use super::{Lane, LdMatrix, PtxOp};
use crate::thread_state::FaultKind;

/// Threads of a warp.
const LANES: usize = 32;

/// Runs the collective `op` over the 32 `lanes` of a warp, in lane order. An error names
/// the lane whose operand caused it.
pub(crate) fn run_collective(
    op: &PtxOp,
    lanes: &mut [Lane<'_>],
    shared: &mut SharedMemory,
) -> Result<(), (usize, FaultKind)> {
    debug_assert_eq!(lanes.len(), LANES);
    match op {
        PtxOp::Mma(mma) => {
            run_mma(mma, lanes);
            Ok(())
        }
        PtxOp::LdMatrix(load) => run_ldmatrix(load, lanes, shared),
        PtxOp::StMatrix(store) => run_stmatrix(store, lanes, shared),
        _ => unreachable!("only warp-collective instructions run here"),
    }
}

fn run_ldmatrix(
    load: &LdMatrix,
    lanes: &mut [Lane<'_>],
    shared: &mut SharedMemory,
) -> Result<(), (usize, FaultKind)> {
    let matrices = load.matrices as usize;
    // rows[m][r]: the eight 16-bit elements of row r of matrix m, from the address lane
    // 8m + r gives (the other lanes' addresses are not read).
    let mut rows = [[[0u16; 8]; 8]; 4];
    for (m, matrix) in rows.iter_mut().enumerate().take(matrices) {
        for (r, row) in matrix.iter_mut().enumerate() {
            let provider = 8 * m + r;
            let lane = &lanes[provider];
            let offset = row_address(load, lane, provider)?;
            for half in 0..2u64 {
                let word = shared
                    .load(offset + 8 * half, 8, lane.thread, lane.site)
                    .map_err(|fault| (provider, FaultKind::Access(fault)))?;
                for e in 0..4 {
                    row[4 * half as usize + e] = (word >> (16 * e)) as u16;
                }
            }
        }
    }
    for (lane, state) in lanes.iter_mut().enumerate() {
        let (row, pair) = (lane / 4, 2 * (lane % 4));
        for (m, matrix) in rows.iter().enumerate().take(matrices) {
            let (lo, hi) = if load.trans {
                (matrix[pair][row], matrix[pair + 1][row])
            } else {
                (matrix[row][pair], matrix[row][pair + 1])
            };
            state.regs[load.registers[m] as usize] = u64::from(lo) | (u64::from(hi) << 16);
        }
    }
    Ok(())
}

/// The 16-byte-aligned shared offset lane `provider` gives for its row.
fn row_address(op: &LdMatrix, lane: &Lane<'_>, provider: usize) -> Result<u64, (usize, FaultKind)> {
    let offset = lane.regs[op.address as usize] & u64::from(u32::MAX);
    if !offset.is_multiple_of(16) {
        return Err((
            provider,
            FaultKind::Access(AccessFault::Misaligned { offset, align: 16 }),
        ));
    }
    Ok(offset)
}

/// `stmatrix`: `ldmatrix` run backwards. Each lane's register `m` gives its two elements
/// of matrix `m` (at row `l / 4`, or at column `l / 4` with `.trans`), and the lane that
/// gives row `r`'s address stores that row's 16 bytes (the race check sees it as the
/// writer).
fn run_stmatrix(
    store: &LdMatrix,
    lanes: &mut [Lane<'_>],
    shared: &mut SharedMemory,
) -> Result<(), (usize, FaultKind)> {
    let matrices = store.matrices as usize;
    let mut rows = [[[0u16; 8]; 8]; 4];
    for (lane, state) in lanes.iter().enumerate() {
        let (row, pair) = (lane / 4, 2 * (lane % 4));
        for (m, matrix) in rows.iter_mut().enumerate().take(matrices) {
            let word = state.regs[store.registers[m] as usize];
            let (lo, hi) = (word as u16, (word >> 16) as u16);
            if store.trans {
                matrix[pair][row] = lo;
                matrix[pair + 1][row] = hi;
            } else {
                matrix[row][pair] = lo;
                matrix[row][pair + 1] = hi;
            }
        }
    }
    for (m, matrix) in rows.iter().enumerate().take(matrices) {
        for (r, row) in matrix.iter().enumerate() {
            let provider = 8 * m + r;
            let lane = &lanes[provider];
            let offset = row_address(store, lane, provider)?;
            for half in 0..2usize {
                let word = (0..4).fold(0u64, |word, e| {
                    word | (u64::from(row[4 * half + e]) << (16 * e))
                });
                shared
                    .store(offset + 8 * half as u64, 8, word, lane.thread, lane.site)
                    .map_err(|fault| (provider, FaultKind::Access(fault)))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldmatrix_delivers_rows_and_their_transpose() {
        let mut shared = SharedMemory::new(false);
        shared.start_block(256, 32);
        // An 8×8 matrix of b16 elements 8 r + c at bytes 0..128, rows 16 bytes apart.
        for r in 0..8u64 {
            for c in 0..8u64 {
                shared.store(16 * r + 2 * c, 2, 8 * r + c, 0, 0).unwrap();
            }
        }
        for trans in [false, true] {
            let mut regs: Vec<[u64; 2]> = (0..32).map(|l| [0, 16 * (l % 8) as u64]).collect();
            let load = LdMatrix {
                matrices: 1,
                trans,
                registers: [0; 4],
                address: 1,
            };
            let mut lanes: Vec<Lane<'_>> = regs
                .iter_mut()
                .enumerate()
                .map(|(t, r)| Lane {
                    regs: r,
                    thread: t as u32,
                    site: 0,
                })
                .collect();
            run_ldmatrix(&load, &mut lanes, &mut shared).unwrap();
            for (lane, r) in regs.iter().enumerate() {
                let (row, pair) = ((lane / 4) as u64, 2 * (lane % 4) as u64);
                let (lo, hi) = if trans {
                    (8 * pair + row, 8 * (pair + 1) + row)
                } else {
                    (8 * row + pair, 8 * row + pair + 1)
                };
                assert_eq!(r[0], lo | (hi << 16), "lane {lane} trans {trans}");
            }
        }
    }

    #[test]
    fn stmatrix_stores_what_ldmatrix_loads_back() {
        for trans in [false, true] {
            let mut shared = SharedMemory::new(false);
            shared.start_block(1024, 32);
            // Registers 0–3 the stored matrices, 4–7 the loaded ones, 8 the row address
            // (rows 32 bytes apart, so every other 16 bytes stay untouched).
            let mut regs: Vec<[u64; 9]> = (0..32u64)
                .map(|l| {
                    let mut r = [0u64; 9];
                    for (m, reg) in r[..4].iter_mut().enumerate() {
                        *reg = (l * 131 + m as u64 * 17) | ((l * 7 + 3) << 16);
                    }
                    r[8] = 32 * ((l * 5 + 3) % 32);
                    r
                })
                .collect();
            let store = LdMatrix {
                matrices: 4,
                trans,
                registers: [0, 1, 2, 3],
                address: 8,
            };
            let load = LdMatrix {
                registers: [4, 5, 6, 7],
                ..store.clone()
            };
            let mut lanes: Vec<Lane<'_>> = regs
                .iter_mut()
                .enumerate()
                .map(|(t, r)| Lane {
                    regs: r,
                    thread: t as u32,
                    site: 0,
                })
                .collect();
            run_stmatrix(&store, &mut lanes, &mut shared).unwrap();
            // Lane 0's register 0 is row 0's elements 0 and 1 (with `.trans`, its element 0
            // and row 1's); the 16 bytes after each row are not written.
            let row0 = lanes[0].regs[8];
            let (size, bits) = if trans { (2, 0xffff) } else { (4, 0xffff_ffff) };
            assert_eq!(
                shared.load(row0, size, 0, 0).unwrap(),
                lanes[0].regs[0] & bits
            );
            assert_eq!(shared.load(row0 + 16, 8, 0, 0).unwrap(), 0);
            run_ldmatrix(&load, &mut lanes, &mut shared).unwrap();
            for (lane, r) in regs.iter().enumerate() {
                assert_eq!(r[..4], r[4..8], "lane {lane} trans {trans}");
            }
        }
    }
}
