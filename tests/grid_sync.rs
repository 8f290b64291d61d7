//! `grid_sync()` in cooperative launches (`LaunchConfig::cooperative()`): a single-kernel
//! two-phase reduction on the simulator (always) and on a GPU (skipped without one), the
//! PTX it compiles to (CUDA's cooperative-groups grid barrier: no local memory, no calls),
//! and the errors of launches that cannot run it.

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Arch, Error, LaunchConfigError, SimError, SimOptions, Specialization, Stream};

/// Threads per block (the shared array's length).
const BLOCK: u32 = 256;

/// A sum in one kernel: every block reduces its grid-stride share of `x` in shared memory
/// and publishes it in `partials`; after a grid barrier block 0 adds the partials into
/// `total`; after a second one every block reads the total back into `seen` (which shows
/// that the barrier word works again after its top bit flipped once).
#[kernel]
fn two_phase_sum(x: &[f32], partials: &mut [f32], total: &mut [f32], seen: &mut [f32]) {
    let sums = shared_array::<f32>(256);
    let t = thread_idx().x as usize;
    let b = block_idx().x as usize;
    let mut own = 0.0f32;
    for i in (global_index()..x.len()).step_by(grid_stride()) {
        own += x[i];
    }
    sums[t] = own;
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
        partials[b] = sums[0];
    }
    grid_sync();
    if b == 0 && t == 0 {
        let mut sum = 0.0f32;
        for j in 0..partials.len() {
            sum += partials[j];
        }
        total[0] = sum;
    }
    grid_sync();
    if t == 0 {
        seen[b] = total[0];
    }
}

/// A grid barrier inside a device function (one thread per block writes: the threads of
/// a block writing one element would race).
#[device]
fn publish_then_wait(out: &mut [u32], b: usize) {
    if thread_idx().x == 0 {
        out[b] = 1;
    }
    grid_sync();
}

/// `grid_sync()` reached by only some blocks: the others return first.
#[kernel]
fn early_exit(out: &mut [u32]) {
    if block_idx().x == 1 {
        return;
    }
    publish_then_wait(out, block_idx().x as usize);
}

/// No grid barrier anywhere.
#[kernel]
fn plain_copy(x: &[u32], out: &mut [u32]) {
    let i = global_index();
    if i < x.len() {
        out[i] = x[i];
    }
}

#[test]
fn kernels_that_reach_grid_sync_are_known_before_they_run() {
    use cudajit::core::intrinsics::Intrinsic;
    assert!(two_phase_sum::KERNEL
        .captured()
        .reaches_intrinsic(Intrinsic::GridSync));
    // Through a device function.
    assert!(early_exit::KERNEL
        .captured()
        .reaches_intrinsic(Intrinsic::GridSync));
    assert!(!plain_copy::KERNEL
        .captured()
        .reaches_intrinsic(Intrinsic::GridSync));
}

fn check_two_phase_sum(stream: &Stream, blocks: u32) {
    let n = 100_000;
    // Small integers: every partial sum is exact, so any order of addition gives `expected`.
    let x: Vec<f32> = (0..n).map(|k| (k % 13) as f32).collect();
    let expected: f32 = x.iter().sum();
    let x = stream.clone_htod(&x).unwrap();
    let mut partials = stream.alloc_zeros::<f32>(blocks as usize).unwrap();
    let mut total = stream.alloc_zeros::<f32>(1).unwrap();
    let mut seen = stream.alloc_zeros::<f32>(blocks as usize).unwrap();
    let config = LaunchConfig::new(blocks, BLOCK).cooperative();
    // Twice: the second launch finds the barrier word as the first left it.
    for _ in 0..2 {
        two_phase_sum::launch(stream, config, &x, &mut partials, &mut total, &mut seen).unwrap();
        assert_eq!(stream.clone_dtoh(&total).unwrap(), [expected]);
        assert_eq!(
            stream.clone_dtoh(&seen).unwrap(),
            vec![expected; blocks as usize]
        );
    }
}

fn simulator() -> Stream {
    Stream::simulator_with(SimOptions {
        workers: 4,
        ..SimOptions::default()
    })
}

#[test]
fn two_phase_reduction_on_the_simulator() {
    check_two_phase_sum(&simulator(), 13);
    // One host thread runs every block in turn, phase by phase.
    check_two_phase_sum(
        &Stream::simulator_with(SimOptions {
            workers: 1,
            ..SimOptions::default()
        }),
        5,
    );
}

#[test]
fn two_phase_reduction_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    check_two_phase_sum(&stream, 64);
    // As many blocks as fit: the device's SMs times the kernel's occupancy per SM.
    let sms = context
        .attribute(cudajit::cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .unwrap() as u32;
    check_two_phase_sum(&stream, sms);
}

#[test]
fn a_cooperative_grid_larger_than_the_gpu_is_refused_naming_the_largest() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    let x = stream.alloc_zeros::<f32>(16).unwrap();
    let mut partials = stream.alloc_zeros::<f32>(100_000).unwrap();
    let mut total = stream.alloc_zeros::<f32>(1).unwrap();
    let mut seen = stream.alloc_zeros::<f32>(100_000).unwrap();
    let config = LaunchConfig::new(100_000, BLOCK).cooperative();
    let error = two_phase_sum::launch(&stream, config, &x, &mut partials, &mut total, &mut seen)
        .unwrap_err();
    let message = error.to_string();
    eprintln!("{message}");
    match error {
        Error::LaunchConfig {
            source:
                LaunchConfigError::NotCoResident {
                    blocks, max_blocks, ..
                },
            ..
        } => {
            assert_eq!(blocks, 100_000);
            assert!(max_blocks > 0 && max_blocks < 100_000, "{message}");
            assert!(
                message.contains(&format!("at most {max_blocks} blocks")),
                "{message}"
            );
        }
        other => panic!("expected NotCoResident, got {other}"),
    }
}

