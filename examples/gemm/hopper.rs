//! The Hopper GEMM in cudajit's kernel language: TMA + wgmma, warp-specialised over an
//! mbarrier pipeline (`cudajit::tensor::{tma, mbarrier, wgmma}`), for sm_90a.
//!
//! C (M×N, row-major, f32) = A (M×K, bf16, row-major) · B, f32 accumulate. B is given
//! column by column (N×K, "TN": K-major in shared memory, as A) or, with `B_ROW_MAJOR`,
//! row by row (K×N, "NN": MN-major in shared memory, which `wgmma` reads transposed). A block computes a 128×256 tile of C with three warpgroups
//! (384 threads):
//!
//! - **warpgroup 0, the producer**, gives up registers (`setmaxnreg.dec` to 40) and one of
//!   its threads streams k-tiles of 64 into a `STAGES`-deep ring of shared buffers with TMA
//!   (A: a 64×128 box, B: a 64×256 box, both 128-byte swizzled), each buffer's `full`
//!   barrier completing when its 48 KiB have landed; before refilling a buffer it waits on
//!   the buffer's `empty` barrier;
//! - **warpgroups 1 and 2, the consumers**, take registers (`setmaxnreg.inc` to 232) and
//!   each multiplies its 64 rows of the A tile by the whole B tile with four
//!   `wgmma.mma_async.m64n256k16` per k-tile (accumulators: 128 f32 per thread), keeping
//!   one k-tile's wgmmas in flight and releasing the buffer of the one before;
//! - the epilogue writes each thread's accumulators straight to C (8-byte stores).
//!
//! With `PERSISTENT`, one block per SM (or per tile, when there are fewer tiles) walks
//! the tiles `block, block + grid, ..` in the same band order: the producer runs on into
//! the next tile's k-tiles while the consumers write the last one's C, so the epilogue and
//! the next tile's first loads overlap (the pipeline's stage and phase counters carry on
//! across tiles).
//!
//! M must be a multiple of 128, N of 256, K of 64 (the benchmark checks).

use cudajit::bf16;
use cudajit::prelude::*;
use cudajit::tensor::cluster::{
    cluster_ctarank, cluster_sync, map_shared_rank, mbarrier_arrive_cluster, tma_load_2d_multicast,
};
use cudajit::tensor::layout::SharedTileSw128;
use cudajit::tensor::mbarrier::mbarrier_arrive_expect_tx;
use cudajit::tensor::pack::pack_bf16x2;
use cudajit::tensor::pipeline::Ring;
use cudajit::tensor::tma::tma_load_2d;
use cudajit::tensor::warpgroup::{setmaxnreg_dec, setmaxnreg_inc};
use cudajit::tensor::wgmma::{wgmma, wgmma_commit_group, wgmma_fence, wgmma_wait_group, E4m3};
use cudajit::tensor_map::TensorMap;

use super::tiles::band_order;

/// Buffers in the ring.
pub const STAGES: u32 = 4;
/// Three warpgroups: the producer and two consumers.
pub const THREADS: u32 = 384;
/// The block tile.
pub const TILE_M: usize = 128;
pub const TILE_N: usize = 256;
pub const TILE_K: usize = 64;
/// One buffer's A (128 rows of 64 bf16) and B (256 rows of 64 bf16) bytes.
const A_BYTES: u32 = 128 * 64 * 2;
const B_BYTES: u32 = 256 * 64 * 2;
/// Dynamic shared memory: the ring, its `full` and `empty` barriers, and up to 1 KiB to
/// align the ring to the 128-byte swizzle's 1024-byte repeat.
pub const SHARED_BYTES: u32 = 1024 + STAGES * (A_BYTES + B_BYTES) + 16 * STAGES;

/// The origin (row, column) of C of this block's tile `i`: with `PERSISTENT` the tile
/// `block + i · grid` of the `tiles_m × tiles_n` in band order, otherwise the block's own
/// (with clusters, x pairs the `pairs` blocks of a 256-row band; `rank` is the block's).
#[device]
fn tile_origin<const PERSISTENT: bool>(
    i: usize,
    tiles_n: usize,
    tiles_m: usize,
    pairs: usize,
    rank: u32,
) -> (usize, usize) {
    let (bx, by, gx, gy) = if PERSISTENT {
        let id = block_idx().x as usize + i * grid_dim().x as usize;
        (id % tiles_n, id / tiles_n, tiles_n, tiles_m)
    } else {
        (
            block_idx().x as usize / pairs,
            block_idx().y as usize,
            grid_dim().x as usize / pairs,
            grid_dim().y as usize,
        )
    };
    let (band_m, tile_n) = band_order(bx, by, gx, gy);
    ((band_m * pairs + rank as usize) * TILE_M, tile_n * TILE_N)
}

