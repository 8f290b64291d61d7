//! `mma.sync.aligned.m16n8kK.row.col`: the warp's fragments gathered into whole tiles, the
//! product computed, and D handed back in the accumulator layout, for every form
//! `cudajit::tensor::mma` writes (PTX ISA, "Matrix fragments for mma.m16n8k8/k16/k32").
//!
//! With `g = lane / 4` and `t = lane % 4`, and `p` elements in a 32-bit register (2 of
//! 16 bits, 1 tf32, 4 of 8 bits; `K = 16 p / 2`, so k8, k16 and k32), register `i` of A
//! holds row `g + 8 (i % 2)`, columns `p t + (K / 2)(i / 2)` onwards; register `i` of B
//! holds k `p t + (K / 2) i` onwards of column `g`; the lower-numbered element is in the
//! lower bits. f32 and s32 accumulators hold `(g + 8 (i / 2), 2t + i % 2)` in register
//! `i`; an f16 accumulator packs `(g + 8 i, 2t)` and `(g + 8 i, 2t + 1)` into register `i`.
//!
//! **Integers** (s8, u8 → s32) are bit-exact: the sum is exact, then wraps to 32 bits, or
//! clamps to `i32`'s range with `.satfinite`. **Floating point**: the products of bf16,
//! f16, tf32 (only the top 19 bits of each register are read, [`numeric::tf32`]) and FP8
//! inputs are exact in f64; each element of D is `c + Σ a·b` summed in k order and
//! rounded once to the accumulator's type (f32, or f16 for `.f16` accumulation), round to
//! nearest even. The tensor cores align and truncate their partial sums, so the GPU may
//! differ from this by a few ulp of the largest term (docs/simulator.md gives the bounds
//! the GPU tests check); when every partial sum is exact — small integers — both agree.

use super::super::value::CanonicalNan;
use super::numeric;
use super::Lane;
use crate::thread_state::Reg;

/// The element type of an MMA's A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MmaInputs {
    Bf16,
    F16,
    Tf32,
    E4m3,
    E5m2,
    S8,
    U8,
}

impl MmaInputs {
    /// The PTX type suffix.
    pub(crate) fn from_suffix(suffix: &str) -> Option<MmaInputs> {
        Some(match suffix {
            "bf16" => MmaInputs::Bf16,
            "f16" => MmaInputs::F16,
            "tf32" => MmaInputs::Tf32,
            "e4m3" => MmaInputs::E4m3,
            "e5m2" => MmaInputs::E5m2,
            "s8" => MmaInputs::S8,
            "u8" => MmaInputs::U8,
            _ => return None,
        })
    }

    /// The depth of the only m16n8 shape the simulator runs for these inputs.
    pub(crate) fn k(self) -> usize {
        16 * self.per_register() / 2
    }

    fn per_register(self) -> usize {
        match self {
            MmaInputs::Tf32 => 1,
            MmaInputs::Bf16 | MmaInputs::F16 => 2,
            MmaInputs::E4m3 | MmaInputs::E5m2 | MmaInputs::S8 | MmaInputs::U8 => 4,
        }
    }

    pub(crate) fn is_integer(self) -> bool {
        matches!(self, MmaInputs::S8 | MmaInputs::U8)
    }

    /// The elements of one 32-bit register, the lower-numbered first, exactly in f64.
    fn elements(self, word: u32) -> Vec<f64> {
        let per = self.per_register();
        let bits = 32 / per;
        (0..per)
            .map(|e| {
                let field = if bits == 32 {
                    word
                } else {
                    (word >> (bits * e)) & ((1 << bits) - 1)
                };
                match self {
                    MmaInputs::Bf16 => f64::from(half::bf16::from_bits(field as u16).to_f32()),
                    MmaInputs::F16 => half::f16::from_bits(field as u16).to_f64(),
                    MmaInputs::Tf32 => numeric::tf32(field),
                    MmaInputs::E4m3 => numeric::e4m3(field as u8),
                    MmaInputs::E5m2 => numeric::e5m2(field as u8),
                    MmaInputs::S8 => f64::from(field as u8 as i8),
                    MmaInputs::U8 => f64::from(field as u8),
                }
            })
            .collect()
    }
}

