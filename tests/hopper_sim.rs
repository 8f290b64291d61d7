//! Hopper's instructions on the CPU simulator, each against a host computation: mbarrier
//! phases and parities (arrivals from any warp, a ping-pong over several phases),
//! `wgmma.mma_async` with K-major and MN-major (transposed) B through the 128-byte
//! swizzled descriptors of `cudajit::tensor::wgmma`, accumulating or not, with bf16 and
//! e4m3 inputs, and A from registers (bf16, f16) against A from its descriptor; and the reports of their misuse: a wait that can never complete, a wgmma
//! without its fence, a descriptor outside shared memory, `setmaxnreg` in a partial
//! warpgroup, a TMA tile read through a descriptor of another swizzle. No GPU needed (the
//! `gpu_` twins run on Hopper).

mod common;

use cudajit::prelude::*;
use cudajit::tensor::mbarrier::mbarrier_arrive_expect_tx;
use cudajit::tensor::mbarrier::{
    fence_barrier_init, mbarrier_arrive, mbarrier_init, mbarrier_wait_parity,
};
use cudajit::tensor::tma::{
    fence_proxy_async_shared, tma_load_2d, tma_store_2d, tma_store_commit, tma_store_wait,
};
use cudajit::tensor::wgmma::{
    k_major_sw128, mn_major_sw128, wgmma_commit_group, wgmma_fence, wgmma_wait_group,
};
use cudajit::tensor_map::{TensorMapElement, TensorMapLayout};
use cudajit::{bf16, Error, LaunchConfig, SimError, SimStream, Stream, TensorMap};

/// Thread `publisher` writes a value and arrives; every thread waits on the phase and
/// reads it. With `arrive` 0 nobody arrives.
#[kernel]
fn publish(out: &mut [u32], publisher: u32, arrive: u32) {
    let bars = shared_array::<u64>(1);
    let value = shared_array::<u32>(1);
    let bar = shared_address(&bars[0]);
    let t = thread_idx().x;
    if t == 0 {
        mbarrier_init(bar, 1);
        fence_barrier_init();
    }
    sync_threads();
    if t == publisher && arrive != 0 {
        value[0] = 42 + publisher;
        mbarrier_arrive(bar);
    }
    mbarrier_wait_parity(bar, 0);
    // Each block its own part of `out` (blocks writing the same elements would race).
    out[(block_idx().x * block_dim().x + t) as usize] = value[0];
}

/// Threads 0 and 32 hand a value back and forth `rounds` times over two barriers, each
/// waiting on the parity of its round.
#[kernel]
fn ping_pong(out: &mut [u32], rounds: u32) {
    let bars = shared_array::<u64>(2);
    let data = shared_array::<u32>(1);
    let ping = shared_address(&bars[0]);
    let pong = shared_address(&bars[1]);
    let t = thread_idx().x;
    if t == 0 {
        mbarrier_init(ping, 1);
        mbarrier_init(pong, 1);
        fence_barrier_init();
    }
    sync_threads();
    for round in 0..rounds {
        if t == 0 {
            data[0] = 10 * round + 1;
            mbarrier_arrive(ping);
            mbarrier_wait_parity(pong, round & 1);
        }
        if t == 32 {
            mbarrier_wait_parity(ping, round & 1);
            out[round as usize] = data[0];
            mbarrier_arrive(pong);
        }
    }
}

#[test]
fn mbarrier_phases_order_the_threads_that_wait_on_them() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(256).unwrap();
    for publisher in [0u32, 100] {
        publish::launch(&stream, LaunchConfig::new(2, 128), &mut out, publisher, 1).unwrap();
        assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![42 + publisher; 256]);
    }
    let mut rounds = stream.alloc_zeros::<u32>(7).unwrap();
    ping_pong::launch(&stream, LaunchConfig::new(1, 64), &mut rounds, 7).unwrap();
    let want: Vec<u32> = (0..7).map(|r| 10 * r + 1).collect();
    assert_eq!(stream.clone_dtoh(&rounds).unwrap(), want);

    let error = publish::launch(&stream, LaunchConfig::new(1, 128), &mut out, 0, 0).unwrap_err();
    let Error::Simulator(SimError::Ptx { site, detail }) = &error else {
        panic!("expected a wait that can never complete, got {error}");
    };
    assert_eq!(site.kernel, "publish");
    assert!(
        detail.contains("can never complete")
            && detail.contains("expects 1 of 1 arrivals")
            && detail.contains("`bars`[0]"),
        "{detail}"
    );
    eprintln!("reported: {error}");
}

/// Bytes of the A image (64 rows of 128 bytes) and of B's (128 rows of 128 bytes, or two
/// 64-column chunks of 8 KiB).
const A_IMAGE: usize = 8192;
const B_IMAGE: usize = 16384;
/// The dynamic shared memory: the images after up to 1 KiB of alignment.
const SHARED: u32 = (1024 + A_IMAGE + B_IMAGE) as u32;

