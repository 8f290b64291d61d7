//! FP8 dispatch of blocks whose largest magnitude is tiny but not zero: below `448 /
//! f32::MAX` (about 1.3e-36) the multiplier `448 / amax` would overflow, turning zeros
//! into NaN and every other element into ±amax. Every rank sends one token to expert 0
//! (rank 0), each block of 128 of another magnitude, and rank 0's received bytes and
//! scales are checked against the e4m3 format's definition ([`super::e4m3_reference`]).

use cudajit::bf16;
use cudajit::nccl::moe::{DispatchFormat, MoeConfig, MoeGroup, MoeMode, MoeRanks};

use super::e4m3_reference;

/// Hidden size: four blocks of 128.
pub const HIDDEN: usize = 512;

/// The issue's block: `[1e-37, 0, 5e-38, -2e-38, 0, ...]`.
pub const ISSUE_BLOCK: [f32; 4] = [1e-37, 0.0, 5e-38, -2e-38];

/// Rank `rank`'s token: block 0 the issue's values (rank 0) or zeros (others: an
/// all-zero block), block 1 bf16 subnormals (2^-133 is the smallest), block 2 values
/// around 2^-64, where the lift starts, block 3 ordinary values.
pub fn token(rank: usize) -> Vec<bf16> {
    let mut x = vec![0.0f32; HIDDEN];
    if rank == 0 {
        x[..4].copy_from_slice(&ISSUE_BLOCK);
    }
    let tiny = 2f32.powi(-133);
    for k in 0..128 {
        let sign = if k % 3 == 0 { -1.0 } else { 1.0 };
        // Subnormals of 1 to 127 units (rank 1: a single smallest one).
        x[128 + k] = match rank {
            1 => f32::from(u8::from(k == 5)) * tiny,
            _ => sign * (k as f32) * tiny,
        };
        // Just below and just above 2^-64.
        x[256 + k] = sign * 2f32.powi(-64) * (0.5 + k as f32 / 128.0);
        x[384 + k] = sign * (1.0 + (k * (rank + 3)) as f32 / 16.0);
    }
    x.into_iter().map(bf16::from_f32).collect()
}

/// Dispatches every rank's [`token`] to expert 0 in `mode`, FP8, and checks what rank 0
/// received from each rank.
pub fn run(ranks: MoeRanks<'_>, mode: MoeMode) {
    let n = ranks.nranks();
    assert_eq!(ranks.local_ranks(), n, "every rank in this process");
    let mut config = match mode {
        MoeMode::LowLatency => MoeConfig::low_latency(n, 1, HIDDEN),
        _ => MoeConfig::high_throughput(n, 1, HIDDEN),
    };
    config.dispatch_format = DispatchFormat::Fp8E4m3;
    config.ctas = 2;
    config.threads = 64;
    let group = MoeGroup::new(ranks, config).unwrap();
    let mut handle = group.handle(1).unwrap();
    let streams: Vec<_> = (0..n).map(|r| group.stream(r).unwrap()).collect();
    for r in 0..n {
        group.tokens().copy_from_host(r, &token(r)).unwrap();
        handle.set_routing(r, &[0], &[1.0]).unwrap();
    }
    if mode == MoeMode::HighThroughput {
        for (r, stream) in streams.iter().enumerate() {
            group.layout(r, stream, &mut handle).unwrap();
        }
    }
    for (r, stream) in streams.iter().enumerate() {
        group.dispatch(r, stream, &handle).unwrap();
    }
    for stream in &streams {
        stream.synchronize().unwrap();
    }
    let (bytes, scales) = group.received_fp8().unwrap();
    let blocks = HIDDEN / 128;
    for source in 0..n {
        // Where source's token landed on rank 0.
        let row = match mode {
            MoeMode::LowLatency => group.received_row(0, source, 0) / HIDDEN,
            _ => {
                let offsets = handle.received_offsets().unwrap().to_vec(0, n + 1).unwrap();
                offsets[source] as usize
            }
        };
        let got = bytes.to_vec(0, (row + 1) * HIDDEN).unwrap();
        let got = &got[row * HIDDEN..];
        let got_scales = scales.to_vec(0, (row + 1) * blocks).unwrap();
        let got_scales = &got_scales[row * blocks..];
        let x: Vec<f32> = token(source).iter().map(|v| v.to_f32()).collect();
        let what = || format!("{mode:?}, {n} ranks, the token of rank {source}");
        e4m3_reference::check_token(&x, got, got_scales, &what);
        if source == 0 {
            // The issue's numbers: no NaN for the zeros, each value within 2^-4 of itself.
            for (k, &want) in ISSUE_BLOCK.iter().enumerate() {
                let back = e4m3_reference::value(got[k]).unwrap() * f64::from(got_scales[0]);
                let want = f64::from(bf16::from_f32(want).to_f32());
                assert!(
                    (back - want).abs() <= want.abs() / 16.0,
                    "{}: element {k} is {want:e}, dequantised {back:e}",
                    what()
                );
            }
        }
    }
}
