//! The pipeline hazards of Hopper kernels, on the CPU simulator: an asynchronous read of
//! shared memory (a `wgmma`'s operand tiles, a TMA store's source) is still under way until
//! the wait that retires it, so a write to those bytes before that — or after it, but not
//! ordered after it — may change what the GPU reads. The simulator computes both reads when
//! they are issued, so it cannot show the wrong numbers; it must report the write, naming
//! both lines. Each hazard is checked beside the correct kernel it breaks, whose result is
//! checked against the host.

mod common;

use cudajit::prelude::*;
use cudajit::tensor::layout::SharedTileSw128;
use cudajit::tensor::mbarrier::mbarrier_arrive_expect_tx;
use cudajit::tensor::pipeline::Ring;
use cudajit::tensor::tma::{
    fence_proxy_async_shared, tma_load_2d, tma_store_2d, tma_store_commit, tma_store_wait,
};
use cudajit::tensor::wgmma::{wgmma, wgmma_commit_group, wgmma_fence, wgmma_wait_group};
use cudajit::tensor_map::{TensorMapElement, TensorMapLayout};
use cudajit::{bf16, Error, LaunchConfig, SimError, SimStream, TensorMap};

/// The ring's buffers: A's 128 rows and B's 64 rows of one 64-deep k-tile, 128 bytes each.
const A_STAGE: u32 = 128 * 128;
const B_STAGE: u32 = 64 * 128;
const STAGES: u32 = 2;
/// The dynamic shared memory: two stages, their barriers, and up to 1 KiB of alignment.
const SHARED: u32 = 1024 + STAGES * (A_STAGE + B_STAGE) + 16 * STAGES;

/// How [`ring_gemm`] refills its ring.
const CORRECT: u32 = 0;
/// Without the `sync_threads()` between the consumers' waits and the refill.
const NO_SYNC: u32 = 1;
/// `wgmma_wait_group::<1>`, then the refill of the k-tile whose wgmmas are still in flight.
const IN_FLIGHT: u32 = 2;
/// `wgmma_wait_group::<1>`, then the refill of the previous k-tile's buffer: correct.
const OVERLAPPED: u32 = 3;
/// Each warpgroup releases the buffer on its `empty` mbarrier after `wgmma_wait_group::<0>`;
/// thread 0 acquires it before the refill: correct, ordered by the mbarrier alone.
const RELEASED: u32 = 4;
/// As [`RELEASED`], but released after `wgmma_wait_group::<1>`, its wgmmas still in flight.
const RELEASED_EARLY: u32 = 5;

/// Thread 0 loads k-tile `g` of A (128 × 64) and B (64 × 64) into its buffer.
#[device]
fn load_k_tile(pipe: Ring, a_map: u64, b_map: u64, a_ring: u32, b_ring: u32, g: u32) {
    let s = pipe.stage(g);
    let full = pipe.full(g);
    mbarrier_arrive_expect_tx(full, A_STAGE + B_STAGE);
    let x = (64 * g) as i32;
    tma_load_2d(a_ring + s * A_STAGE, a_map, x, 0, full);
    tma_load_2d(b_ring + s * B_STAGE, b_map, x, 0, full);
}