/// One warpgroup: `out = a · b (+ c if accumulate)` for a 64×16 A and a 16×128 B whose
/// shared images (`a_image`, `b_image`, words) are copied to 1024-byte-aligned shared
/// memory, through one `wgmma.m64n128k16` (`.e4m3` m64n128k32 with `fp8`): B K-major, or
/// MN-major and transposed with `trans_b`. `out` and `c` are 64×128 row-major. With
/// `fence` 0 the wgmma runs without its fence; `a_offset` moves A's descriptor.
#[kernel(arch = "sm_90a", max_threads = 128)]
#[allow(clippy::too_many_arguments)]
fn wgmma_tile(
    a_image: &[u32],
    b_image: &[u32],
    c: &[f32],
    out: &mut [f32],
    accumulate: u32,
    trans_b: u32,
    fp8: u32,
    fence: u32,
    a_offset: u32,
) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let raw = shared_address(&smem[0]);
    let skip = (((1024 - raw % 1024) % 1024) / 4) as usize;
    let mut i = t;
    while i < a_image.len() {
        smem[skip + i] = a_image[i];
        i += 128;
    }
    i = t;
    while i < b_image.len() {
        smem[skip + 2048 + i] = b_image[i];
        i += 128;
    }
    // The threads' writes, before the tensor cores (the asynchronous proxy) read them.
    ptx!("fence.proxy.async.shared::cta;");
    sync_threads();
    let (warp, lane) = (t / 32, t % 32);
    let (g, q) = (lane / 4, lane % 4);
    let mut acc = [0.0f32; 64];
    for j in 0..16usize {
        for r in 0..4usize {
            let row = 16 * warp + g + 8 * (r / 2);
            let col = 8 * j + 2 * q + r % 2;
            acc[4 * j + r] = c[row * 128 + col];
        }
    }
    let a_desc = k_major_sw128(raw + 4 * skip as u32 + a_offset);
    let b_address = raw + 4 * (skip as u32 + 2048);
    if fence != 0 {
        wgmma_fence();
    }
    if fp8 == 2 {
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2 {$0}, $1, $2, p, 1, 1;\n}",
            &mut acc,
            a_desc,
            k_major_sw128(b_address),
            accumulate
        );
    } else if fp8 != 0 {
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {$0}, $1, $2, p, 1, 1;\n}",
            &mut acc,
            a_desc,
            k_major_sw128(b_address),
            accumulate
        );
    } else if trans_b != 0 {
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 1;\n}",
            &mut acc,
            a_desc,
            mn_major_sw128(b_address, 8192),
            accumulate
        );
    } else {
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 0;\n}",
            &mut acc,
            a_desc,
            k_major_sw128(b_address),
            accumulate
        );
    }
    wgmma_commit_group();
    wgmma_wait_group::<0>();
    for j in 0..16usize {
        for r in 0..4usize {
            let row = 16 * warp + g + 8 * (r / 2);
            let col = 8 * j + 2 * q + r % 2;
            out[row * 128 + col] = acc[4 * j + r];
        }
    }
}

/// The 128-byte swizzle TMA writes (`TensorMapSwizzle::B128`): in a 128-byte row `r` of a
/// 1024-byte-aligned tile, byte `x` of the row sits in 16-byte chunk `(x / 16) ^ (r % 8)`.
fn swizzled(row: usize, x: usize) -> usize {
    row * 128 + (((x / 16) ^ (row % 8)) * 16) + x % 16
}

fn small(i: usize, seed: usize) -> f32 {
    ((i * 7 + seed * 5 + i / 3) % 7) as f32 - 3.0
}

/// e5m2 of a small integer (|x| ≤ 4): exponent bias 15, two mantissa bits.
fn e5m2(x: f32) -> u8 {
    let sign = if x < 0.0 { 0x80 } else { 0 };
    sign | match x.abs() as u32 {
        0 => 0x00,
        1 => 0x3c,
        2 => 0x40,
        3 => 0x42,
        _ => 0x44,
    }
}

