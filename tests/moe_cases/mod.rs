//! The mixture-of-experts cases shared by tests/moe_sim.rs (simulated ranks) and
//! tests/moe_gpu.rs (GPUs): routings, a run of dispatch, the experts and combine through
//! `cudajit::nccl::moe`, and the comparison of every output with the host reference.
#![allow(dead_code)]

use cudajit::bf16;
use cudajit::nccl::moe::fp8;
use cudajit::nccl::moe::reference::{self, RankRouting};
use cudajit::nccl::moe::{DispatchFormat, MoeConfig, MoeGroup, MoeHandle, MoeMode, MoeRanks};
use cudajit::{Buffer, Stream};

pub mod e4m3_reference;
pub mod tiny_fp8_blocks;

/// How tokens pick their experts.
#[derive(Clone, Copy, Debug)]
pub enum Routing {
    /// `top_k` distinct random experts per token (when there are enough experts).
    Random { seed: u64 },
    /// Every pick of every token is expert `e`, so one expert receives everything and a
    /// token's `top_k` picks land in one slot, weighted `top_k` times.
    AllTo(usize),
    /// Random experts, none on rank `r`: rank `r` receives nothing.
    Avoiding { seed: u64, rank: usize },
    /// Random experts, and about one pick in four `-1` (no expert).
    WithNone { seed: u64 },
}

/// One case: the group's shape, the routing and each rank's tokens.
#[derive(Clone, Debug)]
pub struct Case {
    pub experts: usize,
    pub max_tokens: usize,
    pub hidden: usize,
    pub top_k: usize,
    /// Tokens per rank (at most `max_tokens`).
    pub tokens: Vec<usize>,
    pub routing: Routing,
    pub mode: MoeMode,
    pub format: DispatchFormat,
    /// Low latency: dispatch as `dispatch_send` then `dispatch_complete` instead of one
    /// kernel.
    pub staged: bool,
    pub ctas: u32,
    pub threads: u32,
}

/// xorshift64*: reproducible routings without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Rank `rank`'s experts and weights for `tokens` tokens.
pub fn routing_of(case: &Case, ranks: usize, rank: usize, tokens: usize) -> (Vec<i32>, Vec<f32>) {
    let per_rank = case.experts / ranks;
    let seed = match case.routing {
        Routing::Random { seed } | Routing::Avoiding { seed, .. } | Routing::WithNone { seed } => {
            seed
        }
        Routing::AllTo(_) => 0,
    };
    let mut rng = Rng::new(seed * 1000 + rank as u64);
    let mut idx = Vec::with_capacity(tokens * case.top_k);
    let mut weights = Vec::with_capacity(tokens * case.top_k);
    for _ in 0..tokens {
        let mut picked: Vec<i32> = Vec::new();
        for _ in 0..case.top_k {
            let e = match case.routing {
                Routing::AllTo(e) => e as i32,
                Routing::Random { .. } | Routing::WithNone { .. } => {
                    pick_distinct(&mut rng, case.experts, &picked, |_| true)
                }
                Routing::Avoiding { rank: avoided, .. } => {
                    pick_distinct(&mut rng, case.experts, &picked, |e| e / per_rank != avoided)
                }
            };
            let e = match case.routing {
                Routing::WithNone { .. } if rng.below(4) == 0 => -1,
                _ => e,
            };
            picked.push(e);
            // Weights of a few bits, and some that are not exact in bf16 products.
            weights.push((1 + rng.below(255)) as f32 / 256.0 + rng.below(3) as f32 * 1e-3);
        }
        idx.extend(picked);
    }
    (idx, weights)
}

/// A random expert allowed by `ok`, not in `picked` while there are others.
fn pick_distinct(rng: &mut Rng, experts: usize, picked: &[i32], ok: impl Fn(usize) -> bool) -> i32 {
    let allowed: Vec<usize> = (0..experts).filter(|&e| ok(e)).collect();
    let fresh: Vec<usize> = allowed
        .iter()
        .copied()
        .filter(|&e| !picked.contains(&(e as i32)))
        .collect();
    let from = if fresh.is_empty() { &allowed } else { &fresh };
    from[rng.below(from.len())] as i32
}

