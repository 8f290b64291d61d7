//! FP8 e4m3 tokens with a scale per token and 128 channels (DeepEP's FP8 dispatch): each
//! block of 128 elements of a token is sent as bytes `e4m3(x * 448 / amax)` and the
//! `f32` scale `amax / 448`, so `x ≈ e4m3_value(byte) * scale` within half an e4m3 step
//! (a relative 2^-4, or 2^-10 of the scale below e4m3's normal range).
//!
//! `448 / amax` overflows `f32` when `amax` is below `448 / f32::MAX` (about 1.3e-36, bf16
//! subnormals included): such a block would turn its zeros into NaN (`0 * inf`) and every
//! other element into ±448. A block whose `amax` is below 2^-64 is therefore lifted by
//! 2^64 first (exact: a power of two), so its multiplier `448 / (amax * 2^64)` stays
//! finite ([`block_scale`]); other blocks are multiplied by 1, which changes no bit.
//!
//! The conversion is written in the kernel language (integer and float arithmetic, the
//! same on the GPU and the simulator): round to nearest even, saturating to ±448 (CUDA's
//! `__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)`); the host functions here are
//! the same code, the reference the tests compare with bit for bit.

use cudajit_core::device::{
    lane_id, shfl_xor_sync, slice_at, slice_at_mut, vload8, vstore2, FULL_WARP,
};

use cudajit::bf16;
use cudajit::device;

/// Channels per scale.
pub const CHANNELS_PER_SCALE: usize = 128;

/// The largest finite e4m3 value.
pub const E4M3_MAX: f32 = 448.0;

/// Scales per token of `hidden` elements.
#[device]
pub fn scales_per_token(hidden: usize) -> usize {
    (hidden + 127) / 128
}

/// `x` as e4m3 bits: round to nearest even, finite values beyond ±448 saturated to ±448,
/// NaN to NaN (`0x7f`).
#[device]
pub fn e4m3_from_f32(x: f32) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 24) & 0x80) as u8;
    let magnitude = bits & 0x7fff_ffff;
    if magnitude > 0x7f80_0000 {
        return 0x7f;
    }
    let a = f32::from_bits(magnitude);
    let code = if a >= E4M3_MAX {
        0x7eu32
    } else if a < 0.015625 {
        // Below 2^-6: a subnormal, in steps of 2^-9 (a count of 8 is the smallest
        // normal, whose code is 8 too).
        let steps = a * 512.0;
        let whole = steps.floor();
        let rest = steps - whole;
        let count = whole as u32;
        if rest > 0.5 || (rest == 0.5 && count % 2 == 1) {
            count + 1
        } else {
            count
        }
    } else {
        let exponent = (magnitude >> 23) + 7 - 127;
        let mantissa = magnitude & 0x7f_ffff;
        let kept = mantissa >> 20;
        let rest = mantissa & 0xf_ffff;
        let up = rest > 0x8_0000 || (rest == 0x8_0000 && kept % 2 == 1);
        // A carry out of the mantissa moves into the exponent, as it should; values below
        // 448 round to at most 448 (0x7e), so no code reaches NaN's.
        (exponent << 3) + kept + if up { 1 } else { 0 }
    };
    sign | code as u8
}

/// The value of e4m3 bits.
pub fn e4m3_to_f32(byte: u8) -> f32 {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((byte >> 3) & 0xf);
    let mantissa = f32::from(byte & 7);
    if exponent == 15 && byte & 7 == 7 {
        return f32::NAN;
    }
    if exponent == 0 {
        return sign * mantissa * (2.0f32).powi(-9);
    }
    sign * (1.0 + mantissa / 8.0) * (2.0f32).powi(exponent - 7)
}

/// The scale of a block whose largest magnitude is `amax`, and what its elements are
/// multiplied by, in this order, before their conversion: `(scale, lift, inverse)`, so
/// that `e4m3((x * lift) * inverse)` is `e4m3(x * 448 / amax)`. Normally `amax / 448`, 1
/// and `448 / amax`; below 2^-64, where `448 / amax` could overflow to infinity, the lift
/// is 2^64 and the inverse `448 / (amax * 2^64)` (both products exact or finite: `|x| *
/// 2^64 < 1`, `amax * 2^64 >= 2^-69` for any non-zero bf16). An all-zero block gets 1, 1
/// and 1.
#[device]
pub fn block_scale(amax: f32) -> (f32, f32, f32) {
    if amax >= 5.421011e-20 {
        (amax / E4M3_MAX, 1.0, E4M3_MAX / amax)
    } else if amax > 0.0 {
        let lift = 18446744073709551616.0f32;
        (amax / E4M3_MAX, lift, E4M3_MAX / (amax * lift))
    } else {
        (1.0, 1.0, 1.0)
    }
}