/// e4m3 of a small integer (|x| ≤ 4): exponent bias 7, three mantissa bits.
fn e4m3(x: f32) -> u8 {
    let sign = if x < 0.0 { 0x80 } else { 0 };
    sign | match x.abs() as u32 {
        0 => 0x00,
        1 => 0x38,
        2 => 0x40,
        3 => 0x44,
        _ => 0x48,
    }
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

/// A (64 × k) and B (k × 128) as values, and their shared images for the layout asked;
/// `fp8` 0 for bf16, 1 for e4m3, 2 for e5m2.
fn operands(trans_b: bool, fp8: u32) -> (Vec<f32>, Vec<f32>, Vec<u32>, Vec<u32>) {
    let encode: fn(f32) -> u8 = if fp8 == 2 { e5m2 } else { e4m3 };
    let fp8 = fp8 != 0;
    let k = if fp8 { 32 } else { 16 };
    let a: Vec<f32> = (0..64 * k).map(|i| small(i, 1)).collect();
    let b: Vec<f32> = (0..k * 128).map(|i| small(i, 2)).collect(); // b[kk * 128 + n]
    let mut a_image = vec![0u8; A_IMAGE];
    let mut b_image = vec![0u8; B_IMAGE];
    let put = |image: &mut [u8], at: usize, value: f32| {
        if fp8 {
            image[at] = encode(value);
        } else {
            image[at..at + 2].copy_from_slice(&bf16::from_f32(value).to_bits().to_le_bytes());
        }
    };
    let e = if fp8 { 1 } else { 2 };
    for m in 0..64 {
        for kk in 0..k {
            put(&mut a_image, swizzled(m, e * kk), a[m * k + kk]);
        }
    }
    for n in 0..128 {
        for kk in 0..k {
            let at = if trans_b {
                // MN-major: row kk holds 64 n values, 64-column chunks 8 KiB apart.
                (n / 64) * 8192 + swizzled(kk, e * (n % 64))
            } else {
                swizzled(n, e * kk)
            };
            put(&mut b_image, at, b[kk * 128 + n]);
        }
    }
    (a, b, words(&a_image), words(&b_image))
}

/// Runs `wgmma_tile` in every layout, accumulating and not, on `stream`, against the
/// host (exactly: small integers).
fn check_wgmma(stream: &Stream) {
    let c: Vec<f32> = (0..64 * 128).map(|i| (i % 5) as f32 * 0.5).collect();
    let dc = stream.clone_htod(&c).unwrap();
    let config = LaunchConfig::new(1, 128).with_shared_mem(SHARED);
    // bf16 TN and NN, e4m3 and e5m2 TN.
    for (trans_b, fp8) in [(false, 0u32), (true, 0), (false, 1), (false, 2)] {
        let (a, b, a_image, b_image) = operands(trans_b, fp8);
        let k = if fp8 != 0 { 32 } else { 16 };
        let (da, db) = (
            stream.clone_htod(&a_image).unwrap(),
            stream.clone_htod(&b_image).unwrap(),
        );
        for accumulate in [false, true] {
            let mut out = stream.alloc_zeros::<f32>(64 * 128).unwrap();
            wgmma_tile::launch(
                stream,
                config,
                &da,
                &db,
                &dc,
                &mut out,
                u32::from(accumulate),
                u32::from(trans_b),
                fp8,
                1,
                0,
            )
            .unwrap();
            let out = stream.clone_dtoh(&out).unwrap();
            let what = format!("trans_b {trans_b} fp8 {fp8} accumulate {accumulate}");
            for m in 0..64 {
                for n in 0..128 {
                    let product: f32 = (0..k).map(|kk| a[m * k + kk] * b[kk * 128 + n]).sum();
                    let want = product + if accumulate { c[m * 128 + n] } else { 0.0 };
                    assert_eq!(out[m * 128 + n], want, "{what}: D[{m}][{n}]");
                }
            }
        }
    }
}

#[test]
fn wgmma_multiplies_tiles_through_their_descriptors() {
    check_wgmma(&Stream::simulator());
}

/// The same tiles on an H100/H200: the simulator's descriptor and accumulator layouts are
/// the tensor cores'.
#[test]
fn gpu_wgmma_multiplies_tiles_through_their_descriptors() {
    let Ok(context) = cudajit::default_context() else {
        eprintln!("skipped: no GPU");
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: wgmma runs on compute capability 9.0 (sm_90a)");
        return;
    }
    check_wgmma(&Stream::from_cuda(context.default_stream()));
}

#[kernel(arch = "sm_90a")]
fn give_back_registers(out: &mut [u32]) {
    let t = thread_idx().x;
    if t < 128 {
        ptx!("setmaxnreg.dec.sync.aligned.u32 40;");
    } else {
        ptx!("setmaxnreg.inc.sync.aligned.u32 232;");
    }
    out[t as usize] = t;
}

#[test]
fn misuse_of_wgmma_and_setmaxnreg_is_reported() {
    let stream = SimStream::new();
    let (_, _, a_image, b_image) = operands(false, 0);
    let (da, db) = (
        stream.clone_htod(&a_image).unwrap(),
        stream.clone_htod(&b_image).unwrap(),
    );
    let dc = stream.alloc_zeros::<f32>(64 * 128).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64 * 128).unwrap();
    let config = LaunchConfig::new(1, 128).with_shared_mem(SHARED);
    let error =
        wgmma_tile::launch(&stream, config, &da, &db, &dc, &mut out, 0, 0, 0, 0, 0).unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::Ptx { detail, .. }) if detail.contains("without a `wgmma.fence`")),
        "{error}"
    );
    eprintln!("reported: {error}");
    let error = wgmma_tile::launch(
        &stream,
        config,
        &da,
        &db,
        &dc,
        &mut out,
        0,
        0,
        0,
        1,
        1 << 17,
    )
    .unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::Ptx { detail, .. }) if detail.contains("outside the block's shared memory")),
        "{error}"
    );
    eprintln!("reported: {error}");

    let mut threads = stream.alloc_zeros::<u32>(384).unwrap();
    give_back_registers::launch(&stream, LaunchConfig::new(1, 384), &mut threads).unwrap();
    let want: Vec<u32> = (0..384).collect();
    assert_eq!(stream.clone_dtoh(&threads).unwrap(), want);
    let error =
        give_back_registers::launch(&stream, LaunchConfig::new(1, 192), &mut threads).unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::Ptx { detail, .. }) if detail.contains("warpgroup-collective") && detail.contains("192 threads")),
        "{error}"
    );
    eprintln!("reported: {error}");
}

/// Thread 0 loads a 32 × 8 f32 box with TMA; with `wait`, every thread waits on the
/// barrier before reading it, without, thread 0 reads its element at once.
#[kernel]
fn tma_then_read(map: TensorMap, out: &mut [f32], wait: u32) {
    let tile = shared_array::<f32>(256 + 32);
    let barrier = shared_array::<u64>(1);
    let t = thread_idx().x as usize;
    let bar = shared_address(&barrier[0]);
    let skip = (((128 - shared_address(&tile[0]) % 128) % 128) / 4) as usize;
    if t == 0 {
        mbarrier_init(bar, 1);
        fence_barrier_init();
    }
    sync_threads();
    if t == 0 {
        mbarrier_arrive_expect_tx(bar, 1024);
        tma_load_2d(
            shared_address(&tile[skip]),
            tensor_map_address(&map),
            0,
            0,
            bar,
        );
    }
    if wait != 0 {
        mbarrier_wait_parity(bar, 0);
    }
    out[t] = tile[skip + t];
}