/// Rank `rank`'s tokens: values that are exact in bf16, some negative, distinct per
/// (rank, token, element).
pub fn tokens_of(hidden: usize, rank: usize, tokens: usize) -> Vec<bf16> {
    (0..tokens * hidden)
        .map(|k| {
            let v = ((rank * 7919 + k * 31) % 2003) as f32 - 1001.0;
            bf16::from_f32(v / 64.0)
        })
        .collect()
}

/// What expert `e` makes of a token: every element scaled by `1 + e / 8` and shifted by
/// `e`, rounded to bf16.
pub fn expert(e: usize, x: bf16) -> bf16 {
    bf16::from_f32(x.to_f32() * (1.0 + e as f32 / 8.0) + e as f32)
}

/// The group's config for `case`.
pub fn config(case: &Case) -> MoeConfig {
    let mut config = match case.mode {
        MoeMode::LowLatency => MoeConfig::low_latency(case.experts, case.max_tokens, case.hidden),
        _ => MoeConfig::high_throughput(case.experts, case.max_tokens, case.hidden),
    };
    config.ctas = case.ctas;
    config.threads = case.threads;
    config.dispatch_format = case.format;
    config
}

/// The first `rows` rows of what dispatch delivered to a rank, in the group's format.
enum Delivered {
    Bf16(Vec<bf16>),
    Fp8 { bytes: Vec<u8>, scales: Vec<f32> },
}

impl Delivered {
    fn read(group: &MoeGroup<'_>, r: usize, rows: usize, hidden: usize) -> Delivered {
        match group.received_fp8() {
            Ok((bytes, scales)) => Delivered::Fp8 {
                bytes: bytes.to_vec(r, rows * hidden).unwrap(),
                scales: scales
                    .to_vec(r, rows * fp8::scales_per_token(hidden))
                    .unwrap(),
            },
            Err(_) => Delivered::Bf16(group.received().unwrap().to_vec(r, rows * hidden).unwrap()),
        }
    }

    /// Checks row `row` against the token `want` it must hold: exactly, or as the host's
    /// FP8 quantisation of it, bit for bit, and within the quantisation bound.
    fn check(&self, row: usize, want: &[bf16], what: &dyn Fn() -> String) {
        let hidden = want.len();
        match self {
            Delivered::Bf16(values) => {
                assert!(
                    values[row * hidden..(row + 1) * hidden] == *want,
                    "{}",
                    what()
                );
            }
            Delivered::Fp8 { bytes, scales } => {
                let blocks = fp8::scales_per_token(hidden);
                let (want_bytes, want_scales) = fp8::quantize(want);
                let got = &bytes[row * hidden..(row + 1) * hidden];
                let got_scales = &scales[row * blocks..(row + 1) * blocks];
                // Against the format's definition first (which shares nothing with the
                // quantiser), then bit for bit against the host's run of the kernels' code.
                let x: Vec<f32> = want.iter().map(|v| v.to_f32()).collect();
                e4m3_reference::check_token(&x, got, got_scales, what);
                assert!(got == want_bytes.as_slice(), "{}: FP8 bytes", what());
                assert!(
                    got_scales
                        .iter()
                        .zip(&want_scales)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{}: FP8 scales {got_scales:?}, expected {want_scales:?}",
                    what()
                );
                for (h, x) in want.iter().enumerate() {
                    let scale = got_scales[h / fp8::CHANNELS_PER_SCALE];
                    let back = fp8::e4m3_to_f32(got[h]) * scale;
                    let x = x.to_f32();
                    assert!(
                        (back - x).abs() <= fp8::quantization_bound(x, scale),
                        "{}: element {h} is {x}, dequantised {back} (scale {scale})",
                        what()
                    );
                }
            }
        }
    }