/// C = A · B in f32, A and B through their tensor maps (innermost dimension first, all
/// 128-byte swizzled): A K × M in boxes of 64 × 128; B K × N in boxes of 64 × 256 (TN) or,
/// with `B_ROW_MAJOR`, N × K in boxes of 64 × 64, four per k-tile.
///
/// With `FP8`, A and B are e4m3 (one byte each) and a k-tile is 128 deep: the boxes are
/// 128 × 128 and 128 × 256 bytes, the same rows of 128 bytes, and each of the four
/// `wgmma.m64n256k32.e4m3` per k-tile takes 32 of them (FP8 is K-major only: TN).
///
/// With `CLUSTER` (TN, launched in clusters of 2 blocks along x), the two blocks of a
/// cluster compute vertically adjacent tiles, which need the same B tile: each loads half
/// of it (a 64 × 128 box) and multicasts it into both blocks' buffers, so B crosses L2
/// once per cluster. A buffer is then refilled only when the consumers of both blocks have
/// released it: `empty` counts four arrivals, two of them from the other block.
#[kernel(arch = "sm_90a", max_threads = 384)]
pub fn gemm_wgmma<
    C: DeviceScalar,
    const B_ROW_MAJOR: bool,
    const FP8: bool,
    const CLUSTER: bool,
    const BF16_OUT: bool,
    const PERSISTENT: bool,