#[test]
fn a_tma_box_read_before_its_barrier_is_waited_on_is_reported() {
    let stream = SimStream::new();
    let data: Vec<f32> = (0..64 * 8).map(|i| i as f32).collect();
    let tensor = stream.clone_htod(&data).unwrap();
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 8], &[32, 8]);
    let map = TensorMap::encode_sim(&layout, &tensor).unwrap();
    let mut out = stream.alloc_zeros::<f32>(256).unwrap();
    tma_then_read::launch(&stream, LaunchConfig::new(1, 256), map, &mut out, 1).unwrap();
    let want: Vec<f32> = (0..256).map(|i| data[(i / 32) * 64 + i % 32]).collect();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), want);
    let error =
        tma_then_read::launch(&stream, LaunchConfig::new(1, 256), map, &mut out, 0).unwrap_err();
    let Error::Simulator(SimError::SharedMemoryRace { site, detail }) = &error else {
        panic!("expected a read of the box before its barrier to be reported, got {error}");
    };
    assert_eq!(site.thread, [0, 0, 0]);
    assert!(
        detail.contains("TMA load") && detail.contains("before any thread waited on its mbarrier"),
        "{detail}"
    );
    eprintln!("reported: {error}");
}

/// Every thread writes one element of a 32 × 8 f32 box in shared memory; thread 0 stores
/// the box at (`x`, `y`) of the tensor with TMA.
#[kernel]
fn tma_store_box(map: TensorMap, x: i32, y: i32) {
    let tile = shared_array::<f32>(256 + 32);
    let t = thread_idx().x as usize;
    let skip = (((128 - shared_address(&tile[0]) % 128) % 128) / 4) as usize;
    tile[skip + t] = 1000.0 + t as f32;
    // The threads' writes, before the asynchronous proxy reads them.
    fence_proxy_async_shared();
    sync_threads();
    if t == 0 {
        tma_store_2d(tensor_map_address(&map), x, y, shared_address(&tile[skip]));
        tma_store_commit();
        tma_store_wait();
    }
}

/// Stores boxes on `stream` (its buffers' maps by `encode_buffer`) and checks the tensor.
fn check_tma_store(stream: &Stream) {
    let (w, h) = (64usize, 12usize);
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[w as u64, h as u64], &[32, 8]);
    // Inside; across the right and bottom edges (clipped); at the far corner.
    for (x, y) in [(0i32, 0i32), (48, 8), (16, 4), (56, 11)] {
        let tensor = stream.clone_htod(&vec![-1.0f32; w * h]).unwrap();
        let map = TensorMap::encode_buffer(&layout, &tensor).unwrap();
        tma_store_box::launch(stream, LaunchConfig::new(1, 256), map, x, y).unwrap();
        let got = stream.clone_dtoh(&tensor).unwrap();
        for row in 0..h {
            for col in 0..w {
                let (bx, by) = (col as i32 - x, row as i32 - y);
                let want = if (0..32).contains(&bx) && (0..8).contains(&by) {
                    1000.0 + (by * 32 + bx) as f32
                } else {
                    -1.0
                };
                assert_eq!(
                    got[row * w + col],
                    want,
                    "box at ({x}, {y}): [{row}][{col}]"
                );
            }
        }
    }
}

#[test]
fn a_tma_store_writes_the_box_inside_the_tensor() {
    check_tma_store(&Stream::simulator());
}

/// A store starting at a negative coordinate is reported at its line: the H200 stops such a
/// store with `CUDA_ERROR_ILLEGAL_INSTRUCTION` (measured: docs/tensor-cores.md), while a
/// load may start outside the tensor.
#[test]
fn a_tma_store_at_a_negative_coordinate_is_reported() {
    let stream = Stream::simulator();
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 12], &[32, 8]);
    for (x, y) in [(-16i32, -4i32), (0, -1), (-4, 0)] {
        let tensor = stream.clone_htod(&vec![-1.0f32; 64 * 12]).unwrap();
        let map = TensorMap::encode_buffer(&layout, &tensor).unwrap();
        let error =
            tma_store_box::launch(&stream, LaunchConfig::new(1, 256), map, x, y).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("is negative") && text.contains("must start inside it"),
            "({x}, {y}): {text}"
        );
        // Nothing was written.
        assert!(stream
            .clone_dtoh(&tensor)
            .unwrap()
            .iter()
            .all(|&v| v == -1.0));
    }
}

/// The same stores on a Hopper GPU: the simulator's clipping and layout are TMA's.
#[test]
fn gpu_a_tma_store_writes_the_box_inside_the_tensor() {
    let Ok(context) = cudajit::default_context() else {
        eprintln!("skipped: no GPU");
        return;
    };
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: TMA needs compute capability 9.0 or later");
        return;
    }
    check_tma_store(&Stream::from_cuda(context.default_stream()));
}