    /// What the experts see: the tokens, or the dequantised FP8 values rounded to bf16.
    fn values(&self, hidden: usize) -> Vec<bf16> {
        match self {
            Delivered::Bf16(values) => values.clone(),
            Delivered::Fp8 { bytes, scales } => {
                let blocks = fp8::scales_per_token(hidden);
                bytes
                    .iter()
                    .enumerate()
                    .map(|(k, &b)| {
                        let scale =
                            scales[k / hidden * blocks + k % hidden / fp8::CHANNELS_PER_SCALE];
                        bf16::from_f32(fp8::e4m3_to_f32(b) * scale)
                    })
                    .collect()
            }
        }
    }
}

/// Where the tokens come from and the outputs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// The group's windows, written and read from the host (`tokens()`,
    /// `expert_output()`, `combined()`).
    Windows,
    /// The caller's device buffers on each rank's stream (`dispatch_from` or
    /// `dispatch_send_from`, `combine_from`, `combine_into`); the windows are not
    /// touched from the host.
    Buffers,
}

/// Runs `case` on `ranks` (every rank local to this process) and compares every output
/// with the host reference, exactly.
pub fn run(ranks: MoeRanks<'_>, case: &Case) {
    run_with(ranks, case, Io::Windows)
}

/// [`run`], the tokens and outputs moved as `io` says.
pub fn run_with(ranks: MoeRanks<'_>, case: &Case, io: Io) {
    match case.mode {
        MoeMode::LowLatency => run_low_latency(ranks, case, io),
        _ => run_high_throughput(ranks, case, io),
    }
}

/// Rank `r`'s tokens in a device buffer of its stream, with a row more than the routing
/// has (dispatch takes the first `tokens × hidden`).
fn token_buffer(stream: &Stream, tokens: &[bf16], hidden: usize) -> Buffer<bf16> {
    let mut padded = tokens.to_vec();
    padded.extend(std::iter::repeat_n(bf16::from_f32(7.0), hidden));
    stream.clone_htod(&padded).unwrap()
}

/// Combines on every rank, into the caller's buffers with `Io::Buffers` (read back after
/// every rank launched), and returns each rank's combined tokens.
fn combine_all(
    group: &MoeGroup<'_>,
    handle: &MoeHandle,
    streams: &[Stream],
    expert_outputs: &[Vec<bf16>],
    case: &Case,
    io: Io,
) -> Vec<Vec<bf16>> {
    let len = |r: usize| case.tokens[r] * case.hidden;
    let mut combined = Vec::new();
    for (r, stream) in streams.iter().enumerate() {
        match io {
            Io::Windows => group.combine(r, stream, handle).unwrap(),
            Io::Buffers => {
                let outputs = stream.clone_htod(&expert_outputs[r]).unwrap();
                // Exactly tokens × hidden (one element for none: no empty allocation).
                let mut into = stream.alloc_zeros::<bf16>(len(r).max(1)).unwrap();
                group.combine_from(r, stream, handle, &outputs).unwrap();
                group.combine_into(r, stream, handle, &mut into).unwrap();
                combined.push(into);
            }
        }
    }
    for stream in streams {
        stream.synchronize().unwrap();
    }
    match io {
        Io::Windows => (0..streams.len())
            .map(|r| group.combined().to_vec(r, len(r)).unwrap())
            .collect(),
        Io::Buffers => combined
            .iter()
            .zip(streams)
            .enumerate()
            .map(|(r, (buffer, stream))| {
                let mut values = stream.clone_dtoh(buffer).unwrap();
                values.truncate(len(r));
                values
            })
            .collect(),
    }
}

/// Each rank's tokens, experts and weights for `case`.
fn inputs(case: &Case, n: usize) -> Vec<(Vec<bf16>, Vec<i32>, Vec<f32>)> {
    (0..n)
        .map(|r| {
            let (idx, weights) = routing_of(case, n, r, case.tokens[r]);
            (tokens_of(case.hidden, r, case.tokens[r]), idx, weights)
        })
        .collect()
}