/// Quantises the `hidden` `bf16` elements at `source` into `hidden` e4m3 bytes at
/// `destination` and one `f32` scale per 128 channels at `scales`, by the 32 lanes of a
/// warp: a half warp per block of 128, 8 elements per lane, the block's largest magnitude
/// by `shfl_xor_sync` within the half warp. 16-byte loads when `hidden` is a multiple of
/// 8 (and 16-byte stores, a lane pair's bytes, when it is one of 16; 8-byte stores
/// otherwise), elements when it is not.
#[device]
pub fn quantize_row(source: usize, destination: usize, scales: usize, hidden: usize) {
    let from = unsafe { slice_at::<bf16>(source, hidden) };
    let lane = lane_id() as usize;
    let half = lane / 16;
    let blocks = scales_per_token(hidden);
    let to_scales = unsafe { slice_at_mut::<f32>(scales, blocks) };
    // Blocks two at a time: every lane of the warp takes part in every round, so the
    // shuffles see the whole warp.
    let mut pair = 0;
    while pair * 2 < blocks {
        let block = pair * 2 + half;
        let first = block * 128 + (lane % 16) * 8;
        let mut x = [0.0f32; 8];
        if hidden % 8 == 0 {
            if first < hidden {
                let (a, b, c, d, e, f, g, h) = vload8(from, first / 8);
                x[0] = a.to_f32();
                x[1] = b.to_f32();
                x[2] = c.to_f32();
                x[3] = d.to_f32();
                x[4] = e.to_f32();
                x[5] = f.to_f32();
                x[6] = g.to_f32();
                x[7] = h.to_f32();
            }
        } else {
            for k in 0..8 {
                if first + k < hidden {
                    x[k] = from[first + k].to_f32();
                }
            }
        }
        let mut amax = 0.0f32;
        for k in 0..8 {
            amax = amax.max(x[k].abs());
        }
        let mut offset = 8;
        while offset > 0 {
            amax = amax.max(shfl_xor_sync(FULL_WARP, amax, offset));
            offset /= 2;
        }
        let (scale, lift, inverse) = block_scale(amax);
        if lane % 16 == 0 && block < blocks {
            to_scales[block] = scale;
        }
        if hidden % 8 == 0 {
            let mut packed = 0u64;
            for k in 0..8 {
                packed |= (e4m3_from_f32(x[k] * lift * inverse) as u64) << (8 * k);
            }
            let to = unsafe { slice_at_mut::<u64>(destination, hidden / 8) };
            if hidden % 16 == 0 {
                // Pairs of lanes: the even one stores both halves as one 16-byte vector.
                let next = shfl_xor_sync(FULL_WARP, packed, 1);
                if lane % 2 == 0 && first < hidden {
                    vstore2(to, first / 16, (packed, next));
                }
            } else if first < hidden {
                to[first / 8] = packed;
            }
        } else {
            let to = unsafe { slice_at_mut::<u8>(destination, hidden) };
            for k in 0..8 {
                if first + k < hidden {
                    to[first + k] = e4m3_from_f32(x[k] * lift * inverse);
                }
            }
        }
        pair += 1;
    }
}

/// A token quantised on the host as [`quantize_row`] does on the device: its bytes and
/// scales.
pub fn quantize(token: &[bf16]) -> (Vec<u8>, Vec<f32>) {
    let mut bytes = Vec::with_capacity(token.len());
    let mut scales = Vec::with_capacity(scales_per_token(token.len()));
    for block in token.chunks(CHANNELS_PER_SCALE) {
        let amax = block.iter().fold(0.0f32, |m, x| m.max(x.to_f32().abs()));
        let (scale, lift, inverse) = block_scale(amax);
        scales.push(scale);
        bytes.extend(
            block
                .iter()
                .map(|x| e4m3_from_f32(x.to_f32() * lift * inverse)),
        );
    }
    (bytes, scales)
}

/// The bound `quantize` keeps: `|x - e4m3_to_f32(byte) * scale|` is at most this for an
/// element `x` of a block with scale `scale` (half an e4m3 step of the scaled value, in
/// the normal range relative, below it absolute; plus the rounding of the scale itself:
/// relative while it is a normal `f32`, at most half of `f32`'s smallest subnormal times
/// 448 when the block's `amax` is below `448 * 2^-126` and its scale a subnormal).
pub fn quantization_bound(x: f32, scale: f32) -> f32 {
    let subnormal_scale = E4M3_MAX * f32::from_bits(1);
    (x.abs() * 0.0625).max(scale * (2.0f32).powi(-10)) + x.abs() * 1e-6 + subnormal_scale
}