/// One warpgroup: `out = a · b` for a 64×16 A and a 16×64 B, both K-major, from shared
/// images with the descriptors' fields (leading and stride byte offsets, layout) given:
/// the start address is the kernel's, the rest `a_fields` / `b_fields`. With
/// `proxy_fence` 0 the threads' stores of the images are not fenced for the tensor cores.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn wgmma_layouts(
    a_image: &[u32],
    b_image: &[u32],
    out: &mut [f32],
    a_fields: u64,
    b_fields: u64,
    proxy_fence: u32,
) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let raw = shared_address(&smem[0]);
    let skip = (((1024 - raw % 1024) % 1024) / 4) as usize;
    let mut i = t;
    while i < a_image.len() {
        smem[skip + i] = a_image[i];
        i += 128;
    }
    i = t;
    while i < b_image.len() {
        smem[skip + 2048 + i] = b_image[i];
        i += 128;
    }
    if proxy_fence != 0 {
        fence_proxy_async_shared();
    }
    sync_threads();
    let a_address = raw + 4 * skip as u32;
    let b_address = a_address + 8192;
    let a_desc = ((a_address & 0x3ffff) >> 4) as u64 | a_fields;
    let b_desc = ((b_address & 0x3ffff) >> 4) as u64 | b_fields;
    let mut acc = [0.0f32; 32];
    wgmma_fence();
    ptx!(
        "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 0;\n}",
        &mut acc,
        a_desc,
        b_desc,
        0u32
    );
    wgmma_commit_group();
    wgmma_wait_group::<0>();
    let (warp, lane) = (t / 32, t % 32);
    let (g, q) = (lane / 4, lane % 4);
    for j in 0..8usize {
        for r in 0..4usize {
            let row = 16 * warp + g + 8 * (r / 2);
            let col = 8 * j + 2 * q + r % 2;
            out[row * 64 + col] = acc[4 * j + r];
        }
    }
}

/// A K-major layout of the PTX ISA's canonical forms (CUTLASS's `make_gmma_desc`): byte of
/// element (`mn`, `k`) (bf16) from the tile's 1024-byte-aligned start, and the descriptor's
/// fields.
#[derive(Clone, Copy, Debug)]
enum KMajor {
    /// Core matrices of 8 rows × 16 bytes: K-adjacent ones `leading` bytes apart, 8-row
    /// groups `stride` apart.
    Interleaved { leading: u64, stride: u64 },
    /// Rows of `width` bytes (32, 64 or 128), 8-row groups `stride` apart, swizzled.
    Swizzled { width: u64, stride: u64 },
}

impl KMajor {
    fn byte(self, mn: u64, k: u64) -> u64 {
        match self {
            KMajor::Interleaved { leading, stride } => {
                (mn % 8) * 16 + (mn / 8) * stride + (k % 8) * 2 + (k / 8) * leading
            }
            KMajor::Swizzled { width, stride } => {
                let plain = (mn % 8) * width + (mn / 8) * stride + 2 * k;
                // Swizzle<B,4,3>: the 16-byte chunk bits XOR the bits from 7 up.
                let bits = width / 16 - 1;
                plain ^ (((plain >> 7) & bits) << 4)
            }
        }
    }

    fn fields(self) -> u64 {
        match self {
            KMajor::Interleaved { leading, stride } => {
                ((leading >> 4) << 16) | ((stride >> 4) << 32)
            }
            KMajor::Swizzled { width, stride } => {
                let layout: u64 = match width {
                    128 => 1,
                    64 => 2,
                    _ => 3,
                };
                (1 << 16) | ((stride >> 4) << 32) | (layout << 62)
            }
        }
    }
}

/// Every K-major layout (none, 32-, 64- and 128-byte swizzle) through `wgmma_layouts` on
/// `stream`, against the host.
fn check_wgmma_layouts(stream: &Stream) {
    let layouts = [
        KMajor::Interleaved {
            leading: 128,
            stride: 256,
        },
        KMajor::Swizzled {
            width: 32,
            stride: 256,
        },
        KMajor::Swizzled {
            width: 64,
            stride: 512,
        },
        KMajor::Swizzled {
            width: 128,
            stride: 1024,
        },
    ];
    let a: Vec<f32> = (0..64 * 16).map(|i| small(i, 3)).collect();
    let b: Vec<f32> = (0..64 * 16).map(|i| small(i, 4)).collect(); // b[n * 16 + k]
    let config = LaunchConfig::new(1, 128).with_shared_mem(1024 + 8192 + 8192);
    for layout in layouts {
        let image = |values: &[f32]| {
            let mut bytes = vec![0u8; 8192];
            for mn in 0..64 {
                for k in 0..16 {
                    let at = layout.byte(mn as u64, k as u64) as usize;
                    bytes[at..at + 2].copy_from_slice(
                        &bf16::from_f32(values[mn * 16 + k]).to_bits().to_le_bytes(),
                    );
                }
            }
            stream.clone_htod(&words(&bytes)).unwrap()
        };
        let (da, db) = (image(&a), image(&b));
        let mut out = stream.alloc_zeros::<f32>(64 * 64).unwrap();
        let fields = layout.fields();
        wgmma_layouts::launch(stream, config, &da, &db, &mut out, fields, fields, 1).unwrap();
        let out = stream.clone_dtoh(&out).unwrap();
        for m in 0..64 {
            for n in 0..64 {
                let want: f32 = (0..16).map(|k| a[m * 16 + k] * b[n * 16 + k]).sum();
                assert_eq!(out[m * 64 + n], want, "{layout:?}: D[{m}][{n}]");
            }
        }
    }
}

#[test]
fn wgmma_reads_every_k_major_layout() {
    check_wgmma_layouts(&Stream::simulator());
}

#[test]
fn a_wgmma_of_stores_without_a_proxy_fence_is_reported() {
    let stream = Stream::simulator();
    let image = stream.clone_htod(&vec![0u32; 2048]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64 * 64).unwrap();
    let config = LaunchConfig::new(1, 128).with_shared_mem(1024 + 8192 + 8192);
    let fields = (1u64 << 16) | ((1024u64 >> 4) << 32) | (1 << 62);
    let error = wgmma_layouts::launch(&stream, config, &image, &image, &mut out, fields, fields, 0)
        .unwrap_err();
    let Error::Simulator(SimError::Ptx { detail, .. }) = &error else {
        panic!("expected the missing proxy fence to be reported, got {error}");
    };
    assert!(detail.contains("without a `fence.proxy.async`"), "{detail}");
    eprintln!("reported: {error}");
}