/// The type of C and D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MmaAccumulator {
    F32,
    /// Two f16 per register.
    F16,
    S32 {
        /// `.satfinite`: clamp to `i32`'s range instead of wrapping.
        saturate: bool,
    },
}

impl MmaAccumulator {
    /// Registers of C and of D per lane.
    pub(crate) fn registers(self) -> usize {
        match self {
            MmaAccumulator::F16 => 2,
            _ => 4,
        }
    }
}

/// `d = a · b + c` over a warp's m16n8kK fragments (the registers of one lane; C and D
/// use their first [`MmaAccumulator::registers`]).
#[derive(Clone, Debug)]
pub(crate) struct Mma {
    pub inputs: MmaInputs,
    pub accumulator: MmaAccumulator,
    pub d: [Reg; 4],
    pub a: [Reg; 4],
    pub b: [Reg; 2],
    pub c: [Reg; 4],
}

impl Mma {
    /// The instruction's name, for messages.
    pub(crate) fn name(&self) -> String {
        let input = format!("{:?}", self.inputs).to_lowercase();
        let (acc, sat) = match self.accumulator {
            MmaAccumulator::F32 => ("f32", ""),
            MmaAccumulator::F16 => ("f16", ""),
            MmaAccumulator::S32 { saturate } => ("s32", if saturate { ".satfinite" } else { "" }),
        };
        format!(
            "mma.sync.aligned.m16n8k{}.row.col{sat}.{acc}.{input}.{input}.{acc}",
            self.inputs.k()
        )
    }
}

/// The (row, column) of accumulator element `e` (register `e` of f32/s32, or half `e % 2`
/// of register `e / 2` of f16) of lane `lane`: the same tile either way.
fn accumulator_position(lane: usize, e: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    (g + 8 * (e / 2), 2 * t + e % 2)
}

pub(crate) fn run_mma(mma: &Mma, lanes: &mut [Lane<'_>]) {
    let k = mma.inputs.k();
    let half_k = k / 2;
    let per = mma.inputs.per_register();
    let mut a = vec![[0f64; 32]; 16]; // [m][k]
    let mut b = vec![[0f64; 8]; 32]; // [k][n]
    let mut c = [[0f64; 8]; 16]; // [m][n]
    for (lane, state) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        let word = |r: Reg| state.regs[r as usize] as u32;
        for (i, &r) in mma.a.iter().enumerate() {
            let (row, column) = (g + 8 * (i % 2), per * t + half_k * (i / 2));
            for (e, value) in mma.inputs.elements(word(r)).into_iter().enumerate() {
                a[row][column + e] = value;
            }
        }
        for (i, &r) in mma.b.iter().enumerate() {
            let kk = per * t + half_k * i;
            for (e, value) in mma.inputs.elements(word(r)).into_iter().enumerate() {
                b[kk + e][g] = value;
            }
        }
        for e in 0..4 {
            let (row, column) = accumulator_position(lane, e);
            c[row][column] = match mma.accumulator {
                MmaAccumulator::F32 => f64::from(f32::from_bits(word(mma.c[e]))),
                MmaAccumulator::S32 { .. } => f64::from(word(mma.c[e]) as i32),
                MmaAccumulator::F16 => {
                    let half = (word(mma.c[e / 2]) >> (16 * (e % 2))) as u16;
                    half::f16::from_bits(half).to_f64()
                }
            };
        }
    }
    // Every sum is exact in f64 for integers (|Σ| < 2^33), so the wrap is bit-exact.
    let sum = |row: usize, column: usize| {
        (0..k).fold(c[row][column], |s, kk| s + a[row][kk] * b[kk][column])
    };
    for (lane, state) in lanes.iter_mut().enumerate() {
        match mma.accumulator {
            MmaAccumulator::F32 => {
                for e in 0..4 {
                    let (row, column) = accumulator_position(lane, e);
                    let d = (sum(row, column) as f32).canonical();
                    state.regs[mma.d[e] as usize] = u64::from(d.to_bits());
                }
            }
            MmaAccumulator::S32 { saturate } => {
                for e in 0..4 {
                    let (row, column) = accumulator_position(lane, e);
                    let exact = sum(row, column) as i64;
                    let d = if saturate {
                        exact.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
                    } else {
                        exact as i32
                    };
                    state.regs[mma.d[e] as usize] = u64::from(d as u32);
                }
            }
            MmaAccumulator::F16 => {
                for r in 0..2 {
                    let mut word = 0u64;
                    for h in 0..2 {
                        let (row, column) = accumulator_position(lane, 2 * r + h);
                        word |= u64::from(f16_bits(sum(row, column))) << (16 * h);
                    }
                    state.regs[mma.d[r] as usize] = word;
                }
            }
        }
    }
}

