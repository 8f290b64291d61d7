//! Ordered atomics (`atomic_load`, `atomic_store`, `atomic_*_ordered` with an `Ordering` and
//! a `Scope`), volatile accesses, `nanosleep`, `clock64` and `globaltimer`: on the
//! simulator (always), on a GPU (skipped without one), and the PTX they compile to
//! (checked without a GPU: the instructions CUDA's `cuda::atomic_ref` writes, no local
//! memory, no calls).

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Arch, SimOptions, Specialization, Stream};

/// Threads per block of the reduction (its shared array's length).
const BLOCK: u32 = 256;

/// A sum in one launch: each block reduces its part in shared memory and publishes it
/// with a release store; the block that arrives last at the counter (an acq_rel
/// increment, which acquires what every earlier block released) reads every partial with
/// acquire loads and writes the total. The pattern of CUDA's `threadFenceReduction`
/// sample, with orderings instead of `__threadfence()` and `atomicAdd(&p[b], 0)`.
#[kernel]
fn last_block_sum(x: &[f32], partials: &mut [f32], arrived: &mut [u32], total: &mut [f32]) {
    let sums = shared_array::<f32>(256);
    let t = thread_idx().x as usize;
    let i = global_index();
    sums[t] = if i < x.len() { x[i] } else { 0.0 };
    sync_threads();
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            sums[t] += sums[t + stride];
        }
        sync_threads();
        stride >>= 1;
    }
    if t == 0 {
        let b = block_idx().x as usize;
        atomic_store(&mut partials[b], sums[0], Ordering::Release, Scope::Device);
        let before = atomic_add_ordered(&mut arrived[0], 1, Ordering::AcqRel, Scope::Device);
        if before == grid_dim().x - 1 {
            let mut sum = 0.0f32;
            for j in 0..grid_dim().x as usize {
                sum += atomic_load(&partials[j], Ordering::Acquire, Scope::Device);
            }
            total[0] = sum;
        }
    }
}

/// Message passing between two blocks: block 1 writes the data, then raises the flag with
/// a release store; block 0 spins on an acquire load of the flag (backing off with
/// `nanosleep`) and then reads the data. Every ordering, scope and operation of the API
/// appears once, so the PTX test sees them all.
#[kernel]
fn message_passing(data: &mut [u64], flag: &mut [u32], seen: &mut [u64], stats: &mut [i64]) {
    if thread_idx().x != 0 {
        return;
    }
    if block_idx().x == 1 {
        for k in 0..data.len() {
            data[k] = (k as u64 + 1) * 1000;
        }
        atomic_store(&mut flag[0], 1, Ordering::Release, Scope::Device);
    } else {
        let mut spins = 0i64;
        while atomic_load(&flag[0], Ordering::Acquire, Scope::Device) == 0 {
            nanosleep(100);
            spins += 1;
        }
        for k in 0..data.len() {
            seen[k] = atomic_load(&data[k], Ordering::Relaxed, Scope::Device);
        }
        // The other orderings and scopes, on `stats` (no other thread touches it).
        atomic_store(&mut stats[0], spins, Ordering::SeqCst, Scope::System);
        atomic_add_ordered(&mut stats[1], 5, Ordering::Relaxed, Scope::Block);
        atomic_max_ordered(&mut stats[1], 7, Ordering::Release, Scope::Device);
        atomic_or_ordered(&mut stats[1], 8, Ordering::Acquire, Scope::System);
        let old =
            atomic_compare_exchange_ordered(&mut stats[1], 15, 40, Ordering::SeqCst, Scope::Device);
        stats[2] = old + atomic_load(&stats[1], Ordering::SeqCst, Scope::Block);
    }
}

/// Volatile accesses and the clocks: `out[i] = 2 * read_volatile(x[i])` by a volatile
/// store; thread 0 brackets a `nanosleep` with `clock64()` and `globaltimer()`.
#[kernel]
fn volatile_and_clocks(x: &[u32], out: &mut [u32], times: &mut [u64]) {
    let i = global_index();
    if i < x.len() {
        let v = read_volatile(&x[i]);
        write_volatile(&mut out[i], v * 2);
    }
    if i == 0 {
        let cycles = clock64();
        let start = globaltimer();
        nanosleep(20000);
        let end = globaltimer();
        times[0] = clock64() - cycles;
        times[1] = end - start;
        times[2] = start;
    }
}

fn check_last_block_sum(stream: &Stream) {
    let n = BLOCK as usize * 37 + 13;
    // Small integers: every partial sum is exact, so any order of addition gives `expected`.
    let x: Vec<f32> = (0..n).map(|k| (k % 7) as f32).collect();
    let expected: f32 = x.iter().sum();
    let config = LaunchConfig::for_elements(n);
    let blocks = config.grid.x as usize;
    let x = stream.clone_htod(&x).unwrap();
    let mut partials = stream.alloc_zeros::<f32>(blocks).unwrap();
    let mut arrived = stream.alloc_zeros::<u32>(1).unwrap();
    let mut total = stream.alloc_zeros::<f32>(1).unwrap();
    last_block_sum::launch(stream, config, &x, &mut partials, &mut arrived, &mut total).unwrap();
    assert_eq!(stream.clone_dtoh(&total).unwrap(), [expected]);
    assert_eq!(stream.clone_dtoh(&arrived).unwrap(), [blocks as u32]);
}

