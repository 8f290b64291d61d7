//! The swizzled shared-tile types of `cudajit::tensor::layout` against what TMA writes and
//! `wgmma` reads: for the 32-, 64- and 128-byte swizzles, a TMA box loaded with the map's
//! swizzle taken from the tile type (`with_swizzle_of`) is read back element by element
//! through the tile's `address_of`, and multiplied by `wgmma` through the tile's
//! descriptors — on the CPU simulator (its TMA swizzle and its descriptor decoding) and,
//! with a Hopper GPU, on the hardware. A test per swizzle, each failing if the tile's
//! offsets, its descriptors or its tensor-map swizzle disagree.

mod common;

use cudajit::prelude::*;
use cudajit::tensor::layout::{
    warpgroup_acc_position, SharedTileSw128, SharedTileSw32, SharedTileSw64, TileSwizzle,
};
use cudajit::tensor::mbarrier::{
    fence_barrier_init, mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_wait_parity,
};
use cudajit::tensor::tma::tma_load_2d;
use cudajit::tensor::wgmma::{wgmma_commit_group, wgmma_fence, wgmma_wait_group};
use cudajit::tensor_map::{TensorMapElement, TensorMapLayout};
use cudajit::{bf16, LaunchConfig, Stream, TensorMap};

/// One warpgroup. A (64 × K bf16, row-major: K-major) and B (64 × K, `b[n * K + k]`:
/// K-major) arrive by TMA, each one box whose rows are `row_bytes` (32, 64 or 128: K = 16,
/// 32, 64) bytes, into tiles of the swizzle of that width. Thread `t` reads row `t % 64`
/// of A (`t < 64`) or B back through `address_of` into `elements`; the warpgroup computes
/// `out = A · Bᵀ` (64 × 64 f32) with one `wgmma` per 16-deep k slice, through the tile's
/// `k_major_descriptor`, and writes each register where `warpgroup_acc_position` puts it.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn tma_tiles_into_wgmma(
    a_map: TensorMap,
    b_map: TensorMap,
    row_bytes: u32,
    elements: &mut [u16],
    out: &mut [f32],
) {
    let smem = dynamic_shared::<u16>();
    let barrier = shared_array::<u64>(1);
    let t = thread_idx().x;
    let raw = shared_address(&smem[0]);
    // Both tiles 1024-byte aligned: the largest swizzle's repeat.
    let a_address = raw + (1024 - raw % 1024) % 1024;
    let b_address = a_address + 8192;
    let bar = shared_address(&barrier[0]);
    if t == 0 {
        mbarrier_init(bar, 1);
        fence_barrier_init();
    }
    sync_threads();
    if t == 0 {
        mbarrier_arrive_expect_tx(bar, 2 * 64 * row_bytes);
        tma_load_2d(a_address, tensor_map_address(&a_map), 0, 0, bar);
        tma_load_2d(b_address, tensor_map_address(&b_map), 0, 0, bar);
    }
    mbarrier_wait_parity(bar, 0);
    let k = row_bytes / 2;
    let row = t % 64;
    let tile = if t < 64 { a_address } else { b_address };
    let mut a_desc = [0u64; 4];
    let mut b_desc = [0u64; 4];
    for c in 0..k {
        let at = if row_bytes == 128 {
            SharedTileSw128::new(tile).address_of(row, 2 * c)
        } else if row_bytes == 64 {
            SharedTileSw64::new(tile).address_of(row, 2 * c)
        } else {
            SharedTileSw32::new(tile).address_of(row, 2 * c)
        };
        elements[(t * k + c) as usize] = smem[((at - raw) / 2) as usize];
    }
    for ks in 0..4u32 {
        if row_bytes == 128 {
            a_desc[ks as usize] = SharedTileSw128::new(a_address).k_major_descriptor(32 * ks);
            b_desc[ks as usize] = SharedTileSw128::new(b_address).k_major_descriptor(32 * ks);
        } else if row_bytes == 64 {
            a_desc[ks as usize] = SharedTileSw64::new(a_address).k_major_descriptor(32 * ks);
            b_desc[ks as usize] = SharedTileSw64::new(b_address).k_major_descriptor(32 * ks);
        } else {
            a_desc[ks as usize] = SharedTileSw32::new(a_address).k_major_descriptor(32 * ks);
            b_desc[ks as usize] = SharedTileSw32::new(b_address).k_major_descriptor(32 * ks);
        }
    }
    let mut acc = [0.0f32; 32];
    wgmma_fence();
    for ks in 0..4u32 {
        if ks < k / 16 {
            ptx!(
                "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 0;\n}",
                &mut acc,
                a_desc[ks as usize],
                b_desc[ks as usize],
                ks
            );
        }
    }
    wgmma_commit_group();
    wgmma_wait_group::<0>();
    for r in 0..32u32 {
        let (m, n) = warpgroup_acc_position(t, r);
        out[(m * 64 + n) as usize] = acc[r as usize];
    }
}