/// `x` rounded once to f16 (to nearest even); NaN the canonical `0x7fff`.
fn f16_bits(x: f64) -> u16 {
    if x.is_nan() {
        0x7fff
    } else {
        half::f16::from_f64(x).to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tile's element as the simulator's decode sees it, and its register bits.
    type Encode = fn(f64) -> u32;

    /// Registers 0–3 D, 4–7 A, 8–9 B, 10–13 C of each of 32 lanes, the tiles packed in
    /// the fragment layout with `encode` (`per` elements of `32 / per` bits a register).
    fn lanes_for(
        inputs: MmaInputs,
        encode: Encode,
        a: &[Vec<f64>],
        b: &[Vec<f64>],
        c: impl Fn(usize, usize) -> u32,
    ) -> Vec<[u64; 14]> {
        let (per, half_k) = (inputs.per_register(), inputs.k() / 2);
        let bits = 32 / per;
        let pack = |values: Vec<f64>| {
            values.into_iter().enumerate().fold(0u64, |word, (e, v)| {
                let field = u64::from(encode(v)) & ((1u64 << bits) - 1);
                word | (field << (bits * e))
            })
        };
        (0..32)
            .map(|lane| {
                let (g, t) = (lane / 4, lane % 4);
                let mut regs = [0u64; 14];
                for i in 0..4 {
                    let (row, col) = (g + 8 * (i % 2), per * t + half_k * (i / 2));
                    regs[4 + i] = pack((0..per).map(|e| a[row][col + e]).collect());
                }
                for i in 0..2 {
                    let k = per * t + half_k * i;
                    regs[8 + i] = pack((0..per).map(|e| b[k + e][g]).collect());
                }
                for (i, reg) in regs[10..].iter_mut().enumerate() {
                    *reg = u64::from(c(lane, i));
                }
                regs
            })
            .collect()
    }

    fn run(mma: &Mma, regs: &mut [[u64; 14]]) {
        let mut lanes: Vec<Lane<'_>> = regs
            .iter_mut()
            .enumerate()
            .map(|(t, r)| Lane {
                regs: r,
                thread: t as u32,
                site: 0,
            })
            .collect();
        run_mma(mma, &mut lanes);
    }

    fn mma(inputs: MmaInputs, accumulator: MmaAccumulator) -> Mma {
        Mma {
            inputs,
            accumulator,
            d: [0, 1, 2, 3],
            a: [4, 5, 6, 7],
            b: [8, 9],
            c: [10, 11, 12, 13],
        }
    }

    fn tiles(k: usize, value: impl Fn(usize, usize) -> f64) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let a = (0..16)
            .map(|m| (0..k).map(|kk| value(m, kk)).collect())
            .collect();
        let b = (0..k)
            .map(|kk| (0..8).map(|n| value(kk + 3, 5 * n)).collect())
            .collect();
        (a, b)
    }

    fn expected(a: &[Vec<f64>], b: &[Vec<f64>], m: usize, n: usize) -> f64 {
        (0..a[0].len()).map(|k| a[m][k] * b[k][n]).sum()
    }

    #[test]
    fn integer_mma_is_exact_and_wraps_or_saturates() {
        // s8 extremes: 32 products of -128 · -128 = 2^19 onto C = i32::MAX - 5.
        let (a, b) = tiles(32, |_, _| -128.0);
        for saturate in [false, true] {
            let mut regs = lanes_for(
                MmaInputs::S8,
                |v| v as i8 as u8 as u32,
                &a,
                &b,
                |_, _| (i32::MAX - 5) as u32,
            );
            run(
                &mma(MmaInputs::S8, MmaAccumulator::S32 { saturate }),
                &mut regs,
            );
            let want = if saturate {
                i32::MAX
            } else {
                (i32::MAX - 5).wrapping_add(1 << 19)
            };
            assert!(regs
                .iter()
                .all(|r| r[..4].iter().all(|&d| d as i32 == want)));
        }
        // u8, mixed values, each (m, n) in the fragment layout.
        let (a, b) = tiles(32, |i, j| ((i * 7 + j * 13) % 256) as f64);
        let mut regs = lanes_for(
            MmaInputs::U8,
            |v| v as u32,
            &a,
            &b,
            |lane, i| (lane * 4 + i) as u32,
        );
        run(
            &mma(MmaInputs::U8, MmaAccumulator::S32 { saturate: false }),
            &mut regs,
        );
        for (lane, r) in regs.iter().enumerate() {
            for (e, &d) in r[..4].iter().enumerate() {
                let (m, n) = accumulator_position(lane, e);
                let want = (lane * 4 + e) as i64 + expected(&a, &b, m, n) as i64;
                assert_eq!(d as u32 as i64, want, "D[{m}][{n}]");
            }
        }
    }

    #[test]
    fn float_forms_read_their_layouts() {
        let small = |i: usize, j: usize| ((i * 3 + j) % 7) as f64 - 3.0;
        let cases: [(MmaInputs, Encode); 5] = [
            (MmaInputs::Bf16, |v| {
                u32::from(half::bf16::from_f64(v).to_bits())
            }),
            (MmaInputs::F16, |v| {
                u32::from(half::f16::from_f64(v).to_bits())
            }),
            (MmaInputs::Tf32, |v| (v as f32).to_bits()),
            // Small integers in e4m3 and e5m2: the f16 pattern's upper byte is e5m2's.
            (MmaInputs::E4m3, e4m3_of),
            (MmaInputs::E5m2, |v| {
                u32::from(half::f16::from_f64(v).to_bits() >> 8)
            }),
        ];
        for (inputs, encode) in cases {
            let (a, b) = tiles(inputs.k(), small);
            let mut regs = lanes_for(inputs, encode, &a, &b, |_, _| 0.5f32.to_bits());
            run(&mma(inputs, MmaAccumulator::F32), &mut regs);
            for (lane, r) in regs.iter().enumerate() {
                for (e, &d) in r[..4].iter().enumerate() {
                    let (m, n) = accumulator_position(lane, e);
                    let want = 0.5 + expected(&a, &b, m, n);
                    assert_eq!(f64::from(f32::from_bits(d as u32)), want, "{inputs:?}");
                }
            }
        }
    }

    /// Small integers as e4m3 bytes (exponent bias 7, 3 mantissa bits).
    fn e4m3_of(v: f64) -> u32 {
        let byte = (0..=255u8)
            .find(|&b| numeric::e4m3(b) == v)
            .expect("representable");
        u32::from(byte)
    }

    #[test]
    fn f16_accumulation_rounds_to_f16() {
        // 16 products of 1 · 2^-12 onto 1: 1 + 2^-8 is an f16 (10 mantissa bits).
        let (a, b) = tiles(16, |_, _| 2f64.powi(-6));
        let one = u32::from(half::f16::from_f64(1.0).to_bits());
        let mut regs = lanes_for(
            MmaInputs::F16,
            |v| u32::from(half::f16::from_f64(v).to_bits()),
            &a,
            &b,
            |_, _| one | (one << 16),
        );
        run(&mma(MmaInputs::F16, MmaAccumulator::F16), &mut regs);
        let want = half::f16::from_f64(1.0 + 2f64.powi(-8)).to_bits();
        for r in &regs {
            for &word in &r[..2] {
                assert_eq!([word as u16, (word >> 16) as u16], [want, want]);
            }
        }
    }

    #[test]
    fn tf32_inputs_drop_the_low_mantissa_bits() {
        // 1 + 2^-20 reads as 1: the sum of 8 products of 1 · 1 is exactly 8.
        let (a, b) = tiles(8, |_, _| 1.0);
        let mut regs = lanes_for(
            MmaInputs::Tf32,
            |v| (v as f32 + 2f32.powi(-20)).to_bits(),
            &a,
            &b,
            |_, _| 0,
        );
        run(&mma(MmaInputs::Tf32, MmaAccumulator::F32), &mut regs);
        assert!(regs
            .iter()
            .all(|r| r[..4].iter().all(|&d| f32::from_bits(d as u32) == 8.0)));
    }
}