/// The same layouts on an H100/H200: the simulator's reading of the descriptors is the
/// tensor cores'.
#[test]
fn gpu_wgmma_reads_every_k_major_layout() {
    let Ok(context) = cudajit::default_context() else {
        eprintln!("skipped: no GPU");
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: wgmma runs on compute capability 9.0 (sm_90a)");
        return;
    }
    check_wgmma_layouts(&Stream::from_cuda(context.default_stream()));
}

/// One warpgroup: `out_descriptor = a · b` with A read through its descriptor from the
/// 128-byte swizzled shared image `a_image`, and `out_registers = a · b` with A from
/// registers, each thread's four built from the row-major `a` (64 rows of 16 16-bit
/// values, 8 words a row) in mma.sync's A layout: rows 16w + g and 16w + g + 8, k 2t..2t+2
/// and 8 + 2t..; B (16 × 64, K-major) from `b_image`. f16 with `half`, else bf16. Both
/// outputs 64×64 row-major.
#[kernel(arch = "sm_90a", max_threads = 128)]
#[allow(clippy::too_many_arguments)]
fn wgmma_register_a(
    a: &[u32],
    a_image: &[u32],
    b_image: &[u32],
    out_descriptor: &mut [f32],
    out_registers: &mut [f32],
    half: u32,
) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let raw = shared_address(&smem[0]);
    let skip = (((1024 - raw % 1024) % 1024) / 4) as usize;
    let mut i = t;
    while i < a_image.len() {
        smem[skip + i] = a_image[i];
        i += 128;
    }
    i = t;
    while i < b_image.len() {
        smem[skip + 2048 + i] = b_image[i];
        i += 128;
    }
    fence_proxy_async_shared();
    sync_threads();
    let (warp, lane) = (t / 32, t % 32);
    let (g, q) = (lane / 4, lane % 4);
    let (row_lo, row_hi) = (16 * warp + g, 16 * warp + g + 8);
    let fragment = [
        a[row_lo * 8 + q],
        a[row_hi * 8 + q],
        a[row_lo * 8 + 4 + q],
        a[row_hi * 8 + 4 + q],
    ];
    let a_desc = k_major_sw128(raw + 4 * skip as u32);
    let b_desc = k_major_sw128(raw + 4 * (skip as u32 + 2048));
    let mut by_descriptor = [0.0f32; 32];
    let mut by_registers = [0.0f32; 32];
    wgmma_fence();
    if half != 0 {
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0}, $1, $2, p, 1, 1, 0, 0;\n}",
            &mut by_descriptor,
            a_desc,
            b_desc,
            0u32
        );
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0}, {$1}, $2, p, 1, 1, 0;\n}",
            &mut by_registers,
            fragment,
            b_desc,
            0u32
        );
    } else {
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 0;\n}",
            &mut by_descriptor,
            a_desc,
            b_desc,
            0u32
        );
        ptx!(
            "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, {$1}, $2, p, 1, 1, 0;\n}",
            &mut by_registers,
            fragment,
            b_desc,
            0u32
        );
    }
    wgmma_commit_group();
    wgmma_wait_group::<0>();
    for j in 0..8usize {
        for r in 0..4usize {
            let row = 16 * warp + g + 8 * (r / 2);
            let col = 8 * j + 2 * q + r % 2;
            out_descriptor[row * 64 + col] = by_descriptor[4 * j + r];
            out_registers[row * 64 + col] = by_registers[4 * j + r];
        }
    }
}

/// `wgmma_register_a` on `stream` in bf16 and f16: both forms against the host (exactly:
/// small integers), so the register fragment's layout is the descriptor's tile.
fn check_wgmma_register_a(stream: &Stream) {
    let a: Vec<f32> = (0..64 * 16).map(|i| small(i, 5)).collect(); // a[m * 16 + k]
    let b: Vec<f32> = (0..16 * 64).map(|i| small(i, 6)).collect(); // b[n * 16 + k]
    let config = LaunchConfig::new(1, 128).with_shared_mem(1024 + 8192 + 8192);
    for half in [false, true] {
        let bits = |x: f32| {
            if half {
                cudajit::f16::from_f32(x).to_bits()
            } else {
                bf16::from_f32(x).to_bits()
            }
        };
        // Row-major pairs for the registers; K-major 128-byte swizzled images for the
        // descriptors (rows of 128 bytes, 16 elements used).
        let pairs: Vec<u32> = a
            .chunks(2)
            .map(|p| u32::from(bits(p[0])) | (u32::from(bits(p[1])) << 16))
            .collect();
        let image = |values: &[f32]| {
            let mut bytes = vec![0u8; 8192];
            for mn in 0..64 {
                for k in 0..16 {
                    let at = swizzled(mn, 2 * k);
                    bytes[at..at + 2].copy_from_slice(&bits(values[mn * 16 + k]).to_le_bytes());
                }
            }
            stream.clone_htod(&words(&bytes)).unwrap()
        };
        let (da, da_image, db_image) = (stream.clone_htod(&pairs).unwrap(), image(&a), image(&b));
        let mut by_descriptor = stream.alloc_zeros::<f32>(64 * 64).unwrap();
        let mut by_registers = stream.alloc_zeros::<f32>(64 * 64).unwrap();
        wgmma_register_a::launch(
            stream,
            config,
            &da,
            &da_image,
            &db_image,
            &mut by_descriptor,
            &mut by_registers,
            u32::from(half),
        )
        .unwrap();
        let by_descriptor = stream.clone_dtoh(&by_descriptor).unwrap();
        let by_registers = stream.clone_dtoh(&by_registers).unwrap();
        for m in 0..64 {
            for n in 0..64 {
                let want: f32 = (0..16).map(|k| a[m * 16 + k] * b[n * 16 + k]).sum();
                assert_eq!(
                    by_descriptor[m * 64 + n],
                    want,
                    "half {half}: descriptor D[{m}][{n}]"
                );
                assert_eq!(
                    by_registers[m * 64 + n],
                    want,
                    "half {half}: registers D[{m}][{n}]"
                );
            }
        }
    }
}