#[test]
fn grid_sync_without_a_cooperative_launch_is_refused_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    let x = stream.alloc_zeros::<f32>(16).unwrap();
    let mut partials = stream.alloc_zeros::<f32>(2).unwrap();
    let mut total = stream.alloc_zeros::<f32>(1).unwrap();
    let mut seen = stream.alloc_zeros::<f32>(2).unwrap();
    let config = LaunchConfig::new(2, BLOCK);
    // Refused before the driver sees it, so the context stays usable.
    let error = two_phase_sum::launch(&stream, config, &x, &mut partials, &mut total, &mut seen)
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::LaunchConfig {
                source: LaunchConfigError::NotCooperative,
                ..
            }
        ),
        "{error}"
    );
    check_two_phase_sum(&stream, 4);
}

#[test]
fn grid_sync_without_a_cooperative_launch_is_an_error_on_the_simulator() {
    let stream = simulator();
    let x = stream.alloc_zeros::<f32>(16).unwrap();
    let mut partials = stream.alloc_zeros::<f32>(2).unwrap();
    let mut total = stream.alloc_zeros::<f32>(1).unwrap();
    let mut seen = stream.alloc_zeros::<f32>(2).unwrap();
    let config = LaunchConfig::new(2, BLOCK);
    let error = two_phase_sum::launch(&stream, config, &x, &mut partials, &mut total, &mut seen)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("grid_sync()")
            && error.contains("LaunchConfig::new(grid, block).cooperative()"),
        "{error}"
    );
}

#[test]
fn a_cooperative_grid_larger_than_a_gpu_is_refused_on_the_simulator() {
    let stream = simulator();
    let x = stream.alloc_zeros::<f32>(16).unwrap();
    let mut partials = stream.alloc_zeros::<f32>(4096).unwrap();
    let mut total = stream.alloc_zeros::<f32>(1).unwrap();
    let mut seen = stream.alloc_zeros::<f32>(4096).unwrap();
    let config = LaunchConfig::new(4096, 1024).cooperative();
    let error = two_phase_sum::launch(&stream, config, &x, &mut partials, &mut total, &mut seen)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("at most 264 blocks of 1024 threads"),
        "{error}"
    );
}

#[test]
fn a_block_that_skips_grid_sync_is_reported_on_the_simulator() {
    let stream = simulator();
    let mut out = stream.alloc_zeros::<u32>(4).unwrap();
    let error =
        early_exit::launch(&stream, LaunchConfig::new(4, 32).cooperative(), &mut out).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, Error::Simulator(SimError::BarrierDivergence { .. })),
        "{message}"
    );
    assert!(
        message.contains("block (1, 0, 0) finished without reaching it"),
        "{message}"
    );
}

fn ptx_of(options: &CompileOptions) -> String {
    let spec = Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: Vec::new(),
    };
    linked_ptx(
        two_phase_sum::KERNEL.captured(),
        &spec,
        Arch::SM_90,
        options,
    )
    .expect("linking")
}

#[test]
fn grid_sync_compiles_to_the_cooperative_groups_barrier() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = ptx_of(&CompileOptions::default());
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call"), "a call:\n{ptx}");
    for instruction in [
        "%envreg1",
        "%envreg2",
        "atom.add.release.gpu.u32",
        "ld.acquire.gpu.u32",
        "bar.sync",
    ] {
        assert!(ptx.contains(instruction), "no {instruction}:\n{ptx}");
    }
    // Two barriers, each one arrival and one poll loop.
    assert_eq!(ptx.matches("atom.add.release.gpu.u32").count(), 2, "{ptx}");
    // With checks on, a launch that is not cooperative (no workspace) stops the kernel.
    let checked = ptx_of(&CompileOptions {
        bounds_checks: true,
        ..CompileOptions::default()
    });
    assert!(checked.contains("__assertfail"), "{checked}");
}

/// The differential test's case of sub-slices, closures and `grid_sync()` together, on the
/// simulator, against the host.
#[test]
fn the_differential_case_matches_the_host_on_the_simulator() {
    use common::cases::{iteration_inputs, Values};
    use common::views_and_closures::VIEWS_GRID;
    let outputs = common::cases::views_closures_grid_case(&simulator()).unwrap();
    let (blocks, threads) = VIEWS_GRID;
    let (rows, width, mid, scale) = ((blocks * threads) as usize, 6usize, 100usize, 0.5f32);
    let x = iteration_inputs(rows * width, 31);
    let row_sums: Vec<f32> = x
        .chunks(width)
        .map(|row| row.iter().fold(0.0, |a, b| a + b * scale))
        .collect();
    let halves: Vec<f32> = x
        .chunks(width)
        .enumerate()
        .map(|(t, row)| {
            if t < mid {
                row[0] * scale + 1.0
            } else {
                row[1..].iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b))
            }
        })
        .collect();
    let total = row_sums.iter().fold(0.0, |a, b| a + b);
    let expected = [
        Values::F32(row_sums),
        Values::F32(halves),
        Values::F32(vec![total]),
    ];
    for (output, expected) in outputs.iter().zip(expected) {
        assert_eq!(output.values, expected, "{}", output.name);
    }
}
