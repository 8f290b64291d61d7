//! Mixture-of-experts dispatch and combine (`cudajit::nccl::moe`) on 2, 4 and 8 simulated
//! ranks, every output compared exactly with the host reference: random and skewed
//! routings, top-k 1 to 8, tokens at and below the maximum (and none), hidden sizes that
//! are and are not multiples of the 8-element vector, more tokens than a CTA has threads;
//! and the errors of every limit the group checks. No GPU and no NCCL library needed.

mod common;
mod moe_cases;

/// The benchmark's baseline (examples/moe_bench/), whose kernels and plan run here.
pub type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;
#[path = "../examples/moe_bench/baseline.rs"]
#[allow(dead_code)]
mod baseline;

use cudajit::bf16;
use cudajit::nccl::moe::{DispatchFormat, MoeConfig, MoeError, MoeGroup, MoeMode, MoeRanks};
use cudajit::nccl::sim::SimWorld;

use common::sim::world;
use moe_cases::{run, run_with, Case, Io, Routing};

/// A case of `ranks` ranks: rank 0 at the maximum, rank 1 with none, the others below.
fn case(ranks: usize, hidden: usize, top_k: usize, routing: Routing) -> Case {
    let max_tokens = 9;
    let tokens = (0..ranks)
        .map(|r| match r {
            0 => max_tokens,
            1 => 0,
            _ => max_tokens - 1 - r % 4,
        })
        .collect();
    Case {
        experts: (2 * ranks).max(8),
        max_tokens,
        hidden,
        top_k,
        tokens,
        routing,
        mode: MoeMode::LowLatency,
        format: DispatchFormat::Bf16,
        staged: false,
        ctas: 3,
        threads: 64,
    }
}

fn run_on(ranks: usize, case: &Case) {
    eprintln!("{ranks} ranks: {case:?}");
    let world = world(ranks);
    run(MoeRanks::Sim(&world), case);
}

#[test]
fn random_routings_top_k_1_to_8_on_2_4_8_ranks() {
    for ranks in [2, 4, 8] {
        for top_k in 1..=8 {
            // Vectors (hidden 24 = 3 × 8) on even top-k, elements (hidden 13) on odd.
            let hidden = if top_k % 2 == 0 { 24 } else { 13 };
            let seed = (ranks * 10 + top_k) as u64;
            run_on(ranks, &case(ranks, hidden, top_k, Routing::Random { seed }));
        }
    }
}

#[test]
fn skewed_routings_on_2_4_8_ranks() {
    for ranks in [2, 4, 8] {
        // Everything to one expert, and each token's picks all in one slot.
        run_on(ranks, &case(ranks, 16, 1, Routing::AllTo(ranks - 1)));
        run_on(ranks, &case(ranks, 13, 3, Routing::AllTo(0)));
        // The last rank receives nothing.
        let avoid = Routing::Avoiding {
            seed: ranks as u64,
            rank: ranks - 1,
        };
        run_on(ranks, &case(ranks, 24, 2, avoid));
        // Picks of no expert (-1).
        let none = Routing::WithNone {
            seed: 7 + ranks as u64,
        };
        run_on(ranks, &case(ranks, 8, 4, none));
    }
}

/// The send half and the completion as two kernels give what one kernel gives.
#[test]
fn staged_dispatch_on_2_4_8_ranks() {
    for ranks in [2, 4, 8] {
        let mut c = case(ranks, 24, 3, Routing::Random { seed: 99 });
        c.staged = true;
        run_on(ranks, &c);
    }
}

/// More tokens than a CTA has threads (the dispatch scans them in chunks), fewer CTAs
/// than experts, a hidden size of one element past a vector multiple.
#[test]
fn chunks_of_tokens_and_experts_per_cta() {
    let c = Case {
        experts: 12,
        max_tokens: 70,
        hidden: 17,
        top_k: 3,
        tokens: vec![70, 65],
        routing: Routing::Random { seed: 5 },
        mode: MoeMode::LowLatency,
        format: DispatchFormat::Bf16,
        staged: false,
        ctas: 2,
        threads: 32,
    };
    run_on(2, &c);
}

