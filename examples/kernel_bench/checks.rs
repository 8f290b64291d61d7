//! Inputs and checks: deterministic pseudo-random inputs and comparisons of results with
//! their expected values, exact or within a tolerance.

use super::Result;

/// A deterministic pseudo-random stream (SplitMix64), so failures reproduce.
pub(crate) struct Random(u64);

impl Random {
    pub(crate) fn new(seed: u64) -> Self {
        Random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub(crate) fn f32s(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        let mut r = Random::new(seed);
        (0..n)
            .map(|_| lo + (hi - lo) * ((r.next() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)))
            .collect()
    }
    pub(crate) fn u32s(seed: u64, n: usize) -> Vec<u32> {
        let mut r = Random::new(seed);
        (0..n).map(|_| (r.next() >> 32) as u32).collect()
    }
}

/// An error naming the first mismatches, or `Ok` when `got` equals `expected`.
pub(crate) fn check_exact<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    expected: &[T],
) -> Result<()> {
    if got.len() != expected.len() {
        return Err(format!("{what}: {} values, expected {}", got.len(), expected.len()).into());
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != expected[i]).collect();
    match bad.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{what}: {} of {} values wrong; first at {i}: got {:?}, expected {:?}",
            bad.len(),
            got.len(),
            got[i],
            expected[i]
        )
        .into()),
    }
}

/// `Ok` when every `|got - expected| <= tolerance[i]`.
pub(crate) fn check_close(
    what: &str,
    got: &[f32],
    expected: &[f64],
    tolerance: &[f64],
) -> Result<()> {
    if got.len() != expected.len() {
        return Err(format!("{what}: {} values, expected {}", got.len(), expected.len()).into());
    }
    let mut bad = 0usize;
    let mut first = None;
    let mut worst = 0.0f64;
    for i in 0..got.len() {
        let error = (f64::from(got[i]) - expected[i]).abs();
        // A NaN result fails too (NaN compares false).
        let within = error <= tolerance[i];
        if !within {
            bad += 1;
            first.get_or_insert(i);
        }
        if error.is_finite() {
            worst = worst.max(error / tolerance[i].max(f64::MIN_POSITIVE));
        }
    }
    match first {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: {bad} of {} values outside tolerance; first at {i}: got {}, expected {} \
             (tolerance {:e}); worst error/tolerance {worst:.2}",
            got.len(),
            got[i],
            expected[i],
            tolerance[i]
        )
        .into()),
    }
}

pub(crate) fn rel_tolerance(expected: &[f64], rel: f64, abs: f64) -> Vec<f64> {
    expected.iter().map(|e| rel * e.abs() + abs).collect()
}