>(
    a_map: TensorMap,
    b_map: TensorMap,
    n: u32,
    k: u32,
    c: &mut [C],
) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x;
    let warpgroup = t / 128;
    let raw = shared_address(&smem[0]);
    let ring = raw + (1024 - raw % 1024) % 1024;
    let b_ring = ring + STAGES * A_BYTES;
    // The buffers' barriers after them: k-tile `g` is in buffer `g % STAGES`.
    let pipeline = Ring::new(ring + STAGES * (A_BYTES + B_BYTES), STAGES);
    // With clusters, x pairs blocks: the pair takes a 256-row band's two tiles.
    let rank = if CLUSTER { cluster_ctarank() } else { 0 };
    let pairs = if CLUSTER { 2 } else { 1 };
    let nn = n as usize;
    let tiles_n = nn / TILE_N;
    let tiles_m = c.len() / nn / TILE_M;
    // The tiles this block takes: every `grid`-th from its own, or just its own.
    let count = if PERSISTENT {
        let (first, step) = (block_idx().x as usize, grid_dim().x as usize);
        (tiles_n * tiles_m - first + step - 1) / step
    } else {
        1
    };
    // Elements per 128-byte row of a k-tile.
    let depth = if FP8 { 128 } else { 64 };
    let tiles = k / depth;
    if t == 0 {
        // Full: the producer's arrival and the TMA bytes; empty: both consumers (of both
        // blocks of a cluster).
        pipeline.init(1, 2 * pairs as u32);
    }
    if CLUSTER {
        // The other block's barriers are initialised before anything multicasts to them.
        cluster_sync();
    } else {
        sync_threads();
    }
    if warpgroup == 0 {
        setmaxnreg_dec::<40>();
        if t == 0 {
            let a_address = tensor_map_address(&a_map);
            let b_address = tensor_map_address(&b_map);
            for i in 0..count {
                let (row0, col0) = tile_origin::<PERSISTENT>(i, tiles_n, tiles_m, pairs, rank);
                for kt in 0..tiles {
                    // The pipeline's k-tile counter runs on across this block's tiles.
                    let g = i as u32 * tiles + kt;
                    let s = pipeline.stage(g);
                    // The consumers have released this buffer's previous k-tile.
                    pipeline.acquire(g);
                    let full = pipeline.full(g);
                    mbarrier_arrive_expect_tx(full, A_BYTES + B_BYTES);
                    let x = (kt * depth) as i32;
                    tma_load_2d(ring + s * A_BYTES, a_address, x, row0 as i32, full);
                    if B_ROW_MAJOR {
                        // Four 64-column chunks of the 64 k rows, 8 KiB apart.
                        for chunk in 0..4u32 {
                            let column = (col0 as u32 + 64 * chunk) as i32;
                            tma_load_2d(
                                b_ring + s * B_BYTES + 8192 * chunk,
                                b_address,
                                column,
                                x,
                                full,
                            );
                        }
                    } else if CLUSTER {
                        // This block's half of B, into both blocks' buffers.
                        let half = (col0 as u32 + 128 * rank) as i32;
                        let target = b_ring + s * B_BYTES + rank * (B_BYTES / 2);
                        tma_load_2d_multicast(target, b_address, x, half, full, 3);
                    } else {
                        tma_load_2d(b_ring + s * B_BYTES, b_address, x, col0 as i32, full);
                    }
                }
            }
        }
    } else {
        setmaxnreg_inc::<232>();
        let consumer = warpgroup - 1;
        let mut acc = [0.0f32; 128];
        for i in 0..count {
            let (row0, col0) = tile_origin::<PERSISTENT>(i, tiles_n, tiles_m, pairs, rank);
            for kt in 0..tiles {
                let g = i as u32 * tiles + kt;
                let s = pipeline.stage(g);
                pipeline.wait(g);
                // This consumer's 64 rows of the A tile (64 rows × 128 bytes further), and
                // the whole B tile; slice `ks` of the 64-deep k-tile 32 bytes further.
                let a_tile = SharedTileSw128::new(ring + s * A_BYTES + consumer * (A_BYTES / 2));
                let b_tile = SharedTileSw128::new(b_ring + s * B_BYTES);
                wgmma_fence();
                for ks in 0..4u32 {
                    // A tile's first product overwrites the accumulators.
                    let accumulate = kt > 0 || ks > 0;
                    let a_desc = a_tile.k_major_descriptor(32 * ks);
                    if FP8 {
                        let b_desc = b_tile.k_major_descriptor(32 * ks);
                        wgmma::<E4m3, false, false>(&mut acc, a_desc, b_desc, accumulate);
                    } else if B_ROW_MAJOR {
                        // B's k rows 16 ks.., chunks of 64 columns 8 KiB apart; read transposed.
                        let b_desc = b_tile.mn_major_descriptor(16 * ks, 8192);
                        wgmma::<bf16, false, true>(&mut acc, a_desc, b_desc, accumulate);
                    } else {
                        let b_desc = b_tile.k_major_descriptor(32 * ks);
                        wgmma::<bf16, false, false>(&mut acc, a_desc, b_desc, accumulate);
                    }
                }
                wgmma_commit_group();
                // k-tile `kt - 1`'s wgmmas have completed: its buffer may be refilled.
                wgmma_wait_group::<1>();
                if kt > 0 && t % 128 == 0 {
                    pipeline.release(g - 1);
                    if CLUSTER {
                        // The other block multicast into this buffer too.
                        mbarrier_arrive_cluster(map_shared_rank(pipeline.empty(g - 1), rank ^ 1));
                    }
                }
            }
            wgmma_wait_group::<0>();
            if PERSISTENT && t % 128 == 0 {
                // The tile's last buffer, released for the next tile's loads.
                pipeline.release(i as u32 * tiles + tiles - 1);
            }
            // Warp `w` of the consumer holds rows 16 w + g and 16 w + g + 8 of its 64, columns
            // 8 j + 2 q and 8 j + 2 q + 1 of each 8-column block `j`.
            let lane = (t % 32) as usize;
            let warp = ((t % 128) / 32) as usize;
            let quad = lane / 4;
            let q = lane % 4;
            let row = row0 + consumer as usize * 64 + warp * 16 + quad;
            // C (`C` is f32, or bf16 with `BF16_OUT`) seen as the words the stores write: two
            // f32 in one 8-byte store, or two bf16 rounded into one 32-bit word. SAFETY: the
            // words are `c`'s own memory (N is even), aligned as every allocation is, and
            // each is written by one thread only.
            let address = global_address(&c[0]) as usize;
            if BF16_OUT {
                let words = unsafe { slice_at_mut::<u32>(address, c.len() / 2) };
                for j in 0..32usize {
                    let col = col0 + j * 8 + 2 * q;
                    words[(row * nn + col) / 2] = pack_bf16x2(acc[4 * j], acc[4 * j + 1]);
                    words[((row + 8) * nn + col) / 2] = pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
                }
            } else {
                let floats = unsafe { slice_at_mut::<f32>(address, c.len()) };
                for j in 0..32usize {
                    let col = col0 + j * 8 + 2 * q;
                    vstore2(floats, (row * nn + col) / 2, (acc[4 * j], acc[4 * j + 1]));
                    vstore2(
                        floats,
                        ((row + 8) * nn + col) / 2,
                        (acc[4 * j + 2], acc[4 * j + 3]),
                    );
                }
            }
        }
    }
    if CLUSTER {
        // No block leaves while the other may still multicast into it or arrive on its
        // barriers.
        cluster_sync();
    }
}