/// One group dispatches twice with different routings: the second's counts replace the
/// first's and combine follows the second's slots.
#[test]
fn a_second_routing_replaces_the_first() {
    let world = world(4);
    let first = case(4, 16, 2, Routing::Random { seed: 1 });
    run(MoeRanks::Sim(&world), &first);
    let second = case(4, 16, 5, Routing::AllTo(3));
    run(MoeRanks::Sim(&world), &second);
}

/// The buffer-taking forms (`dispatch_from`, `dispatch_send_from`, `combine_from`,
/// `combine_into`, the tokens and outputs in simulator buffers of each rank's stream and
/// the windows not written from the host) give the reference's bits, as the window forms
/// do: both modes, the staged dispatch, FP8 dispatch, vectors and elements, on 2 and 4
/// ranks.
#[test]
fn buffer_forms_of_dispatch_and_combine_on_2_4_ranks() {
    for ranks in [2, 4] {
        for (hidden, top_k) in [(24, 2), (13, 3)] {
            let seed = (ranks * 100 + hidden) as u64;
            let low = case(ranks, hidden, top_k, Routing::Random { seed });
            let mut staged = low.clone();
            staged.staged = true;
            for c in [
                low.clone(),
                staged,
                high_throughput(low.clone()),
                fp8(low.clone()),
            ] {
                eprintln!("{ranks} ranks, buffers: {c:?}");
                let world = world(ranks);
                run_with(MoeRanks::Sim(&world), &c, Io::Buffers);
                run_with(MoeRanks::Sim(&world), &c, Io::Windows);
            }
        }
    }
}

/// A buffer shorter than what an operation copies is a `Mismatch` naming it, before
/// anything is copied or launched; memory of the other backend is an error.
#[test]
fn buffer_sizes_are_checked() {
    let world = world(2);
    let ranks = MoeRanks::Sim(&world);
    let mut config = MoeConfig::low_latency(4, 4, 8);
    config.ctas = 2;
    config.threads = 32;
    let group = MoeGroup::new(ranks, config).unwrap();
    let mut handle = group.handle(2).unwrap();
    // Three tokens of hidden 8 on rank 0.
    handle
        .set_routing(0, &[0, 1, 2, 3, 1, 2], &[0.5; 6])
        .unwrap();
    let stream = group.stream(0).unwrap();
    let short = stream.alloc_zeros::<bf16>(3 * 8 - 1).unwrap();
    assert_eq!(
        dimension(group.dispatch_from(0, &stream, &handle, &short)),
        "tokens buffer"
    );
    assert_eq!(
        dimension(group.dispatch_send_from(0, &stream, &handle, &short)),
        "tokens buffer"
    );
    let mut short_out = stream.alloc_zeros::<bf16>(3 * 8 - 1).unwrap();
    assert_eq!(
        dimension(group.combine_into(0, &stream, &handle, &mut short_out)),
        "combined buffer"
    );
    let outputs = stream
        .alloc_zeros::<bf16>(group.expert_output().len() - 1)
        .unwrap();
    assert_eq!(
        dimension(group.combine_from(0, &stream, &handle, &outputs)),
        "expert output buffer"
    );
    // Nothing was launched: rank 0 waits for no one.
    stream.synchronize().unwrap();
    // The checks of every launch come first: another rank's stream.
    let tokens = stream.alloc_zeros::<bf16>(3 * 8).unwrap();
    let other = group.stream(1).unwrap();
    assert_eq!(
        dimension(group.dispatch_from(0, &other, &handle, &tokens)),
        "stream"
    );

    let mut high = config;
    high.mode = MoeMode::HighThroughput;
    let high_group = MoeGroup::new(ranks, high).unwrap();
    let mut high_handle = high_group.handle(2).unwrap();
    high_handle.set_routing(0, &[0, 1], &[0.5; 2]).unwrap();
    high_group.layout(0, &stream, &mut high_handle).unwrap();
    let rows_and_a_half = stream.alloc_zeros::<bf16>(8 + 4).unwrap();
    assert_eq!(
        dimension(high_group.combine_from(0, &stream, &high_handle, &rows_and_a_half)),
        "expert output buffer"
    );
    let error = high_group
        .dispatch_send_from(0, &stream, &high_handle, &tokens)
        .unwrap_err();
    assert!(matches!(error, MoeError::WrongMode { .. }), "{error}");
}

