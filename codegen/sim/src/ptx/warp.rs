//! The warp-collective instructions, run once all 32 lanes of a warp have reached them:
//! `mma.sync` and `ldmatrix`, over every lane's registers at once, with the fragment
//! layouts of the PTX ISA ("Matrix fragments for mma.m16n8k16", "ldmatrix").
//!
//! With `g = lane / 4` and `t = lane % 4`, lane `(g, t)` holds A's `(g, 2t..2t+1)` in
//! `a0`, `(g+8, ..)` in `a1`, `(g, 2t+8..)` in `a2`, `(g+8, 2t+8..)` in `a3`; B's
//! `(k 2t..2t+1, n g)` in `b0` and `(k 2t+8.., g)` in `b1`; C's and D's `(g, 2t)`, `(g,
//! 2t+1)`, `(g+8, 2t)`, `(g+8, 2t+1)` in registers 0–3. A 32-bit register of A or B holds
//! two 16-bit elements, the lower-numbered in its low half.
//!
//! **Floating point.** bf16 × bf16 and f16 × f16 products are exact in f32 (8 or 11
//! significant bits each); each element of D is `c + Σ a·b` over the 16 products summed in
//! f64 in k order and rounded once to f32 (round to nearest even). The tensor cores add
//! the products with their own internal alignment and truncation, so the GPU's result may
//! differ from this one by a few ulp of the largest term (docs/simulator.md gives the
//! bound the GPU test checks); when every partial sum is exact in f32 — small integers,
//! for example — both are exact and equal.

use super::super::memory::{AccessFault, SharedMemory};
use super::super::thread::FaultKind;
use super::super::value::CanonicalNan;
use super::{LdMatrix, Mma, MmaInputs, PtxOp};

/// Threads of a warp.
const LANES: usize = 32;

/// One lane taking part: its frame registers (from the frame's first), its linear thread
/// index in the block and the instruction's site (packed), for memory records.
pub(crate) struct Lane<'a> {
    pub regs: &'a mut [u64],
    pub thread: u32,
    pub site: u32,
}

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
        _ => unreachable!("only warp-collective instructions run here"),
    }
}

fn element(inputs: MmaInputs, bits: u16) -> f64 {
    match inputs {
        MmaInputs::Bf16 => f64::from(half::bf16::from_bits(bits).to_f32()),
        MmaInputs::F16 => half::f16::from_bits(bits).to_f64(),
    }
}

/// The two 16-bit elements of a register: the low half first.
fn halves(word: u64) -> [u16; 2] {
    [word as u16, (word >> 16) as u16]
}

fn run_mma(mma: &Mma, lanes: &mut [Lane<'_>]) {
    let mut a = [[0f64; 16]; 16]; // [m][k]
    let mut b = [[0f64; 8]; 16]; // [k][n]
    let mut c = [[0f64; 8]; 16]; // [m][n]
    for (lane, state) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        let reg = |r: u32| state.regs[r as usize];
        for (i, &r) in mma.a.iter().enumerate() {
            let row = g + 8 * (i % 2);
            let column = 2 * t + 8 * (i / 2);
            let [lo, hi] = halves(reg(r));
            a[row][column] = element(mma.inputs, lo);
            a[row][column + 1] = element(mma.inputs, hi);
        }
        for (i, &r) in mma.b.iter().enumerate() {
            let k = 2 * t + 8 * i;
            let [lo, hi] = halves(reg(r));
            b[k][g] = element(mma.inputs, lo);
            b[k + 1][g] = element(mma.inputs, hi);
        }
        for (i, &r) in mma.c.iter().enumerate() {
            let (row, column) = (g + 8 * (i / 2), 2 * t + i % 2);
            c[row][column] = f64::from(f32::from_bits(reg(r) as u32));
        }
    }
    for (lane, state) in lanes.iter_mut().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for (i, &r) in mma.d.iter().enumerate() {
            let (row, column) = (g + 8 * (i / 2), 2 * t + i % 2);
            let sum = (0..16).fold(c[row][column], |sum, k| sum + a[row][k] * b[k][column]);
            state.regs[r as usize] = u64::from((sum as f32).canonical().to_bits());
        }
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
            let offset = lane.regs[load.address as usize] & u64::from(u32::MAX);
            if !offset.is_multiple_of(16) {
                return Err((
                    provider,
                    FaultKind::Access(AccessFault::Misaligned { offset, align: 16 }),
                ));
            }
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
            state.regs[load.dst[m] as usize] = u64::from(lo) | (u64::from(hi) << 16);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Registers 0–3 D, 4–7 A, 8–9 B, 10–13 C, for each of 32 lanes.
    fn mma_lanes(a: &[[f32; 16]; 16], b: &[[f32; 8]; 16], c: f32) -> Vec<[u64; 14]> {
        let bf = |x: f32| u64::from(half::bf16::from_f32(x).to_bits());
        (0..32)
            .map(|lane| {
                let (g, t) = (lane / 4, lane % 4);
                let mut regs = [0u64; 14];
                for i in 0..4 {
                    let (row, col) = (g + 8 * (i % 2), 2 * t + 8 * (i / 2));
                    regs[4 + i] = bf(a[row][col]) | (bf(a[row][col + 1]) << 16);
                }
                for i in 0..2 {
                    let k = 2 * t + 8 * i;
                    regs[8 + i] = bf(b[k][g]) | (bf(b[k + 1][g]) << 16);
                }
                for i in 0..4 {
                    regs[10 + i] = u64::from(c.to_bits());
                }
                regs
            })
            .collect()
    }

    #[test]
    fn mma_computes_d_in_the_fragment_layout() {
        let a: [[f32; 16]; 16] =
            std::array::from_fn(|m| std::array::from_fn(|k| ((m * 3 + k) % 7) as f32 - 3.0));
        let b: [[f32; 8]; 16] =
            std::array::from_fn(|k| std::array::from_fn(|n| ((k + 5 * n) % 5) as f32 - 2.0));
        let mut regs = mma_lanes(&a, &b, 0.5);
        let mma = Mma {
            inputs: MmaInputs::Bf16,
            d: [0, 1, 2, 3],
            a: [4, 5, 6, 7],
            b: [8, 9],
            c: [10, 11, 12, 13],
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
        run_mma(&mma, &mut lanes);
        for (lane, r) in regs.iter().enumerate() {
            let (g, t) = (lane / 4, lane % 4);
            for (i, &d) in r[..4].iter().enumerate() {
                let (m, n) = (g + 8 * (i / 2), 2 * t + i % 2);
                let expected: f32 = 0.5 + (0..16).map(|k| a[m][k] * b[k][n]).sum::<f32>();
                assert_eq!(f32::from_bits(d as u32), expected, "D[{m}][{n}]");
            }
        }
    }

    #[test]
    fn ldmatrix_delivers_rows_and_their_transpose() {
        let mut shared = SharedMemory::new(false);
        shared.start_block(256);
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
                dst: [0; 4],
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
}
