//! What FP8 dispatch promises, checked from the e4m3 format's definition alone: nothing
//! here shares code or formula with `cudajit::nccl::moe::fp8` (whose host quantiser is
//! the kernels' own code, so comparing the two bit for bit cannot see a mistake they
//! share). OCP e4m3: a sign, 4 exponent bits of bias 7, 3 mantissa bits, subnormals at
//! exponent 0, no infinities, `S.1111.111` NaN. Its values are enumerated in `f64`, and a
//! quantised element is held to half the gap between the two values around its scaled
//! value, as round-to-nearest must be.

/// The value of e4m3 bits, `None` for NaN.
pub fn value(byte: u8) -> Option<f64> {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((byte >> 3) & 0xf);
    let mantissa = f64::from(byte & 7);
    if exponent == 15 && byte & 7 == 7 {
        return None;
    }
    let magnitude = if exponent == 0 {
        mantissa / 8.0 * 2f64.powi(-6)
    } else {
        (1.0 + mantissa / 8.0) * 2f64.powi(exponent - 7)
    };
    Some(sign * magnitude)
}

/// Every finite magnitude, increasing: 0, the subnormals, ..., 448.
pub fn magnitudes() -> Vec<f64> {
    let mut all: Vec<f64> = (0..=0x7fu8).filter_map(value).collect();
    all.sort_by(f64::total_cmp);
    all
}

/// Half the gap between the e4m3 magnitudes just below and just above `|y|` (`|y| <=
/// 448`): the most a round-to-nearest conversion of `y` may be off by.
pub fn half_gap(y: f64) -> f64 {
    let magnitudes = magnitudes();
    // `amax / (amax / 448)` may be a hair above 448 in f64.
    assert!(
        y.abs() <= 448.0 * (1.0 + 1e-12),
        "{y} is outside e4m3's range"
    );
    let a = y.abs().min(448.0);
    let above = magnitudes
        .partition_point(|&m| m < a)
        .min(magnitudes.len() - 1);
    let below = above.saturating_sub(usize::from(magnitudes[above] > a));
    (magnitudes[above] - magnitudes[below]) / 2.0
}

/// Checks one quantised block: `x` the elements sent (as `f32`), `bytes` the e4m3 bytes
/// and `scale` the `f32` scale that arrived. The scale must be `amax / 448` rounded to
/// `f32` (any positive finite one for an all-zero block), no byte NaN, and every element
/// dequantised within half an e4m3 gap (of its scaled value) times the scale, plus what
/// the `f32` roundings of the scale and of the scaled value add. `what` names the block.
pub fn check_block(x: &[f32], bytes: &[u8], scale: f32, what: &dyn Fn() -> String) {
    assert_eq!(x.len(), bytes.len(), "{}", what());
    assert!(
        scale.is_finite() && scale > 0.0,
        "{}: scale {scale:e}",
        what()
    );
    let amax = x.iter().fold(0.0f64, |m, &v| m.max(f64::from(v).abs()));
    let (scale, exact_scale) = (f64::from(scale), amax / 448.0);
    let scale_error = (scale - exact_scale).abs();
    if amax > 0.0 {
        // Half an f32 ulp of the scale, or half the smallest subnormal.
        let ulp = (exact_scale * 2f64.powi(-24)).max(2f64.powi(-150));
        assert!(
            scale_error <= ulp,
            "{}: scale {scale:e}, but amax / 448 is {exact_scale:e}",
            what()
        );
    }
    for (k, (&v, &byte)) in x.iter().zip(bytes).enumerate() {
        let Some(q) = value(byte) else {
            panic!(
                "{}: element {k} ({v:e}) became the NaN byte {byte:#04x}",
                what()
            );
        };
        let v = f64::from(v);
        let back = q * scale;
        let allowed = if amax > 0.0 {
            let y = v / exact_scale;
            half_gap(y) * exact_scale + v.abs() * 2f64.powi(-20) + 448.0 * scale_error
        } else {
            0.0
        };
        assert!(
            (back - v).abs() <= allowed,
            "{}: element {k} is {v:e}, dequantised {back:e} (byte {byte:#04x}, scale {scale:e}), more than {allowed:e} off",
            what()
        );
    }
}

/// Checks a token quantised in blocks of 128 (`scales` one per block).
pub fn check_token(x: &[f32], bytes: &[u8], scales: &[f32], what: &dyn Fn() -> String) {
    let blocks = x.len().div_ceil(128);
    assert_eq!(scales.len(), blocks, "{}: scales", what());
    for (b, scale) in scales.iter().enumerate() {
        let range = b * 128..((b + 1) * 128).min(x.len());
        let block = || format!("{}, block {b}", what());
        check_block(&x[range.clone()], &bytes[range], *scale, &block);
    }
}