#[test]
fn wgmma_takes_a_from_registers_as_from_its_descriptor() {
    check_wgmma_register_a(&Stream::simulator());
}

/// The same on an H100/H200: the simulator's register fragment is the tensor cores'.
#[test]
fn gpu_wgmma_takes_a_from_registers_as_from_its_descriptor() {
    let Ok(context) = cudajit::default_context() else {
        eprintln!("skipped: no GPU");
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: wgmma runs on compute capability 9.0 (sm_90a)");
        return;
    }
    check_wgmma_register_a(&Stream::from_cuda(context.default_stream()));
}

/// A register-A wgmma with two registers per thread, where the form takes four.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn register_a_of_two(b_desc: u64) {
    let a = [0u32; 2];
    let mut acc = [0.0f32; 32];
    wgmma_fence();
    ptx!(
        "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, {$1}, $2, p, 1, 1, 0;\n}",
        &mut acc,
        a,
        b_desc,
        0u32
    );
    wgmma_commit_group();
    wgmma_wait_group::<0>();
}

/// A register-A wgmma given an imm-trans-a, which the form does not have.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn register_a_transposed(b_desc: u64) {
    let a = [0u32; 4];
    let mut acc = [0.0f32; 32];
    wgmma_fence();
    ptx!(
        "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0}, {$1}, $2, p, 1, 1, 0, 0;\n}",
        &mut acc,
        a,
        b_desc,
        0u32
    );
    wgmma_commit_group();
    wgmma_wait_group::<0>();
}

#[test]
fn misuse_of_the_register_a_form_is_reported() {
    let stream = Stream::simulator();
    let config = LaunchConfig::new(1, 128);
    let unsupported = |result: Result<(), Error>| match result {
        Err(Error::Simulator(SimError::Unsupported { what, location, .. })) => {
            assert!(location.contains("hopper_sim.rs"), "{location}");
            what
        }
        other => panic!("expected the template to be refused, got {other:?}"),
    };
    let what = unsupported(register_a_of_two::launch(&stream, config, 0));
    assert!(what.contains("four registers per thread"), "{what}");
    let what = unsupported(register_a_transposed::launch(&stream, config, 0));
    assert!(
        what.contains("A from registers has no imm-trans-a"),
        "{what}"
    );
}

/// The kernels above compile for sm_90a as the GPU tests run them, nothing in local
/// memory (the accumulator arrays stay in registers).
#[test]
fn the_kernels_compile_for_sm_90a_in_registers() {
    match cudajit::codegen::toolchain::Toolchain::global() {
        Ok(_) => {}
        Err(error) if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1") => {
            eprintln!("skipped: no NVIDIA toolchain ({error})");
            return;
        }
        Err(error) => panic!("the NVIDIA toolchain is required: {error}"),
    }
    for kernel in [
        &wgmma_tile::KERNEL,
        &wgmma_layouts::KERNEL,
        &wgmma_register_a::KERNEL,
        &tma_store_box::KERNEL,
        &tma_then_read::KERNEL,
        &publish::KERNEL,
        &give_back_registers::KERNEL,
    ] {
        let ptx = cudajit::codegen::compile::linked_ptx(
            kernel.captured(),
            &Default::default(),
            cudajit::Arch::SM_90A,
            &Default::default(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
        assert!(
            !ptx.contains(".local"),
            "{}: local memory in\n{ptx}",
            kernel.name()
        );
    }
}

/// Bytes of the TMA + wgmma tiles: A is 64 rows of 64 bf16 (128 bytes), B 128 rows.
const TMA_A_BYTES: u32 = 8192;
const TMA_B_BYTES: u32 = 16384;

/// One warpgroup: TMA loads a 64 × 64 bf16 A tile and a 128 × 64 bf16 B tile (K innermost,
/// 128-byte rows, with the maps' swizzle) into 1024-byte-aligned shared memory, then one
/// `wgmma.m64n128k16` over their first 16 k reads them through K-major descriptors of the
/// PTX layout `layout` (1: 128-byte swizzle, 2: 64-byte, 3: 32-byte). `out` is 64×128.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn tma_then_wgmma(a_map: TensorMap, b_map: TensorMap, out: &mut [f32], layout: u32) {
    let smem = dynamic_shared::<u32>();
    let bars = shared_array::<u64>(1);
    let bar = shared_address(&bars[0]);
    let t = thread_idx().x as usize;
    let raw = shared_address(&smem[0]);
    let a_address = raw + (1024 - raw % 1024) % 1024;
    let b_address = a_address + TMA_A_BYTES;
    if t == 0 {
        mbarrier_init(bar, 1);
        fence_barrier_init();
    }
    sync_threads();
    if t == 0 {
        mbarrier_arrive_expect_tx(bar, TMA_A_BYTES + TMA_B_BYTES);
        tma_load_2d(a_address, tensor_map_address(&a_map), 0, 0, bar);
        tma_load_2d(b_address, tensor_map_address(&b_map), 0, 0, bar);
    }
    mbarrier_wait_parity(bar, 0);
    // The 128-byte-swizzle descriptors with their layout field (bits 62-63) replaced.
    let field = (layout as u64) << 62;
    let a_desc = (k_major_sw128(a_address) & 0x3fff_ffff_ffff_ffff) | field;
    let b_desc = (k_major_sw128(b_address) & 0x3fff_ffff_ffff_ffff) | field;
    let mut acc = [0.0f32; 64];
    wgmma_fence();
    // scale-d false: D = A · B.
    ptx!(
        "{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 0;\n}",
        &mut acc,
        a_desc,
        b_desc,
        0u32
    );
    wgmma_commit_group();
    wgmma_wait_group::<0>();
    let (warp, lane) = (t / 32, t % 32);
    let (g, q) = (lane / 4, lane % 4);
    for j in 0..16usize {
        for r in 0..4usize {
            let row = 16 * warp + g + 8 * (r / 2);
            let col = 8 * j + 2 * q + r % 2;
            out[row * 128 + col] = acc[4 * j + r];
        }
    }
}