fn small(i: usize, seed: usize) -> f32 {
    ((i * 7 + seed * 5) % 9) as f32 - 4.0
}

/// Runs `tma_tiles_into_wgmma` for tile type `T` on `stream`: every element read back
/// where TMA put it, and the product exact (small integers).
fn check<T: TileSwizzle>(stream: &Stream) {
    let k = (T::ROW_BYTES / 2) as usize;
    let a: Vec<bf16> = (0..64 * k).map(|i| bf16::from_f32(small(i, 1))).collect();
    let b: Vec<bf16> = (0..64 * k).map(|i| bf16::from_f32(small(i, 2))).collect();
    let layout = TensorMapLayout::tiled(TensorMapElement::Bf16, &[k as u64, 64], &[k as u32, 64])
        .with_swizzle_of::<T>();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let a_map = TensorMap::encode_buffer(&layout, &da).unwrap();
    let b_map = TensorMap::encode_buffer(&layout, &db).unwrap();
    let mut elements = stream.alloc_zeros::<u16>(128 * k).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64 * 64).unwrap();
    let config = LaunchConfig::new(1, 128).with_shared_mem(1024 + 2 * 8192);
    tma_tiles_into_wgmma::launch(
        stream,
        config,
        a_map,
        b_map,
        T::ROW_BYTES,
        &mut elements,
        &mut out,
    )
    .unwrap();
    let elements = stream.clone_dtoh(&elements).unwrap();
    let bits: Vec<u16> = a.iter().chain(&b).map(|x| x.to_bits()).collect();
    for (i, (&got, &want)) in elements.iter().zip(&bits).enumerate() {
        let (operand, row, column) = (["A", "B"][i / (64 * k)], (i / k) % 64, i % k);
        assert_eq!(
            got,
            want,
            "{}-byte tile: {operand}[{row}][{column}] read back",
            T::ROW_BYTES
        );
    }
    let out = stream.clone_dtoh(&out).unwrap();
    for m in 0..64 {
        for n in 0..64 {
            let want: f32 = (0..k)
                .map(|kk| a[m * k + kk].to_f32() * b[n * k + kk].to_f32())
                .sum();
            assert_eq!(
                out[m * 64 + n],
                want,
                "{}-byte tile: D[{m}][{n}]",
                T::ROW_BYTES
            );
        }
    }
}

#[test]
fn the_128_byte_tile_matches_tma_and_wgmma_on_the_simulator() {
    check::<SharedTileSw128>(&Stream::simulator());
}

#[test]
fn the_64_byte_tile_matches_tma_and_wgmma_on_the_simulator() {
    check::<SharedTileSw64>(&Stream::simulator());
}

#[test]
fn the_32_byte_tile_matches_tma_and_wgmma_on_the_simulator() {
    check::<SharedTileSw32>(&Stream::simulator());
}

/// A GPU of compute capability 9.0, or `None` after printing why the test is skipped.
fn hopper() -> Option<Stream> {
    let context = common::gpu_or_skip()?;
    if context.compute_capability().ok()?.0 != 9 {
        eprintln!("skipped: TMA and wgmma (sm_90a) need compute capability 9.0");
        return None;
    }
    Some(Stream::from_cuda(context.default_stream()))
}

#[test]
fn the_tiles_match_tma_and_wgmma_on_the_gpu() {
    if let Some(stream) = hopper() {
        check::<SharedTileSw128>(&stream);
        check::<SharedTileSw64>(&stream);
        check::<SharedTileSw32>(&stream);
    }
}

/// The tiles' offsets and descriptors are arithmetic that inlines: the kernel's PTX holds
/// its TMA loads and wgmmas with no local memory and no call.
#[test]
fn the_tile_kernel_compiles_to_tma_and_wgmma_in_registers() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = linked_ptx(
        tma_tiles_into_wgmma::KERNEL.captured(),
        &cudajit::Specialization::default(),
        cudajit::Arch::SM_90A,
        &CompileOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for needle in [
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
    ] {
        assert!(ptx.contains(needle), "`{needle}` missing:\n{ptx}");
    }
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call"), "a call was not inlined:\n{ptx}");
}