/// C (128 × 64, f32, row-major) = A (128 × K, bf16, row-major) · Bᵀ (B 64 × K, row-major),
/// by two warpgroups of 64 rows each, through a two-buffer TMA ring that thread 0 refills
/// as the warpgroups finish with a buffer (`MODE`: [`CORRECT`], [`NO_SYNC`],
/// [`IN_FLIGHT`], [`OVERLAPPED`]).
#[kernel(arch = "sm_90a", max_threads = 256)]
fn ring_gemm<const MODE: u32>(a_map: TensorMap, b_map: TensorMap, k: u32, c: &mut [f32]) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x;
    let warpgroup = t / 128;
    let raw = shared_address(&smem[0]);
    let a_ring = raw + (1024 - raw % 1024) % 1024;
    let b_ring = a_ring + STAGES * A_STAGE;
    let pipe = Ring::new(b_ring + STAGES * B_STAGE, STAGES);
    let (a_address, b_address) = (tensor_map_address(&a_map), tensor_map_address(&b_map));
    let tiles = k / 64;
    let ahead = if MODE == OVERLAPPED { 1 } else { STAGES };
    if t == 0 {
        pipe.init(1, 2);
        for g in 0..ahead.min(tiles) {
            load_k_tile(pipe, a_address, b_address, a_ring, b_ring, g);
        }
    }
    sync_threads();
    let mut acc = [0.0f32; 32];
    for kt in 0..tiles {
        let s = pipe.stage(kt);
        pipe.wait(kt);
        let a_tile = SharedTileSw128::new(a_ring + s * A_STAGE + warpgroup * (A_STAGE / 2));
        let b_tile = SharedTileSw128::new(b_ring + s * B_STAGE);
        wgmma_fence();
        for ks in 0..4u32 {
            let (a, b) = (
                a_tile.k_major_descriptor(32 * ks),
                b_tile.k_major_descriptor(32 * ks),
            );
            wgmma::<bf16, false, false>(&mut acc, a, b, kt > 0 || ks > 0);
        }
        wgmma_commit_group();
        if MODE == IN_FLIGHT || MODE == OVERLAPPED || MODE == RELEASED_EARLY {
            wgmma_wait_group::<1>();
        } else {
            wgmma_wait_group::<0>();
        }
        // The next k-tile for the buffer this iteration's wait has freed (or, the
        // hazards, has not).
        let next = kt + ahead;
        if MODE == RELEASED || MODE == RELEASED_EARLY {
            if t % 128 == 0 {
                pipe.release(kt);
            }
            if t == 0 && next < tiles {
                pipe.acquire(next);
                load_k_tile(pipe, a_address, b_address, a_ring, b_ring, next);
            }
        } else {
            if MODE != NO_SYNC {
                sync_threads();
            }
            if t == 0 && next < tiles {
                load_k_tile(pipe, a_address, b_address, a_ring, b_ring, next);
            }
        }
    }
    wgmma_wait_group::<0>();
    let (lane, warp) = ((t % 32) as usize, ((t % 128) / 32) as usize);
    let row = warpgroup as usize * 64 + warp * 16 + lane / 4;
    for j in 0..8usize {
        let col = 8 * j + 2 * (lane % 4);
        c[row * 64 + col] = acc[4 * j];
        c[row * 64 + col + 1] = acc[4 * j + 1];
        c[(row + 8) * 64 + col] = acc[4 * j + 2];
        c[(row + 8) * 64 + col + 1] = acc[4 * j + 3];
    }
}

/// Small values whose products and sums are exact in f32.
fn operand(count: usize, seed: usize) -> Vec<bf16> {
    (0..count)
        .map(|i| bf16::from_f32(((i * 7 + seed * 3) % 9) as f32 * 0.25 - 1.0))
        .collect()
}

fn run_ring_gemm(mode: u32) -> Result<(), Error> {
    let stream = SimStream::new();
    let k = 256usize;
    let (a, b) = (operand(128 * k, 1), operand(64 * k, 2));
    let (da, db) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let map = |rows: u64, buffer| {
        let layout = TensorMapLayout::tiled(
            TensorMapElement::Bf16,
            &[k as u64, rows],
            &[64, rows as u32],
        )
        .with_swizzle_of::<SharedTileSw128>();
        TensorMap::encode_sim(&layout, buffer)
    };
    let (a_map, b_map) = (map(128, &da)?, map(64, &db)?);
    let mut c = stream.alloc_zeros::<f32>(128 * 64)?;
    let config = LaunchConfig::new(1, 256).with_shared_mem(SHARED);
    let k32 = k as u32;
    match mode {
        CORRECT => ring_gemm::launch::<CORRECT>(&stream, config, a_map, b_map, k32, &mut c),
        NO_SYNC => ring_gemm::launch::<NO_SYNC>(&stream, config, a_map, b_map, k32, &mut c),
        IN_FLIGHT => ring_gemm::launch::<IN_FLIGHT>(&stream, config, a_map, b_map, k32, &mut c),
        OVERLAPPED => ring_gemm::launch::<OVERLAPPED>(&stream, config, a_map, b_map, k32, &mut c),
        RELEASED => ring_gemm::launch::<RELEASED>(&stream, config, a_map, b_map, k32, &mut c),
        _ => ring_gemm::launch::<RELEASED_EARLY>(&stream, config, a_map, b_map, k32, &mut c),
    }?;
    let got = stream.clone_dtoh(&c)?;
    for (i, &value) in got.iter().enumerate() {
        let (row, col) = (i / 64, i % 64);
        let want: f32 = (0..k)
            .map(|kk| a[row * k + kk].to_f32() * b[col * k + kk].to_f32())
            .sum();
        assert_eq!(value, want, "C[{row}][{col}]");
    }
    Ok(())
}