/// Runs [`tma_then_wgmma`] on `stream` with 128-byte-swizzled maps and descriptors of
/// `layout`; returns the result and the host's product when it ran.
fn run_tma_then_wgmma(stream: &Stream, layout: u32) -> Result<(Vec<f32>, Vec<f32>), Error> {
    use cudajit::tensor_map::TensorMapSwizzle;
    let a: Vec<f32> = (0..64 * 64).map(|i| small(i, 7)).collect();
    let b: Vec<f32> = (0..128 * 64).map(|i| small(i, 8)).collect();
    let to_bf16 = |x: &[f32]| x.iter().map(|&v| bf16::from_f32(v)).collect::<Vec<_>>();
    let da = stream.clone_htod(&to_bf16(&a)).unwrap();
    let db = stream.clone_htod(&to_bf16(&b)).unwrap();
    let tiled = |rows: u32| {
        TensorMapLayout::tiled(TensorMapElement::Bf16, &[64, u64::from(rows)], &[64, rows])
            .with_swizzle(TensorMapSwizzle::B128)
    };
    let a_map = TensorMap::encode_buffer(&tiled(64), &da).unwrap();
    let b_map = TensorMap::encode_buffer(&tiled(128), &db).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64 * 128).unwrap();
    let config = LaunchConfig::new(1, 128).with_shared_mem(1024 + TMA_A_BYTES + TMA_B_BYTES);
    tma_then_wgmma::launch(stream, config, a_map, b_map, &mut out, layout)?;
    let want: Vec<f32> = (0..64 * 128)
        .map(|i| {
            let (row, col) = (i / 128, i % 128);
            (0..16).map(|k| a[row * 64 + k] * b[col * 64 + k]).sum()
        })
        .collect();
    Ok((stream.clone_dtoh(&out).unwrap(), want))
}

#[test]
fn a_wgmma_reading_a_tma_tile_with_another_swizzle_is_reported() {
    let stream = Stream::simulator();
    let (got, want) = run_tma_then_wgmma(&stream, 1).unwrap();
    assert!(want.iter().any(|&x| x.abs() > 4.0), "trivial product");
    assert_eq!(got, want);
    for (layout, reads) in [(2, "the 64-byte swizzle"), (3, "the 32-byte swizzle")] {
        let error = run_tma_then_wgmma(&stream, layout).unwrap_err();
        let Error::Simulator(SimError::Ptx { site, detail }) = &error else {
            panic!("expected a swizzle mismatch, got {error}");
        };
        eprintln!("reported: {error}");
        assert_eq!(site.kernel, "tma_then_wgmma");
        assert!(
            detail.contains("was written by TMA with the 128-byte swizzle")
                && detail.contains(&format!("descriptor reads it with {reads}"))
                && detail.contains("SharedTileSw128"),
            "{detail}"
        );
    }
}

#[test]
fn the_tma_and_wgmma_kernel_compiles_for_sm_90a_without_local_memory() {
    use cudajit::codegen::compile::linked_ptx;
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = linked_ptx(
        tma_then_wgmma::KERNEL.captured(),
        &Default::default(),
        cudajit::Arch::SM_90A,
        &Default::default(),
    )
    .unwrap();
    assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"));
    assert!(!ptx.contains(".local"), "local memory in\n{ptx}");
    assert!(!ptx.contains("call."), "a call in\n{ptx}");
    tma_then_wgmma::KERNEL
        .compile_for_arch(cudajit::Arch::SM_90A)
        .unwrap();
}

/// The matching layouts on a Hopper GPU: the simulator's product of TMA's tiles is the
/// tensor cores'.
#[test]
fn gpu_a_wgmma_reads_a_tma_tile_through_its_swizzle() {
    let Ok(context) = cudajit::default_context() else {
        eprintln!("skipped: no GPU");
        return;
    };
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: wgmma needs compute capability 9.0 or later");
        return;
    }
    let (got, want) = run_tma_then_wgmma(&Stream::from_cuda(context.default_stream()), 1).unwrap();
    assert_eq!(got, want);
}