/// A high-throughput `combine_from` buffer of whole rows, but fewer than the tokens the
/// rank received, is a `Mismatch` naming it (the missing rows would be the window's stale
/// ones); one row per received token is enough.
#[test]
fn high_throughput_combine_from_needs_a_row_per_received_token() {
    let world = world(2);
    let ranks = MoeRanks::Sim(&world);
    let mut config = MoeConfig::high_throughput(4, 4, 8);
    config.ctas = 2;
    config.threads = 32;
    let group = MoeGroup::new(ranks, config).unwrap();
    let mut handle = group.handle(1).unwrap();
    // Rank 0 keeps two of its three tokens (experts 0, 1 live on rank 0), rank 1 sends it
    // one: rank 0 receives 3 tokens; rank 1 receives 2.
    handle.set_routing(0, &[0, 1, 2], &[1.0; 3]).unwrap();
    handle.set_routing(1, &[3, 0], &[1.0; 2]).unwrap();
    let streams = [group.stream(0).unwrap(), group.stream(1).unwrap()];
    for (r, stream) in streams.iter().enumerate() {
        group.layout(r, stream, &mut handle).unwrap();
    }
    for (r, stream) in streams.iter().enumerate() {
        group.dispatch(r, stream, &handle).unwrap();
    }
    assert_eq!(handle.read_received_tokens(0).unwrap(), 3);
    let two_rows = streams[0].alloc_zeros::<bf16>(2 * 8).unwrap();
    let error = group
        .combine_from(0, &streams[0], &handle, &two_rows)
        .unwrap_err();
    eprintln!("{error}");
    assert_eq!(error.dimension(), Some("expert output buffer"));
    assert!(error.to_string().contains("3 × 8"), "{error}");
    for (r, stream) in streams.iter().enumerate() {
        let rows = handle.read_received_tokens(r).unwrap();
        let outputs = stream.alloc_zeros::<bf16>(rows * 8).unwrap();
        group.combine_from(r, stream, &handle, &outputs).unwrap();
    }
    for stream in &streams {
        stream.synchronize().unwrap();
    }
}

fn high_throughput(mut case: Case) -> Case {
    case.mode = MoeMode::HighThroughput;
    case
}

#[test]
fn high_throughput_random_routings_top_k_1_to_8_on_2_4_8_ranks() {
    for ranks in [2, 4, 8] {
        for top_k in 1..=8 {
            let hidden = if top_k % 2 == 0 { 24 } else { 13 };
            let seed = (ranks * 100 + top_k) as u64;
            run_on(
                ranks,
                &high_throughput(case(ranks, hidden, top_k, Routing::Random { seed })),
            );
        }
    }
}

#[test]
fn high_throughput_skewed_routings_on_2_4_8_ranks() {
    for ranks in [2, 4, 8] {
        run_on(
            ranks,
            &high_throughput(case(ranks, 16, 1, Routing::AllTo(ranks - 1))),
        );
        run_on(
            ranks,
            &high_throughput(case(ranks, 13, 3, Routing::AllTo(0))),
        );
        let avoid = Routing::Avoiding {
            seed: ranks as u64,
            rank: ranks - 1,
        };
        run_on(ranks, &high_throughput(case(ranks, 24, 2, avoid)));
        let none = Routing::WithNone {
            seed: 7 + ranks as u64,
        };
        run_on(ranks, &high_throughput(case(ranks, 8, 4, none)));
    }
}