fn routings(inputs: &[(Vec<bf16>, Vec<i32>, Vec<f32>)]) -> Vec<RankRouting<'_>> {
    inputs
        .iter()
        .map(|(tokens, idx, weights)| RankRouting {
            tokens,
            topk_idx: idx,
            topk_weights: weights,
        })
        .collect()
}

/// The received rows, counts, slots and the combined tokens of a low-latency group.
fn run_low_latency(ranks: MoeRanks<'_>, case: &Case, io: Io) {
    let n = ranks.nranks();
    assert_eq!(ranks.local_ranks(), n, "every rank in this process");
    assert_eq!(case.tokens.len(), n);
    let config = config(case);
    let group = MoeGroup::new(ranks, config).unwrap();
    let mut handle = group.handle(case.top_k).unwrap();
    let inputs = inputs(case, n);
    let streams: Vec<_> = (0..n).map(|r| group.stream(r).unwrap()).collect();
    let mut token_buffers = Vec::new();
    for (r, (tokens, idx, weights)) in inputs.iter().enumerate() {
        match io {
            Io::Windows => group.tokens().copy_from_host(r, tokens).unwrap(),
            Io::Buffers => token_buffers.push(token_buffer(&streams[r], tokens, case.hidden)),
        }
        handle.set_routing(r, idx, weights).unwrap();
    }
    let routings = routings(&inputs);
    let want = reference::dispatch(&config, n, case.top_k, &routings);

    for (r, stream) in streams.iter().enumerate() {
        match (io, case.staged) {
            (Io::Windows, true) => group.dispatch_send(r, stream, &handle),
            (Io::Windows, false) => group.dispatch(r, stream, &handle),
            (Io::Buffers, true) => group.dispatch_send_from(r, stream, &handle, &token_buffers[r]),
            (Io::Buffers, false) => group.dispatch_from(r, stream, &handle, &token_buffers[r]),
        }
        .unwrap();
    }
    if case.staged {
        for (r, stream) in streams.iter().enumerate() {
            group.dispatch_complete(r, stream, &handle).unwrap();
        }
    }
    for stream in &streams {
        stream.synchronize().unwrap();
    }

    let per_rank = case.experts / n;
    // The experts' outputs of every rank, for the reference combine.
    let mut outputs = Vec::with_capacity(n);
    let row = |local: usize, source: usize, slot: usize| group.received_row(local, source, slot);
    for r in 0..n {
        let counts = handle.read_received_counts(r).unwrap();
        assert_eq!(
            counts, want.received_counts[r],
            "{case:?}: received counts of rank {r}"
        );
        let totals = handle.read_expert_counts(r).unwrap();
        assert_eq!(
            totals, want.expert_counts[r],
            "{case:?}: expert counts of rank {r}"
        );
        let all_rows = case.experts * case.max_tokens;
        let delivered = Delivered::read(&group, r, all_rows, case.hidden);
        for local in 0..per_rank {
            for source in 0..n {
                for slot in 0..counts[local * n + source] as usize {
                    let at = row(local, source, slot);
                    let what = || {
                        format!("{case:?}: slot {slot} from rank {source} at local expert {local} of rank {r}")
                    };
                    delivered.check(
                        at / case.hidden,
                        &want.received[r][at..at + case.hidden],
                        &what,
                    );
                }
            }
        }
        let received = delivered.values(case.hidden);
        let pairs = case.tokens[r] * case.top_k;
        let slots = handle.slots().unwrap().to_vec(r, pairs).unwrap();
        for (k, (&got, &expected)) in slots.iter().zip(&want.slots[r]).enumerate() {
            if expected >= 0 {
                assert_eq!(got, expected, "{case:?}: slot {k} of rank {r}");
            }
        }
        // The experts run on the host over what the device received, which is the
        // reference's (rows no token went to stay zero).
        let mut output = vec![bf16::ZERO; received.len()];
        for local in 0..per_rank {
            let e = r * per_rank + local;
            for source in 0..n {
                let at = row(local, source, 0);
                for k in at..at + counts[local * n + source] as usize * case.hidden {
                    output[k] = expert(e, received[k]);
                }
            }
        }
        if io == Io::Windows {
            group.expert_output().copy_from_host(r, &output).unwrap();
        }
        outputs.push(output);
    }

    let got_combined = combine_all(&group, &handle, &streams, &outputs, case, io);
    let combined = reference::combine(&config, n, case.top_k, &routings, &want.slots, &outputs);
    for (r, (want, got)) in combined.iter().zip(&got_combined).enumerate() {
        if let Some(k) = (0..got.len()).find(|&k| got[k].to_bits() != want[k].to_bits()) {
            panic!(
                "{case:?}: combined element {k} (token {}) of rank {r} is {}, expected {}",
                k / case.hidden,
                got[k],
                want[k]
            );
        }
    }
    handle.close().unwrap();
    group.close().unwrap();
}

