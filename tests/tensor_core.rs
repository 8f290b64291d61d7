//! The tensor-core layer (`cudajit::tensor`): `ldmatrix`, `mma.sync` and `cp.async` through
//! `ptx!` with several outputs. On any machine: the kernels compile to PTX holding the
//! instructions, with no local memory, and run on the CPU simulator. On a GPU and on the
//! simulator: one warp's MMA of a 16×16 by 16×8 tile, and an asynchronous copy, checked
//! against the host.

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::tensor::copy_async::{cp_async_16, cp_async_commit, cp_async_wait_group};
use cudajit::tensor::ldmatrix::{load_a_bf16, load_b_bf16};
use cudajit::tensor::mma::{acc_zero, mma_bf16};
use cudajit::tensor::pack::pack_bf16x2;
use cudajit::{bf16, Arch, LaunchConfig, Specialization, Stream};

/// One warp: `d = a · b` for a 16×16 `a` (row-major) and a 16×8 `b` stored column by
/// column (`b[n * 16 + k]`), through shared memory, `ldmatrix` and `mma.sync`; `d` is 16×8
/// row-major f32. `packed` receives `d`'s first row as bf16 pairs (`pack_bf16x2`).
#[kernel]
fn mma_one_tile(a: &[bf16], b: &[bf16], d: &mut [f32], packed: &mut [u32]) {
    let a_tile = shared_array::<bf16>(256);
    let b_tile = shared_array::<bf16>(128);
    let lane = lane_id() as usize;
    for i in 0..8usize {
        a_tile[lane * 8 + i] = a[lane * 8 + i];
    }
    for i in 0..4usize {
        b_tile[lane * 4 + i] = b[lane * 4 + i];
    }
    sync_threads();
    // A: lane l gives row l % 16 at columns 8 (l / 16)..; B: lanes 0-7 give column l at
    // k 0..8, lanes 8-15 the same columns at k 8..16.
    let a_row = lane % 16;
    let a_col = 8 * (lane / 16);
    let fa = load_a_bf16(shared_address(&a_tile[a_row * 16 + a_col]));
    let b_col = lane % 8;
    let b_k = 8 * ((lane / 8) % 2);
    let fb = load_b_bf16(shared_address(&b_tile[b_col * 16 + b_k]));
    let acc = mma_bf16(fa, fb, acc_zero());
    let g = lane / 4;
    let t = lane % 4;
    d[g * 8 + 2 * t] = acc.c0;
    d[g * 8 + 2 * t + 1] = acc.c1;
    d[(g + 8) * 8 + 2 * t] = acc.c2;
    d[(g + 8) * 8 + 2 * t + 1] = acc.c3;
    if g == 0 {
        packed[t] = pack_bf16x2(acc.c0, acc.c1);
    }
}

/// Each thread copies 16 bytes (four u32) of `src` into shared memory with `cp.async`,
/// waits, and writes them back doubled, from another thread's slot after a barrier.
#[kernel]
fn async_copy_roundtrip(src: &[u32], dst: &mut [u32]) {
    let tile = shared_array::<u32>(1024);
    let t = thread_idx().x as usize;
    let base = block_idx().x as usize * 1024;
    cp_async_16(
        shared_address(&tile[4 * t]),
        global_address(&src[base + 4 * t]),
    );
    cp_async_commit();
    cp_async_wait_group::<0>();
    sync_threads();
    let other = 255 - t;
    for i in 0..4usize {
        dst[base + 4 * other + i] = 2 * tile[4 * other + i];
    }
}