/// More tokens than a CTA has threads, fewer CTAs than ranks.
#[test]
fn high_throughput_chunks_of_tokens() {
    let c = Case {
        experts: 16,
        max_tokens: 70,
        hidden: 17,
        top_k: 3,
        tokens: vec![70, 65, 0, 33],
        routing: Routing::Random { seed: 6 },
        mode: MoeMode::HighThroughput,
        format: DispatchFormat::Bf16,
        staged: false,
        ctas: 3,
        threads: 32,
    };
    run_on(4, &c);
}

/// Each mode's operations are refused on the other's group, and a high-throughput
/// dispatch or combine needs the layout pass of the current routing.
#[test]
fn operations_of_the_other_mode_and_a_missing_layout_are_errors() {
    let world = world(2);
    let ranks = MoeRanks::Sim(&world);
    let mut low = MoeConfig::low_latency(4, 4, 8);
    low.ctas = 2;
    low.threads = 32;
    let high = MoeConfig {
        mode: MoeMode::HighThroughput,
        ..low
    };
    let low_group = MoeGroup::new(ranks, low).unwrap();
    let high_group = MoeGroup::new(ranks, high).unwrap();
    let stream = low_group.stream(0).unwrap();
    let mut low_handle = low_group.handle(2).unwrap();
    let mut high_handle = high_group.handle(2).unwrap();
    low_handle.set_routing(0, &[0, 1], &[0.5, 0.5]).unwrap();
    high_handle.set_routing(0, &[0, 1], &[0.5, 0.5]).unwrap();
    let wrong = |e: MoeError| matches!(e, MoeError::WrongMode { .. });
    assert!(wrong(
        low_group.layout(0, &stream, &mut low_handle).unwrap_err()
    ));
    assert!(wrong(
        low_group
            .combine_backward(0, &stream, &low_handle)
            .unwrap_err()
    ));
    assert!(wrong(
        high_group
            .dispatch_send(0, &stream, &high_handle)
            .unwrap_err()
    ));
    assert!(wrong(
        high_group
            .dispatch_complete(0, &stream, &high_handle)
            .unwrap_err()
    ));
    assert!(wrong(high_handle.slots().unwrap_err()));
    assert!(wrong(low_handle.positions().unwrap_err()));
    let missing = |e: MoeError| matches!(e, MoeError::NoLayout { local_rank: 0 });
    assert!(missing(
        high_group.dispatch(0, &stream, &high_handle).unwrap_err()
    ));
    assert!(missing(
        high_group.combine(0, &stream, &high_handle).unwrap_err()
    ));
    let mut many = MoeConfig::high_throughput(2 * 2048, 4, 8);
    many.threads = 32;
    assert_eq!(dimension(MoeGroup::new(ranks, many)), "experts");
}

fn fp8(mut case: Case) -> Case {
    case.format = DispatchFormat::Fp8E4m3;
    case
}

/// FP8 e4m3 dispatch in both modes: the received bytes and scales equal the host's
/// quantisation of every token, bit for bit, and dequantise within the bound; hidden sizes
/// of one block, of a partial block, of several blocks with a partial one, and not a
/// multiple of 8; combine and the backward form over what the experts made of them.
#[test]
fn fp8_dispatch_in_both_modes_on_2_4_8_ranks() {
    // One block with 16-byte stores; blocks with a partial one and 8-byte stores; bytes
    // (hidden not a multiple of 8): on every rank count; two more shapes on 2 ranks.
    let shapes = |ranks| match ranks {
        2 => vec![(128, 2), (328, 4), (13, 1), (261, 8), (24, 3)],
        _ => vec![(128, 2), (328, 4), (13, 1)],
    };
    for ranks in [2, 4, 8] {
        for (hidden, top_k) in shapes(ranks) {
            let seed = (ranks * 1000 + hidden) as u64;
            let low = fp8(case(ranks, hidden, top_k, Routing::Random { seed }));
            run_on(ranks, &low);
            run_on(ranks, &high_throughput(low));
        }
    }
    let mut staged = fp8(case(2, 136, 2, Routing::WithNone { seed: 3 }));
    staged.staged = true;
    run_on(2, &staged);
}