/// The layout, the flat received tokens and their routing, the combined tokens and the
/// backward combine's weights of a high-throughput group.
fn run_high_throughput(ranks: MoeRanks<'_>, case: &Case, io: Io) {
    let n = ranks.nranks();
    assert_eq!(ranks.local_ranks(), n, "every rank in this process");
    let config = config(case);
    let group = MoeGroup::new(ranks, config).unwrap();
    let mut handle = group.handle(case.top_k).unwrap();
    let inputs = inputs(case, n);
    let streams: Vec<_> = (0..n).map(|r| group.stream(r).unwrap()).collect();
    let mut token_buffers = Vec::new();
    for (r, (tokens, idx, weights)) in inputs.iter().enumerate() {
        match io {
            Io::Windows => group.tokens().copy_from_host(r, tokens).unwrap(),
            Io::Buffers => token_buffers.push(token_buffer(&streams[r], tokens, case.hidden)),
        }
        handle.set_routing(r, idx, weights).unwrap();
    }
    let routings = routings(&inputs);
    let layout = reference::high_throughput_layout(&config, n, case.top_k, &routings);
    let want = reference::high_throughput_dispatch(&config, n, case.top_k, &routings, &layout);
    for (r, stream) in streams.iter().enumerate() {
        group.layout(r, stream, &mut handle).unwrap();
    }
    for (r, stream) in streams.iter().enumerate() {
        match io {
            Io::Windows => group.dispatch(r, stream, &handle),
            Io::Buffers => group.dispatch_from(r, stream, &handle, &token_buffers[r]),
        }
        .unwrap();
    }
    for stream in &streams {
        stream.synchronize().unwrap();
    }
    let per_rank = case.experts / n;
    let k = case.top_k;
    let mut outputs = Vec::with_capacity(n);
    let mut grads = Vec::with_capacity(n);
    for r in 0..n {
        let tokens = case.tokens[r];
        let read = |t: &cudajit::nccl::moe::SymmetricTensor<i32>, len| t.to_vec(r, len).unwrap();
        assert_eq!(
            read(handle.positions().unwrap(), tokens * n),
            layout.positions[r],
            "{case:?}: positions of rank {r}"
        );
        assert_eq!(
            read(handle.received_counts(), n),
            layout.received_counts[r],
            "{case:?}: received counts of rank {r}"
        );
        assert_eq!(
            read(handle.source_expert_counts().unwrap(), n * per_rank),
            layout.source_expert_counts[r],
            "{case:?}: per-source expert counts of rank {r}"
        );
        assert_eq!(
            handle.read_expert_counts(r).unwrap(),
            layout.expert_counts[r],
            "{case:?}: expert counts of rank {r}"
        );
        assert_eq!(
            read(handle.received_offsets().unwrap(), n + 1),
            layout.received_offsets[r],
            "{case:?}: offsets of rank {r}"
        );
        let total = handle.read_received_tokens(r).unwrap();
        let delivered = Delivered::read(&group, r, total, case.hidden);
        for row in 0..total {
            let what = || format!("{case:?}: received row {row} of rank {r}");
            let want_row = &want.received[r][row * case.hidden..(row + 1) * case.hidden];
            delivered.check(row, want_row, &what);
        }
        let received = delivered.values(case.hidden);
        let idx = read(handle.received_topk_idx().unwrap(), total * k);
        assert_eq!(
            idx, want.received_topk_idx[r],
            "{case:?}: received top-k of rank {r}"
        );
        let weights = handle
            .received_topk_weights()
            .unwrap()
            .to_vec(r, total * k)
            .unwrap();
        assert!(
            weights
                .iter()
                .zip(&want.received_topk_weights[r])
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{case:?}: received weights of rank {r}"
        );
        // Each row's result on this rank: its first local expert's function of it (rows of
        // no local expert cannot arrive).
        let mut output = vec![bf16::ZERO; received.len()];
        for row in 0..total {
            let local = idx[row * k..(row + 1) * k]
                .iter()
                .copied()
                .find(|&e| e >= 0);
            let e = r * per_rank + local.expect("a received token has a local expert") as usize;
            for h in 0..case.hidden {
                output[row * case.hidden + h] = expert(e, received[row * case.hidden + h]);
            }
        }
        if io == Io::Windows {
            group.expert_output().copy_from_host(r, &output).unwrap();
        }
        outputs.push(output);
        // Gradients of the received weights for the backward form.
        let grad: Vec<f32> = weights
            .iter()
            .enumerate()
            .map(|(q, w)| w * 2.0 + (r * 1000 + q) as f32)
            .collect();
        handle
            .received_topk_weights()
            .unwrap()
            .copy_from_host(r, &grad)
            .unwrap();
        grads.push(grad);
    }
    let combined = reference::high_throughput_combine(&config, n, k, &routings, &layout, &outputs);
    let combined_weights =
        reference::high_throughput_combine_weights(n, k, &routings, &layout, &grads);
    // The expert outputs in buffers: the received rows, and one more where it fits.
    let output_buffers: Vec<Vec<bf16>> = outputs
        .iter()
        .map(|output| {
            let mut padded = output.clone();
            if padded.len() < group.expert_output().len() {
                padded.extend(std::iter::repeat_n(bf16::from_f32(-3.0), case.hidden));
            }
            padded
        })
        .collect();
    for backward in [false, true] {
        let got_combined = if backward {
            // The backward form over what the forward one left in the windows.
            for (r, stream) in streams.iter().enumerate() {
                group.combine_backward(r, stream, &handle).unwrap();
            }
            for stream in &streams {
                stream.synchronize().unwrap();
            }
            (0..n)
                .map(|r| {
                    group
                        .combined()
                        .to_vec(r, case.tokens[r] * case.hidden)
                        .unwrap()
                })
                .collect()
        } else {
            combine_all(&group, &handle, &streams, &output_buffers, case, io)
        };
        for (r, got) in got_combined.iter().enumerate() {
            if let Some(q) = (0..got.len()).find(|&q| got[q].to_bits() != combined[r][q].to_bits())
            {
                panic!(
                    "{case:?}: combined element {q} (token {}) of rank {r} is {}, expected {} (backward {backward})",
                    q / case.hidden,
                    got[q],
                    combined[r][q]
                );
            }
            if backward {
                let got = handle
                    .combined_weights()
                    .unwrap()
                    .to_vec(r, case.tokens[r] * k)
                    .unwrap();
                assert!(
                    got.iter()
                        .zip(&combined_weights[r])
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{case:?}: combined weights of rank {r}: {got:?}, expected {:?}",
                    combined_weights[r]
                );
            }
        }
    }
    handle.close().unwrap();
    group.close().unwrap();
}