fn check_message_passing(stream: &Stream) {
    let mut data = stream.alloc_zeros::<u64>(64).unwrap();
    let mut flag = stream.alloc_zeros::<u32>(1).unwrap();
    let mut seen = stream.alloc_zeros::<u64>(64).unwrap();
    let mut stats = stream.alloc_zeros::<i64>(3).unwrap();
    let config = LaunchConfig::new(2, 32);
    message_passing::launch(stream, config, &mut data, &mut flag, &mut seen, &mut stats).unwrap();
    let seen = stream.clone_dtoh(&seen).unwrap();
    let expected: Vec<u64> = (1..=64).map(|k| k * 1000).collect();
    assert_eq!(seen, expected);
    let stats = stream.clone_dtoh(&stats).unwrap();
    assert!(stats[0] >= 0, "{stats:?}");
    // 0 + 5 = 5; max(5, 7) = 7; 7 | 8 = 15; 15 == 15, so 40; old 15 + 40.
    assert_eq!(&stats[1..], [40, 55]);
}

fn check_volatile_and_clocks(stream: &Stream) -> Vec<u64> {
    let n = 1000;
    let x: Vec<u32> = (0..n as u32).map(|k| k * 3 + 1).collect();
    let xs = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<u32>(n).unwrap();
    let mut times = stream.alloc_zeros::<u64>(3).unwrap();
    volatile_and_clocks::launch(
        stream,
        LaunchConfig::for_elements(n),
        &xs,
        &mut out,
        &mut times,
    )
    .unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    assert!(out.iter().zip(&x).all(|(o, x)| *o == x * 2));
    let times = stream.clone_dtoh(&times).unwrap();
    // The cycle counter always advances; the global timer's difference is a (wrapping)
    // subtraction that is small only if it did not run backwards.
    assert!(times[0] > 0, "{times:?}");
    assert!(
        times[1] < 1_000_000_000,
        "globaltimer ran backwards: {times:?}"
    );
    times
}

/// Two workers, so both blocks of `message_passing` run at once (block 0 spins until block
/// 1 raises the flag).
fn simulator() -> Stream {
    Stream::simulator_with(SimOptions {
        workers: 2,
        ..SimOptions::default()
    })
}

#[test]
fn last_block_reduction_on_the_simulator() {
    check_last_block_sum(&simulator());
}

#[test]
fn message_passing_on_the_simulator() {
    check_message_passing(&simulator());
}

#[test]
fn volatile_accesses_and_clocks_on_the_simulator() {
    let times = check_volatile_and_clocks(&simulator());
    // The simulator's clocks are the host's: the thread slept at least 20 us.
    assert!(times[1] >= 20_000, "{times:?}");
    assert!(times[0] >= 20_000, "{times:?}");
}

#[test]
fn last_block_reduction_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    check_last_block_sum(&Stream::from_cuda(context.default_stream()));
}

#[test]
fn message_passing_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    check_message_passing(&Stream::from_cuda(context.default_stream()));
}

#[test]
fn volatile_accesses_and_clocks_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let times = check_volatile_and_clocks(&Stream::from_cuda(context.default_stream()));
    // `%globaltimer` counts nanoseconds since an epoch; it is far from 0.
    assert!(times[2] > 0, "{times:?}");
}

fn ptx_of(kernel: &'static cudajit::core::CapturedKernel) -> String {
    let spec = Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: Vec::new(),
    };
    let ptx = linked_ptx(kernel, &spec, Arch::SM_90, &CompileOptions::default()).expect("linking");
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call."), "a call:\n{ptx}");
    ptx
}

#[test]
fn ordered_atomics_compile_to_ptx_with_their_ordering_and_scope() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = ptx_of(last_block_sum::KERNEL.captured());
    for instruction in [
        "st.release.gpu.f32",
        "atom.acq_rel.gpu.add.u32",
        "ld.acquire.gpu.f32",
    ] {
        assert!(ptx.contains(instruction), "no {instruction}:\n{ptx}");
    }
    let ptx = ptx_of(message_passing::KERNEL.captured());
    for instruction in [
        "ld.acquire.gpu.b32",
        "st.release.gpu.b32",
        "ld.relaxed.gpu.b64",
        // SeqCst: a fence.sc, then a relaxed store or an acquiring access.
        "fence.sc.sys",
        "st.relaxed.sys.b64",
        "fence.sc.gpu",
        "atom.acquire.gpu.cas.b64",
        "fence.sc.cta",
        "ld.acquire.cta.b64",
        "atom.relaxed.cta.add.u64",
        "atom.release.gpu.max.s64",
        "atom.acquire.sys.or.b64",
        "nanosleep.u32",
    ] {
        assert!(ptx.contains(instruction), "no {instruction}:\n{ptx}");
    }
}

#[test]
fn volatile_accesses_and_clocks_compile_to_their_instructions() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = ptx_of(volatile_and_clocks::KERNEL.captured());
    for instruction in [
        "ld.volatile",
        "st.volatile",
        "%clock64",
        "%globaltimer",
        "nanosleep.u32",
    ] {
        assert!(ptx.contains(instruction), "no {instruction}:\n{ptx}");
    }
}