/// FP8 dispatch of blocks whose largest magnitude is tiny but not zero (below 448 /
/// f32::MAX, bf16 subnormals included), next to an all-zero block and ordinary ones, in
/// both modes on 2 and 4 ranks: no NaN, every element within half an e4m3 step of the
/// format's definition (not the quantiser's own formula).
#[test]
fn fp8_blocks_of_tiny_magnitudes_keep_their_values() {
    for ranks in [2, 4] {
        for mode in [MoeMode::LowLatency, MoeMode::HighThroughput] {
            let world = world(ranks);
            moe_cases::tiny_fp8_blocks::run(MoeRanks::Sim(&world), mode);
        }
    }
}

/// The host quantiser (the kernels' code run on the host) against the e4m3 format's
/// definition at every magnitude of bf16, from its smallest subnormal up, in full and
/// partial blocks, with zeros among the values.
#[test]
fn fp8_quantisation_keeps_its_bound_at_every_magnitude() {
    use cudajit::nccl::moe::fp8;
    use moe_cases::e4m3_reference;
    let mut rng = moe_cases::Rng::new(17);
    for exponent in -133..=120 {
        for len in [128, 77] {
            let block: Vec<bf16> = (0..len)
                .map(|k| {
                    let mantissa = 1.0 + rng.below(128) as f32 / 128.0;
                    let sign = if rng.below(2) == 0 { -1.0 } else { 1.0 };
                    let zero = k % 7 == 3;
                    let v = if zero { 0.0 } else { sign * mantissa };
                    // Scaled in two steps: 2^exponent alone may not be an f32.
                    let half = exponent / 2;
                    bf16::from_f32(v * 2f32.powi(half) * 2f32.powi(exponent - half))
                })
                .collect();
            let (bytes, scales) = fp8::quantize(&block);
            let x: Vec<f32> = block.iter().map(|v| v.to_f32()).collect();
            let what = || format!("2^{exponent}, {len} elements");
            e4m3_reference::check_token(&x, &bytes, &scales, &what);
        }
    }
}

/// The reference itself, on values the e4m3 format defines.
#[test]
fn the_e4m3_reference_knows_the_format() {
    use moe_cases::e4m3_reference::{half_gap, magnitudes, value};
    // 0x7e is 448, 0x08 the smallest normal 2^-6, 0x01 the smallest subnormal 2^-9.
    assert_eq!(value(0x7e), Some(448.0));
    assert_eq!(value(0x08), Some(2f64.powi(-6)));
    assert_eq!(value(0x01), Some(2f64.powi(-9)));
    assert_eq!(value(0xb8), Some(-1.0));
    assert_eq!(value(0x7f), None);
    assert_eq!(value(0xff), None);
    assert_eq!(magnitudes().len(), 127);
    // Between 1 and 1.125 the gap is 1/8, between 256 and 288 it is 32; exact values
    // have none.
    assert_eq!(half_gap(1.05), 0.0625);
    assert_eq!(half_gap(-300.0), 16.0);
    assert_eq!(half_gap(1.0), 0.0);
    assert_eq!(half_gap(0.0), 0.0);
    assert_eq!(half_gap(2f64.powi(-10)), 2f64.powi(-10));
}