/// The report of a hazard: a shared-memory race at the refill, naming the wgmma's line.
fn hazard(mode: u32) -> String {
    let error = run_ring_gemm(mode).expect_err("the hazard is reported");
    let Error::Simulator(SimError::SharedMemoryRace { site, detail }) = &error else {
        panic!("expected the refill to be reported as a hazard, got {error}");
    };
    assert_eq!(site.thread, [0, 0, 0], "{error}");
    assert!(
        detail.contains("an operand of a `wgmma` of warpgroup"),
        "{detail}"
    );
    assert!(
        detail.matches("pipeline_hazards.rs:").count() >= 1,
        "the wgmma's line: {detail}"
    );
    let text = error.to_string();
    assert!(
        text.contains("pipeline_hazards.rs:"),
        "the refill's line: {text}"
    );
    eprintln!("reported: {error}");
    detail.clone()
}

#[test]
fn the_correct_ring_gemms_match_the_host() {
    run_ring_gemm(CORRECT).unwrap();
    run_ring_gemm(OVERLAPPED).unwrap();
    run_ring_gemm(RELEASED).unwrap();
}

#[test]
fn a_refill_without_the_sync_threads_after_the_consumers_wait_is_reported() {
    let detail = hazard(NO_SYNC);
    assert!(
        detail.contains("`wgmma` of warpgroup 1"),
        "the other warpgroup's read: {detail}"
    );
    assert!(
        detail.contains("nothing orders that wait before this write"),
        "{detail}"
    );
}

#[test]
fn a_refill_of_a_buffer_an_in_flight_wgmma_reads_is_reported() {
    for mode in [IN_FLIGHT, RELEASED_EARLY] {
        let detail = hazard(mode);
        assert!(detail.contains("still in flight"), "{detail}");
        assert!(detail.contains("wgmma_wait_group::<N>"), "{detail}");
    }
}

/// Two 32 × 8 f32 boxes through one staging tile: every thread writes box `i`, thread 0
/// stores it with TMA at x = 32 i. With `WAIT`, thread 0 waits for the previous store to
/// have read the tile before the block refills it.
#[kernel]
fn staged_stores<const WAIT: bool>(map: TensorMap) {
    let tile = shared_array::<f32>(256 + 32);
    let t = thread_idx().x as usize;
    let skip = (((128 - shared_address(&tile[0]) % 128) % 128) / 4) as usize;
    for i in 0..2u32 {
        if WAIT && t == 0 {
            tma_store_wait();
        }
        sync_threads();
        tile[skip + t] = (1000 * i) as f32 + t as f32;
        fence_proxy_async_shared();
        sync_threads();
        if t == 0 {
            let source = shared_address(&tile[skip]);
            tma_store_2d(tensor_map_address(&map), 32 * i as i32, 0, source);
            tma_store_commit();
        }
    }
    if t == 0 {
        tma_store_wait();
    }
}

fn run_staged_stores(wait: bool) -> Result<Vec<f32>, Error> {
    let stream = SimStream::new();
    let tensor = stream.alloc_zeros::<f32>(64 * 8)?;
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 8], &[32, 8]);
    let map = TensorMap::encode_sim(&layout, &tensor)?;
    let config = LaunchConfig::new(1, 256);
    if wait {
        staged_stores::launch::<true>(&stream, config, map)?;
    } else {
        staged_stores::launch::<false>(&stream, config, map)?;
    }
    stream.clone_dtoh(&tensor)
}

#[test]
fn a_staging_tile_rewritten_before_its_tma_store_has_read_it_is_reported() {
    let got = run_staged_stores(true).unwrap();
    for (i, &value) in got.iter().enumerate() {
        let (y, x) = (i / 64, i % 64);
        let t = y * 32 + x % 32;
        assert_eq!(value, (1000 * (x / 32)) as f32 + t as f32, "({x}, {y})");
    }
    let error = run_staged_stores(false).unwrap_err();
    let Error::Simulator(SimError::SharedMemoryRace { detail, .. }) = &error else {
        panic!("expected the rewrite to be reported, got {error}");
    };
    assert!(
        detail.contains("the source of a TMA store thread (0, 0, 0)")
            && detail.contains("tma_store_wait()"),
        "{detail}"
    );
    eprintln!("reported: {error}");
}