fn ptx_of(kernel: &'static cudajit::Kernel, arch: Arch) -> Option<String> {
    common::toolchain_or_skip()?;
    Some(
        linked_ptx(
            kernel.captured(),
            &Specialization::default(),
            arch,
            &CompileOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    )
}

#[test]
fn the_mma_tile_compiles_to_ldmatrix_and_mma_in_registers() {
    for arch in [Arch::SM_80, Arch::SM_90] {
        let Some(ptx) = ptx_of(&mma_one_tile::KERNEL, arch) else {
            return;
        };
        for needle in [
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            "cvt.rn.bf16x2.f32",
        ] {
            assert!(ptx.contains(needle), "{arch}: `{needle}` missing:\n{ptx}");
        }
        assert!(!ptx.contains(".local"), "{arch}: local memory:\n{ptx}");
        assert!(
            !ptx.contains("call"),
            "{arch}: a call was not inlined:\n{ptx}"
        );
    }
}

#[test]
fn the_async_copy_compiles_to_cp_async_with_its_group() {
    let Some(ptx) = ptx_of(&async_copy_roundtrip::KERNEL, Arch::SM_90) else {
        return;
    };
    for needle in [
        "cp.async.cg.shared.global",
        "cp.async.commit_group",
        "cp.async.wait_group 0",
    ] {
        assert!(ptx.contains(needle), "`{needle}` missing:\n{ptx}");
    }
    // The const-generic wait is one instruction, not a chain of tests.
    assert_eq!(ptx.matches("cp.async.wait").count(), 1, "{ptx}");
}

/// Small integers, so every product and sum is exact in bf16 inputs and f32 accumulation.
fn small(i: usize) -> f32 {
    ((i * 7 + 3) % 9) as f32 - 4.0
}

/// Runs `mma_one_tile` on `stream` and checks `d` and its packed first row against the
/// host: exactly, since every product and partial sum is a small integer.
fn check_one_warp_mma(stream: &Stream) {
    let a: Vec<bf16> = (0..256).map(|i| bf16::from_f32(small(i))).collect();
    let b: Vec<bf16> = (0..128).map(|i| bf16::from_f32(small(3 * i + 1))).collect();
    let da = stream.clone_htod(&a).unwrap();
    let db = stream.clone_htod(&b).unwrap();
    let mut dd = stream.alloc_zeros::<f32>(128).unwrap();
    let mut dp = stream.alloc_zeros::<u32>(4).unwrap();
    mma_one_tile::launch(stream, LaunchConfig::new(1, 32), &da, &db, &mut dd, &mut dp).unwrap();
    let d = stream.clone_dtoh(&dd).unwrap();
    for m in 0..16 {
        for n in 0..8 {
            let expected: f32 = (0..16)
                .map(|k| a[m * 16 + k].to_f32() * b[n * 16 + k].to_f32())
                .sum();
            assert_eq!(d[m * 8 + n], expected, "d[{m}][{n}]");
        }
    }
    assert!(d.iter().any(|&x| x != 0.0));
    let packed = stream.clone_dtoh(&dp).unwrap();
    for t in 0..4 {
        let lo = bf16::from_f32(d[2 * t]).to_bits() as u32;
        let hi = bf16::from_f32(d[2 * t + 1]).to_bits() as u32;
        assert_eq!(packed[t], lo | (hi << 16), "packed[{t}]");
    }
}

/// Runs `async_copy_roundtrip` over four blocks on `stream` against the host.
fn check_async_copy(stream: &Stream) {
    let src: Vec<u32> = (0..4 * 1024).map(|i| i as u32 * 3 + 1).collect();
    let dsrc = stream.clone_htod(&src).unwrap();
    let mut ddst = stream.alloc_zeros::<u32>(src.len()).unwrap();
    async_copy_roundtrip::launch(stream, LaunchConfig::new(4, 256), &dsrc, &mut ddst).unwrap();
    let dst = stream.clone_dtoh(&ddst).unwrap();
    for (i, (&got, &s)) in dst.iter().zip(&src).enumerate() {
        assert_eq!(got, 2 * s, "element {i}");
    }
}

#[test]
fn one_warp_mma_matches_the_host() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    check_one_warp_mma(&Stream::from_cuda(context.default_stream()));
}

#[test]
fn cp_async_copies_are_visible_after_their_wait() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    check_async_copy(&Stream::from_cuda(context.default_stream()));
}

#[test]
fn one_warp_mma_matches_the_host_on_the_simulator() {
    check_one_warp_mma(&Stream::simulator());
}

#[test]
fn cp_async_copies_are_visible_after_their_wait_on_the_simulator() {
    check_async_copy(&Stream::simulator());
}

/// `mma_one_tile` of inputs in [-2, 2) (not small integers: the sums round) on `stream`.
fn random_mma_tile(stream: &Stream) -> (Vec<bf16>, Vec<bf16>, Vec<f32>) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bf16::from_f32(((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0)
    };
    let a: Vec<bf16> = (0..256).map(|_| next()).collect();
    let b: Vec<bf16> = (0..128).map(|_| next()).collect();
    let da = stream.clone_htod(&a).unwrap();
    let db = stream.clone_htod(&b).unwrap();
    let mut dd = stream.alloc_zeros::<f32>(128).unwrap();
    let mut dp = stream.alloc_zeros::<u32>(4).unwrap();
    mma_one_tile::launch(stream, LaunchConfig::new(1, 32), &da, &db, &mut dd, &mut dp).unwrap();
    (a, b, stream.clone_dtoh(&dd).unwrap())
}

/// The simulator's `mma.sync` (exact products summed in f64, rounded once) against the
/// tensor cores' (their own alignment and truncation): within `2^-20 · Σ |a·b|`, the bound
/// docs/simulator.md states; the largest difference seen is printed.
#[test]
fn gpu_mma_agrees_with_the_simulator_within_its_bound() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let (a, b, gpu) = random_mma_tile(&Stream::from_cuda(context.default_stream()));
    let (_, _, sim) = random_mma_tile(&Stream::simulator());
    let mut worst = 0f64;
    for m in 0..16 {
        for n in 0..8 {
            let magnitude: f64 = (0..16)
                .map(|k| f64::from((a[m * 16 + k].to_f32() * b[n * 16 + k].to_f32()).abs()))
                .sum();
            let difference = f64::from((gpu[m * 8 + n] - sim[m * 8 + n]).abs());
            worst = worst.max(difference / magnitude.max(f64::MIN_POSITIVE));
            assert!(
                difference <= magnitude * 2f64.powi(-20),
                "D[{m}][{n}]: GPU {} simulator {} (sum of |a·b| {magnitude})",
                gpu[m * 8 + n],
                sim[m * 8 + n]
            );
        }
    }
    eprintln!(
        "largest |GPU − simulator| / Σ|a·b|: {worst:.3e} (2^{:.1})",
        worst.log2()
    );
}