/// The e4m3 conversion: every finite value converts back to its own bits, halfway
/// values round to even, larger values saturate to ±448, NaN stays NaN.
#[test]
fn e4m3_conversion_rounds_to_nearest_even_and_saturates() {
    use cudajit::nccl::moe::fp8::{e4m3_from_f32, e4m3_to_f32};
    for byte in 0..=255u8 {
        if byte & 0x7f == 0x7f {
            assert!(e4m3_to_f32(byte).is_nan());
            continue;
        }
        let x = e4m3_to_f32(byte);
        let expect = if x == 0.0 { byte & 0x80 } else { byte };
        assert_eq!(e4m3_from_f32(x), expect, "{byte:#04x} = {x}");
        // Halfway to the next magnitude: even codes keep, odd codes round up.
        if byte & 0x7f < 0x7e {
            let next = e4m3_to_f32(byte + 1);
            let mid = (x + next) / 2.0;
            let even = if byte % 2 == 0 { byte } else { byte + 1 };
            assert_eq!(e4m3_from_f32(mid), even, "halfway above {byte:#04x}");
        }
    }
    assert_eq!(e4m3_from_f32(1000.0), 0x7e);
    assert_eq!(e4m3_from_f32(-1e30), 0xfe);
    assert_eq!(e4m3_from_f32(f32::INFINITY), 0x7e);
    assert_eq!(e4m3_from_f32(f32::NAN), 0x7f);
    assert_eq!(e4m3_from_f32(1e-4), 0x00);
}

fn dimension(result: Result<impl std::fmt::Debug, MoeError>) -> &'static str {
    let error = result.unwrap_err();
    eprintln!("{error}");
    error
        .dimension()
        .unwrap_or_else(|| panic!("no dimension in {error:?}"))
}

#[test]
fn limits_are_errors_naming_the_dimension() {
    let world = world(4);
    let ranks = MoeRanks::Sim(&world);
    let small = |experts| {
        let mut config = MoeConfig::low_latency(experts, 4, 8);
        config.ctas = 2;
        config.threads = 32;
        config
    };
    assert_eq!(dimension(MoeGroup::new(ranks, small(10))), "experts");
    assert_eq!(dimension(MoeGroup::new(ranks, small(0))), "experts");
    let mut threads = small(8);
    threads.threads = 48;
    assert_eq!(dimension(MoeGroup::new(ranks, threads)), "threads");
    let mut hidden = small(8);
    hidden.hidden = 0;
    assert_eq!(dimension(MoeGroup::new(ranks, hidden)), "hidden");

    let group = MoeGroup::new(ranks, small(8)).unwrap();
    assert_eq!(dimension(group.handle(0)), "top_k");
    assert_eq!(dimension(group.handle(9)), "top_k");
    let mut handle = group.handle(2).unwrap();
    // Five tokens where the group holds four.
    assert_eq!(
        dimension(handle.set_routing(0, &[0; 10], &[1.0; 10])),
        "tokens"
    );
    assert_eq!(dimension(handle.set_device_routing(0, 5)), "tokens");
    assert_eq!(
        dimension(handle.set_routing(0, &[0; 3], &[1.0; 3])),
        "topk_idx length"
    );
    assert_eq!(
        dimension(handle.set_routing(0, &[0; 4], &[1.0; 3])),
        "topk_weights length"
    );
    assert_eq!(
        dimension(handle.set_routing(0, &[0, 8], &[1.0; 2])),
        "topk_idx"
    );
    assert_eq!(
        dimension(handle.set_routing(0, &[-2, 1], &[1.0; 2])),
        "topk_idx"
    );
    assert_eq!(dimension(handle.set_device_routing(4, 1)), "local rank");

    // No routing yet on rank 0.
    let stream = group.stream(0).unwrap();
    let error = group.dispatch(0, &stream, &handle).unwrap_err();
    assert!(
        matches!(error, MoeError::NoRouting { local_rank: 0 }),
        "{error}"
    );
    handle.set_routing(0, &[0, 1], &[0.5, 0.5]).unwrap();
    // Rank 1's stream for rank 0; a rank this process does not have.
    let other = group.stream(1).unwrap();
    assert_eq!(dimension(group.dispatch(0, &other, &handle)), "stream");
    assert_eq!(dimension(group.stream(4)), "local rank");
    // A handle of another group.
    let twin = MoeGroup::new(ranks, small(8)).unwrap();
    assert_eq!(dimension(twin.dispatch(0, &stream, &handle)), "handle");
    // A tokens buffer larger than the group's.
    let too_many = vec![bf16::ZERO; 4 * 8 + 1];
    assert_eq!(
        dimension(
            group
                .tokens()
                .copy_from_host(0, &too_many)
                .map_err(MoeError::from)
        ),
        "elements written"
    );

    let nodes = SimWorld::with_nodes(2, 2).unwrap();
    assert_eq!(
        dimension(MoeGroup::new(MoeRanks::Sim(&nodes), small(8))),
        "LSA team size"
    );
}