/// Launches [`gemm_wgmma`] for M×N×K: the tensor maps of A and B with the boxes and the
/// 128-byte swizzle the wgmma descriptors describe, and one block per 128×256 tile of C —
/// with `cluster` (TN only, M a multiple of 256), in clusters of two vertically adjacent
/// tiles sharing B by multicast; with `persistent` (not with `cluster`), one block per SM
/// walking the tiles.
#[allow(clippy::too_many_arguments)]
pub fn launch<C: Output>(
    stream: &std::sync::Arc<cudajit::CudaStream>,
    b_row_major: bool,
    cluster: bool,
    persistent: bool,
    (m, n, k): (u32, u32, u32),
    a: &cudajit::CudaSlice<cudajit::bf16>,
    b: &cudajit::CudaSlice<cudajit::bf16>,
    c: &mut cudajit::CudaSlice<C>,
) -> super::Result<()> {
    if cluster && (b_row_major || m % (2 * TILE_M as u32) != 0) {
        return Err("the clustered wgmma GEMM is TN with M a multiple of 256".into());
    }
    if cluster && persistent {
        return Err("the clustered wgmma GEMM is not persistent".into());
    }
    let (a_map, b_map) = tensor_maps(b_row_major, cluster, (m, n, k), a, b)?;
    let form = (b_row_major, false, cluster);
    launch_maps(stream, form, persistent, (m, n), a_map, b_map, k, c)
}

/// Launches the FP8 form of [`gemm_wgmma`]: A (M×K) and B (N×K) e4m3, as bytes (with
/// `persistent`, one block per SM walking the tiles).
pub fn launch_fp8(
    stream: &std::sync::Arc<cudajit::CudaStream>,
    persistent: bool,
    (m, n, k): (u32, u32, u32),
    a: &cudajit::CudaSlice<u8>,
    b: &cudajit::CudaSlice<u8>,
    c: &mut cudajit::CudaSlice<f32>,
) -> super::Result<()> {
    let (a_map, b_map) = fp8_tensor_maps((m, n, k), a, b)?;
    launch_maps(
        stream,
        (false, true, false),
        persistent,
        (m, n),
        a_map,
        b_map,
        k,
        c,
    )
}

/// C's element types: f32, or bf16 (rounded to nearest even, two per 32-bit store).
pub trait Output: cudajit::DeviceScalar + cudarc::driver::DeviceRepr {
    /// The kernel's `BF16_OUT`.
    const BF16: bool;
}

impl Output for f32 {
    const BF16: bool = false;
}

impl Output for cudajit::bf16 {
    const BF16: bool = true;
}

