//! Mixture-of-experts dispatch and combine (`cudajit::nccl::moe`) on GPUs: every GPU of
//! this machine in one process (`ncclCommInitAll`), the cases of tests/moe_sim.rs and
//! NCCL EP's shapes, every output compared exactly with the host reference (the window
//! forms of dispatch and combine, and the forms taking device buffers); and the
//! device communicator's barrier count checked against the group's grid.
//!
//! NCCL 2.28's device API needs at least two local ranks: with fewer than two GPUs (or
//! none) every test skips with the reason. On the GPU machine, with the system NCCL:
//! `CUDAJIT_NCCL_LIBRARY=/usr/lib/x86_64-linux-gnu/libnccl.so.2 target/debug/deps/moe_gpu-*`.

mod common;
mod moe_cases;

use cudajit::nccl::moe::{DispatchFormat, MoeConfig, MoeGroup, MoeMode, MoeRanks};
use cudajit::nccl::DevCommRequirements;

use common::gpus;
use moe_cases::{run_with, Case, Io, Routing};

/// Runs `body` on every GPU of the machine as one group's ranks, with a device
/// communicator of `barriers` LSA barriers (one test at a time); skips with the reason
/// where there are not 2 GPUs.
fn with_gpu_ranks(barriers: u32, body: impl FnOnce(MoeRanks<'_>)) {
    let _gpus = gpus::lock();
    let Some(comm) = gpus::gpus_or_skip() else {
        return;
    };
    let dev_comm = comm
        .create_dev_comm(&DevCommRequirements::lsa_barriers(barriers))
        .expect("a device communicator");
    body(MoeRanks::Gpu {
        comm: &comm,
        dev_comm: &dev_comm,
    });
    dev_comm.close().unwrap();
    comm.close().unwrap();
}

fn run_on_gpus(cases: &[Case], io: Io) {
    let ctas = cases.iter().map(|c| c.ctas).max().unwrap_or(1);
    with_gpu_ranks(ctas, |ranks| run_cases(ranks, cases, io));
}

fn run_cases(ranks: MoeRanks<'_>, cases: &[Case], io: Io) {
    let n = ranks.nranks();
    for case in cases {
        let mut case = case.clone();
        case.tokens.resize(n, case.max_tokens / 2);
        if case.experts % n != 0 {
            case.experts = case.experts.div_ceil(n) * n;
        }
        eprintln!("{n} GPUs, {io:?}: {case:?}");
        run_with(ranks, &case, io);
    }
}

fn small(hidden: usize, top_k: usize, routing: Routing, staged: bool) -> Case {
    Case {
        experts: 8,
        max_tokens: 9,
        hidden,
        top_k,
        tokens: vec![9, 0],
        routing,
        mode: MoeMode::LowLatency,
        format: DispatchFormat::Bf16,
        staged,
        ctas: 3,
        threads: 64,
    }
}

/// The simulated cases on GPUs: top-k 1 to 8, vectors and elements, skewed routings,
/// staged dispatch, more tokens than threads.
#[test]
fn moe_small_cases_on_gpus() {
    let mut cases: Vec<Case> = (1..=8)
        .map(|k| {
            let hidden = if k % 2 == 0 { 24 } else { 13 };
            small(hidden, k, Routing::Random { seed: k as u64 }, false)
        })
        .collect();
    cases.push(small(16, 1, Routing::AllTo(7), false));
    cases.push(small(13, 3, Routing::AllTo(0), false));
    cases.push(small(24, 2, Routing::Avoiding { seed: 3, rank: 1 }, false));
    cases.push(small(8, 4, Routing::WithNone { seed: 4 }, false));
    cases.push(small(24, 3, Routing::Random { seed: 99 }, true));
    cases.push(Case {
        experts: 12,
        max_tokens: 300,
        hidden: 17,
        top_k: 3,
        tokens: vec![300, 265],
        routing: Routing::Random { seed: 5 },
        mode: MoeMode::LowLatency,
        format: DispatchFormat::Bf16,
        staged: false,
        ctas: 2,
        threads: 128,
    });
    let high: Vec<Case> = cases
        .iter()
        .filter(|c| !c.staged)
        .map(|c| Case {
            mode: MoeMode::HighThroughput,
            format: DispatchFormat::Bf16,
            ..c.clone()
        })
        .collect();
    cases.extend(high);
    // FP8 dispatch, both modes: one block, several with a partial one, not a multiple of 8.
    for (hidden, top_k) in [(128, 2), (328, 4), (13, 3)] {
        for mode in [MoeMode::LowLatency, MoeMode::HighThroughput] {
            let mut c = small(
                hidden,
                top_k,
                Routing::Random {
                    seed: hidden as u64,
                },
                false,
            );
            c.mode = mode;
            c.format = DispatchFormat::Fp8E4m3;
            cases.push(c);
        }
    }
    run_on_gpus(&cases, Io::Windows);
}

/// FP8 dispatch of blocks whose largest magnitude is tiny but not zero (bf16 subnormals,
/// values below 448 / f32::MAX, an all-zero block), both modes, on the GPUs: the kernel's
/// scale computed by the hardware, checked against the e4m3 format's definition.
#[test]
fn moe_fp8_tiny_blocks_on_gpus() {
    with_gpu_ranks(2, |ranks| {
        for mode in [MoeMode::LowLatency, MoeMode::HighThroughput] {
            moe_cases::tiny_fp8_blocks::run(ranks, mode);
        }
    });
}

/// The buffer-taking forms (`dispatch_from`, `dispatch_send_from`, `combine_from`,
/// `combine_into`: the tokens and outputs in `cudajit::Buffer`s of each GPU's stream,
/// copied device to device on it) give the reference's bits: both modes, the staged
/// dispatch, FP8 dispatch, vectors and elements, more tokens than threads.
#[test]
fn moe_buffer_forms_on_gpus() {
    let mut cases = vec![
        small(24, 2, Routing::Random { seed: 11 }, false),
        small(13, 3, Routing::WithNone { seed: 12 }, false),
        small(24, 3, Routing::Random { seed: 13 }, true),
    ];
    let mut many = small(136, 4, Routing::Random { seed: 14 }, false);
    many.max_tokens = 300;
    many.tokens = vec![300, 265];
    many.experts = 12;
    cases.push(many);
    let high: Vec<Case> = cases
        .iter()
        .filter(|c| !c.staged)
        .map(|c| Case {
            mode: MoeMode::HighThroughput,
            ..c.clone()
        })
        .collect();
    cases.extend(high);
    let mut fp8 = small(328, 4, Routing::Random { seed: 15 }, false);
    fp8.format = DispatchFormat::Fp8E4m3;
    cases.push(fp8);
    run_on_gpus(&cases, Io::Buffers);
}

/// NCCL EP's published shapes with the default grid (132 CTAs of 256 threads): hidden
/// 7168, top-k 8, 256 experts, 128 tokens per rank (low latency) and 4096 (high
/// throughput); hidden 4096, 64 experts; FP8 dispatch at hidden 7168.
#[test]
fn moe_nccl_ep_shapes_on_gpus() {
    let shape = |experts: usize, hidden: usize, staged: bool| {
        let config = MoeConfig::low_latency(experts, 128, hidden);
        Case {
            experts,
            max_tokens: 128,
            hidden,
            top_k: 8,
            tokens: vec![128, 100],
            routing: Routing::Random { seed: 17 },
            mode: MoeMode::LowLatency,
            format: DispatchFormat::Bf16,
            staged,
            ctas: config.ctas,
            threads: config.threads,
        }
    };
    // High throughput: 4096 tokens per rank.
    let high = |experts: usize, hidden: usize| {
        let config = MoeConfig::high_throughput(experts, 4096, hidden);
        Case {
            experts,
            max_tokens: 4096,
            hidden,
            top_k: 8,
            tokens: vec![4096, 3000],
            routing: Routing::Random { seed: 23 },
            mode: MoeMode::HighThroughput,
            format: DispatchFormat::Bf16,
            staged: false,
            ctas: config.ctas,
            threads: config.threads,
        }
    };
    let fp8 = |mut c: Case| {
        c.format = DispatchFormat::Fp8E4m3;
        c
    };
    run_on_gpus(
        &[
            shape(256, 7168, false),
            shape(256, 7168, true),
            shape(64, 4096, false),
            high(256, 7168),
            high(64, 4096),
            fp8(shape(256, 7168, false)),
            fp8(high(256, 7168)),
        ],
        Io::Windows,
    );
    // The buffer forms at hidden 7168 in both modes.
    run_on_gpus(&[shape(256, 7168, false), high(256, 7168)], Io::Buffers);
}

/// A device communicator with fewer LSA barriers than the group's CTAs is refused when
/// the group is made, naming the count.
#[test]
fn moe_too_few_barriers_is_an_error_on_gpus() {
    with_gpu_ranks(2, |ranks| {
        let mut config = MoeConfig::low_latency(8 * ranks.nranks(), 16, 64);
        config.ctas = 3;
        let error = MoeGroup::new(ranks, config).unwrap_err();
        assert_eq!(error.dimension(), Some("lsa_barrier_count"), "{error}");
        config.ctas = 2;
        MoeGroup::new(ranks, config).unwrap().close().unwrap();
    });
}
