//! The generator's seeded random numbers and the random choices built on them.

use cudajit_core::Scalar;

/// A small, fast, seeded generator (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Register bits of a random value of `scalar`, edge values often.
    pub fn value(&mut self, scalar: Scalar) -> u64 {
        let bits = match scalar {
            Scalar::Bool => self.next_u64() & 1,
            Scalar::F32 => {
                let special = [
                    0.0f32,
                    -0.0,
                    1.0,
                    -1.0,
                    0.5,
                    3.0,
                    f32::MAX,
                    f32::MIN_POSITIVE,
                    1e-40,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    f32::NAN,
                    1e10,
                    -7.25,
                ];
                let v = match self.below(4) {
                    0 => *self.pick(&special),
                    1 => f32::from_bits(self.next_u64() as u32),
                    2 => (self.below(2001) as f32 - 1000.0) * 0.125,
                    _ => (self.below(2_000_001) as f32 - 1_000_000.0) * 1e-3,
                };
                u64::from(v.to_bits())
            }
            Scalar::F64 => {
                let special = [
                    0.0f64,
                    -0.0,
                    1.0,
                    -1.0,
                    0.1,
                    f64::MAX,
                    f64::MIN_POSITIVE,
                    5e-324,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                    1e300,
                    -2.5,
                ];
                let v = match self.below(4) {
                    0 => *self.pick(&special),
                    1 => f64::from_bits(self.next_u64()),
                    2 => (self.below(2001) as f64 - 1000.0) * 0.125,
                    _ => (self.below(2_000_001) as f64 - 1_000_000.0) * 1e-3,
                };
                v.to_bits()
            }
            s => {
                let edges = [
                    0u64,
                    1,
                    u64::MAX,
                    2,
                    3,
                    7,
                    31,
                    32,
                    33,
                    63,
                    64,
                    1 << 31,
                    (1 << 31) - 1,
                ];
                match self.below(3) {
                    0 => *self.pick(&edges),
                    1 => self.below(100),
                    _ => {
                        let v = self.next_u64();
                        if s.bits() < 64 && s.is_signed() {
                            // Negative values as often as positive ones.
                            v >> self.below(u64::from(s.bits()))
                        } else {
                            v
                        }
                    }
                }
            }
        };
        cudajit_sim::canonical_bits(bits, scalar)
    }
}