/// The launch of the form (`B_ROW_MAJOR`, `FP8`, `CLUSTER`) writing C in `C`, persistent
/// or one block per tile.
#[allow(clippy::too_many_arguments)]
fn launch_maps<C: Output>(
    stream: &std::sync::Arc<cudajit::CudaStream>,
    form: (bool, bool, bool),
    persistent: bool,
    (m, n): (u32, u32),
    a_map: TensorMap<'_>,
    b_map: TensorMap<'_>,
    k: u32,
    c: &mut cudajit::CudaSlice<C>,
) -> super::Result<()> {
    let (tiles_n, tiles_m) = (n / TILE_N as u32, m / TILE_M as u32);
    let config = if form.2 {
        // x pairs the two blocks of a cluster: the 2 tiles of a 256-row band.
        cudajit::LaunchConfig::new((2 * tiles_n, tiles_m / 2, 1), THREADS).with_cluster((2, 1, 1))
    } else if persistent {
        use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
        let sms = stream
            .context()
            .attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        cudajit::LaunchConfig::new((sms.min(tiles_n * tiles_m), 1, 1), THREADS)
    } else {
        cudajit::LaunchConfig::new((tiles_n, tiles_m, 1), THREADS)
    }
    .with_shared_mem(SHARED_BYTES);
    // The specialisation's constants are type-level: each form is its own instance.
    macro_rules! form {
        ($row:literal, $fp8:literal, $cluster:literal) => {
            match (C::BF16, persistent) {
                (true, false) => gemm_wgmma::launch::<C, $row, $fp8, $cluster, true, false>(
                    stream, config, a_map, b_map, n, k, c,
                )?,
                (false, false) => gemm_wgmma::launch::<C, $row, $fp8, $cluster, false, false>(
                    stream, config, a_map, b_map, n, k, c,
                )?,
                (true, true) => gemm_wgmma::launch::<C, $row, $fp8, $cluster, true, true>(
                    stream, config, a_map, b_map, n, k, c,
                )?,
                (false, true) => gemm_wgmma::launch::<C, $row, $fp8, $cluster, false, true>(
                    stream, config, a_map, b_map, n, k, c,
                )?,
            }
        };
    }
    match form {
        (false, false, false) => form!(false, false, false),
        (true, false, false) => form!(true, false, false),
        (false, true, false) => form!(false, true, false),
        (false, false, true) => form!(false, false, true),
        _ => {
            return Err("the FP8 and clustered forms read B K-major only (TN), unclustered".into())
        }
    }
    Ok(())
}

/// The tensor maps of FP8 A (K × M bytes, innermost first) and B (K × N) in boxes of
/// 128 × 128 and 128 × 256, 128-byte swizzled.
pub fn fp8_tensor_maps<'a>(
    (m, n, k): (u32, u32, u32),
    a: &'a cudajit::CudaSlice<u8>,
    b: &'a cudajit::CudaSlice<u8>,
) -> super::Result<(TensorMap<'a>, TensorMap<'a>)> {
    use cudajit::tensor_map::{TensorMapElement, TensorMapLayout};
    let operand = |outer: u32, box_outer: u32| {
        TensorMapLayout::tiled(
            TensorMapElement::U8,
            &[u64::from(k), u64::from(outer)],
            &[128, box_outer],
        )
        .with_swizzle_of::<SharedTileSw128>()
    };
    let a_map = TensorMap::encode(&operand(m, TILE_M as u32), a)?;
    let b_map = TensorMap::encode(&operand(n, TILE_N as u32), b)?;
    Ok((a_map, b_map))
}

/// The tensor maps of A (K × M, innermost first, boxes of 64 × 128) and B (K × N in boxes
/// of 64 × 256, or row-major N × K in boxes of 64 × 64), 128-byte swizzled.
pub fn tensor_maps<'a>(
    b_row_major: bool,
    cluster: bool,
    (m, n, k): (u32, u32, u32),
    a: &'a cudajit::CudaSlice<cudajit::bf16>,
    b: &'a cudajit::CudaSlice<cudajit::bf16>,
) -> super::Result<(TensorMap<'a>, TensorMap<'a>)> {
    use cudajit::tensor_map::{TensorMapElement, TensorMapLayout};
    // `inner` × `outer` elements in boxes of 64 × `box_outer`.
    let operand = |inner: u32, outer: u32, box_outer: u32| {
        TensorMapLayout::tiled(
            TensorMapElement::Bf16,
            &[u64::from(inner), u64::from(outer)],
            &[64, box_outer],
        )
        .with_swizzle_of::<SharedTileSw128>()
    };
    let a_map = TensorMap::encode(&operand(k, m, TILE_M as u32), a)?;
    let b_layout = if b_row_major {
        operand(n, k, TILE_K as u32)
    } else {
        // A cluster's block loads half of B's tile and multicasts it.
        operand(
            k,
            n,
            if cluster {
                TILE_N as u32 / 2
            } else {
                TILE_N as u32
            },
        )
    };
    let b_map = TensorMap::encode(&b_layout, b)?;
    Ok((a_map, b_map))
}