/// The benchmark baseline's kernels on the simulator: permuting every rank's (token,
/// expert) rows into its send order and un-permuting them with the weights gives
/// `sum_j w_j x` (the communication in between is NCCL's, on GPUs only); the plan's
/// counts are each other's transpose.
#[test]
fn the_benchmark_baseline_permutes_and_unpermutes() {
    use cudajit::prelude::LaunchConfig;
    let stream = cudajit::Stream::simulator();
    let (ranks, experts, top_k, hidden, tokens) = (4, 16, 3, 24, 10);
    let c = Case {
        experts,
        max_tokens: tokens,
        hidden,
        top_k,
        tokens: vec![tokens; ranks],
        routing: Routing::WithNone { seed: 11 },
        mode: MoeMode::LowLatency,
        format: DispatchFormat::Bf16,
        staged: false,
        ctas: 1,
        threads: 32,
    };
    let routings: Vec<(Vec<i32>, Vec<f32>)> = (0..ranks)
        .map(|r| moe_cases::routing_of(&c, ranks, r, tokens))
        .collect();
    let idx: Vec<Vec<i32>> = routings.iter().map(|(i, _)| i.clone()).collect();
    let plans = baseline::plans(&idx, top_k, experts);
    for r in 0..ranks {
        for s in 0..ranks {
            assert_eq!(plans[r].recv_counts[s], plans[s].send_counts[r]);
        }
        let plan = &plans[r];
        let x = moe_cases::tokens_of(hidden, r, tokens);
        let (_, weights) = &routings[r];
        let xs = stream.clone_htod(&x).unwrap();
        let order = stream.clone_htod(&plan.order).unwrap();
        let mut send = stream
            .alloc_zeros::<bf16>(plan.order.len().max(1) * hidden)
            .unwrap();
        let config = LaunchConfig::new(2, 32);
        baseline::permute_rows::launch(&stream, config, &xs, &order, &mut send, hidden as u64)
            .unwrap();
        let rows = stream.clone_htod(&plan.rows).unwrap();
        let w = stream.clone_htod(weights).unwrap();
        let mut out = stream.alloc_zeros::<bf16>(x.len()).unwrap();
        let (k, h) = (top_k as u64, hidden as u64);
        baseline::unpermute_weighted::launch(&stream, config, &send, &rows, &w, &mut out, k, h)
            .unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        for t in 0..tokens {
            for e in 0..hidden {
                let v = x[t * hidden + e].to_f32();
                let acc = (0..top_k)
                    .filter(|&j| idx[r][t * top_k + j] >= 0)
                    .fold(0.0f32, |acc, j| weights[t * top_k + j].mul_add(v, acc));
                assert_eq!(
                    got[t * hidden + e],
                    bf16::from_f32(acc),
                    "rank {r} token {t}"
                );
            }
        }
    }
}
