//! The tensor-core instructions of `cudajit::tensor` on the CPU simulator, each against a
//! host computation of what the PTX ISA defines — `ldmatrix` in every form, `mma.sync`
//! with bf16 and f16 inputs and a live accumulator, the `cvt.rn.*x2.f32` packs, `cp.async`
//! of 4, 8 and 16 bytes with zero fill and its groups — and the simulator's reports of
//! their misuse: data read before its `cp.async` landed, a warp-collective instruction
//! that not every lane runs, a misaligned `ldmatrix`, an instruction it does not run.
//! No GPU needed.

use cudajit::prelude::*;
use cudajit::tensor::copy_async::{
    cp_async_16, cp_async_16_zfill, cp_async_4, cp_async_8, cp_async_ca_16, cp_async_commit,
    cp_async_wait_all, cp_async_wait_group,
};
use cudajit::tensor::ldmatrix::{
    ldmatrix_x1, ldmatrix_x1_trans, ldmatrix_x2, ldmatrix_x2_trans, ldmatrix_x4, ldmatrix_x4_trans,
    load_a_bf16, load_a_f16, load_b_bf16, load_b_f16,
};
use cudajit::tensor::mma::{mma_bf16, mma_f16, AccF32};
use cudajit::tensor::pack::{pack_bf16x2, pack_f16x2};
use cudajit::{bf16, f16, Error, LaunchConfig, SimError, SimStream};

/// The row lane `l` points `ldmatrix` at: a permutation, so the test sees which lane's
/// address feeds which matrix row.
fn row_of(lane: usize) -> usize {
    (lane * 5 + 3) % 32
}

fn element(i: usize) -> u16 {
    (i * 37 + 11) as u16
}

/// 32 rows of eight u16 (16 bytes each); every form of `ldmatrix`, lane `l` pointing at
/// row `row_of(l)`; `out` receives each lane's 14 registers.
#[kernel]
fn ldmatrix_forms(tile_in: &[u16], out: &mut [u32]) {
    let tile = shared_array::<u16>(256);
    let lane = lane_id() as usize;
    for i in 0..8usize {
        tile[lane * 8 + i] = tile_in[lane * 8 + i];
    }
    sync_threads();
    let address = shared_address(&tile[((lane * 5 + 3) % 32) * 8]);
    let base = lane * 14;
    out[base] = ldmatrix_x1(address);
    out[base + 1] = ldmatrix_x1_trans(address);
    let (r0, r1) = ldmatrix_x2(address);
    out[base + 2] = r0;
    out[base + 3] = r1;
    let (t0, t1) = ldmatrix_x2_trans(address);
    out[base + 4] = t0;
    out[base + 5] = t1;
    let (q0, q1, q2, q3) = ldmatrix_x4(address);
    out[base + 6] = q0;
    out[base + 7] = q1;
    out[base + 8] = q2;
    out[base + 9] = q3;
    let (p0, p1, p2, p3) = ldmatrix_x4_trans(address);
    out[base + 10] = p0;
    out[base + 11] = p1;
    out[base + 12] = p2;
    out[base + 13] = p3;
}

#[test]
fn ldmatrix_delivers_every_form_in_the_fragment_layout() {
    let stream = SimStream::new();
    let tile: Vec<u16> = (0..256).map(element).collect();
    let input = stream.clone_htod(&tile).unwrap();
    let mut out = stream.alloc_zeros::<u32>(32 * 14).unwrap();
    ldmatrix_forms::launch(&stream, LaunchConfig::new(1, 32), &input, &mut out).unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    // Element (r, c) of matrix m: row r of the row lane 8m + r points at.
    let at = |m: usize, r: usize, c: usize| u32::from(tile[row_of(8 * m + r) * 8 + c]);
    let register = |lane: usize, m: usize, trans: bool| {
        let (row, pair) = (lane / 4, 2 * (lane % 4));
        if trans {
            at(m, pair, row) | (at(m, pair + 1, row) << 16)
        } else {
            at(m, row, pair) | (at(m, row, pair + 1) << 16)
        }
    };
    for lane in 0..32 {
        let got = &out[lane * 14..(lane + 1) * 14];
        let mut want = vec![register(lane, 0, false), register(lane, 0, true)];
        for (count, trans) in [(2, false), (2, true), (4, false), (4, true)] {
            want.extend((0..count).map(|m| register(lane, m, trans)));
        }
        assert_eq!(got, want.as_slice(), "lane {lane}");
    }
}

/// One warp: `d = a · b + c` twice, with bf16 and with f16 inputs, `c` a live
/// accumulator (16×8 row-major f32), `a` 16×16 row-major, `b` 16×8 column by column.
#[kernel]
fn mma_with_accumulator(
    a: &[bf16],
    b: &[bf16],
    a16: &[f16],
    b16: &[f16],
    c: &[f32],
    d: &mut [f32],
    d16: &mut [f32],
) {
    let tile_a = shared_array::<bf16>(256);
    let tile_b = shared_array::<bf16>(128);
    let tile_a16 = shared_array::<f16>(256);
    let tile_b16 = shared_array::<f16>(128);
    let lane = lane_id() as usize;
    for i in 0..8usize {
        tile_a[lane * 8 + i] = a[lane * 8 + i];
        tile_a16[lane * 8 + i] = a16[lane * 8 + i];
    }
    for i in 0..4usize {
        tile_b[lane * 4 + i] = b[lane * 4 + i];
        tile_b16[lane * 4 + i] = b16[lane * 4 + i];
    }
    sync_threads();
    let a_at = (lane % 16) * 16 + 8 * (lane / 16);
    let b_at = (lane % 8) * 16 + 8 * ((lane / 8) % 2);
    let (g, t) = (lane / 4, lane % 4);
    let acc = AccF32 {
        c0: c[g * 8 + 2 * t],
        c1: c[g * 8 + 2 * t + 1],
        c2: c[(g + 8) * 8 + 2 * t],
        c3: c[(g + 8) * 8 + 2 * t + 1],
    };
    let r = mma_bf16(
        load_a_bf16(shared_address(&tile_a[a_at])),
        load_b_bf16(shared_address(&tile_b[b_at])),
        acc,
    );
    d[g * 8 + 2 * t] = r.c0;
    d[g * 8 + 2 * t + 1] = r.c1;
    d[(g + 8) * 8 + 2 * t] = r.c2;
    d[(g + 8) * 8 + 2 * t + 1] = r.c3;
    let h = mma_f16(
        load_a_f16(shared_address(&tile_a16[a_at])),
        load_b_f16(shared_address(&tile_b16[b_at])),
        acc,
    );
    d16[g * 8 + 2 * t] = h.c0;
    d16[g * 8 + 2 * t + 1] = h.c1;
    d16[(g + 8) * 8 + 2 * t] = h.c2;
    d16[(g + 8) * 8 + 2 * t + 1] = h.c3;
}

/// Deterministic values in [-2, 2), not small integers: products and sums round in f32.
fn values(seed: u64, count: usize) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

#[test]
fn mma_sums_exact_products_onto_the_accumulator() {
    let stream = SimStream::new();
    let (av, bv, cv) = (values(1, 256), values(2, 128), values(3, 128));
    let a: Vec<bf16> = av.iter().map(|&x| bf16::from_f32(x)).collect();
    let b: Vec<bf16> = bv.iter().map(|&x| bf16::from_f32(x)).collect();
    let a16: Vec<f16> = av.iter().map(|&x| f16::from_f32(x)).collect();
    let b16: Vec<f16> = bv.iter().map(|&x| f16::from_f32(x)).collect();
    let mut d = stream.alloc_zeros::<f32>(128).unwrap();
    let mut d16 = stream.alloc_zeros::<f32>(128).unwrap();
    mma_with_accumulator::launch(
        &stream,
        LaunchConfig::new(1, 32),
        &stream.clone_htod(&a).unwrap(),
        &stream.clone_htod(&b).unwrap(),
        &stream.clone_htod(&a16).unwrap(),
        &stream.clone_htod(&b16).unwrap(),
        &stream.clone_htod(&cv).unwrap(),
        &mut d,
        &mut d16,
    )
    .unwrap();
    let (d, d16) = (
        stream.clone_dtoh(&d).unwrap(),
        stream.clone_dtoh(&d16).unwrap(),
    );
    for m in 0..16 {
        for n in 0..8 {
            // The simulator's definition: the exact products summed in f64, rounded once.
            let exact = |x: &dyn Fn(usize) -> f64, y: &dyn Fn(usize) -> f64| {
                (0..16).fold(f64::from(cv[m * 8 + n]), |s, k| s + x(k) * y(k)) as f32
            };
            let bf = exact(&|k| f64::from(a[m * 16 + k].to_f32()), &|k| {
                f64::from(b[n * 16 + k].to_f32())
            });
            let hf = exact(&|k| a16[m * 16 + k].to_f64(), &|k| b16[n * 16 + k].to_f64());
            assert_eq!(d[m * 8 + n], bf, "bf16 D[{m}][{n}]");
            assert_eq!(d16[m * 8 + n], hf, "f16 D[{m}][{n}]");
            // f16 keeps 3 more bits of the inputs than bf16: the results differ.
            assert!((bf - hf).abs() < 0.25, "D[{m}][{n}]: {bf} against {hf}");
        }
    }
    assert_ne!(d, d16);
}

#[kernel]
fn packs(x: &[f32], bf: &mut [u32], half: &mut [u32]) {
    let i = thread_idx().x as usize;
    bf[i] = pack_bf16x2(x[2 * i], x[2 * i + 1]);
    half[i] = pack_f16x2(x[2 * i], x[2 * i + 1]);
}

#[test]
fn packs_round_to_nearest_even_low_half_first() {
    let stream = SimStream::new();
    let x: Vec<f32> = vec![
        1.0,
        -2.5,
        f32::from_bits(0x3f80_8000), // a bf16 tie: to even (1.0)
        f32::from_bits(0x3f81_8000), // a bf16 tie: to even (up)
        f32::from_bits(0x3f80_1000), // an f16 tie (2^-11 above 1): to even (1.0)
        65520.0,                     // past f16's largest finite: infinity
        f32::MAX,                    // bf16: infinity
        1e-8,                        // f16: subnormal
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.1,
        -0.0,
    ];
    let count = x.len() / 2;
    let mut bf = stream.alloc_zeros::<u32>(count).unwrap();
    let mut half = stream.alloc_zeros::<u32>(count).unwrap();
    packs::launch(
        &stream,
        LaunchConfig::new(1, count as u32),
        &stream.clone_htod(&x).unwrap(),
        &mut bf,
        &mut half,
    )
    .unwrap();
    let (bf, half) = (
        stream.clone_dtoh(&bf).unwrap(),
        stream.clone_dtoh(&half).unwrap(),
    );
    for i in 0..count {
        let (lo, hi) = (x[2 * i], x[2 * i + 1]);
        let want_bf = u32::from(bf16::from_f32(lo).to_bits())
            | (u32::from(bf16::from_f32(hi).to_bits()) << 16);
        let want_half =
            u32::from(f16::from_f32(lo).to_bits()) | (u32::from(f16::from_f32(hi).to_bits()) << 16);
        assert_eq!(bf[i], want_bf, "bf16x2 of ({lo}, {hi})");
        assert_eq!(half[i], want_half, "f16x2 of ({lo}, {hi})");
    }
    assert_eq!(bf[1] & 0xffff, 0x3f80, "the tie rounds to even");
    assert_eq!(half[2] >> 16, 0x7c00, "65520 overflows f16");
}

/// Thread `t` fills its 16 words of shared memory with a marker, then copies into them
/// from `src[16 t ..]`: 4 bytes into word 0, 8 into words 2–3, 16 (`.ca`) into 4–7, and
/// `bytes[t]` of 16 with zero fill into 8–11 (words 1 and 12–15 keep the marker).
#[kernel]
#[allow(clippy::manual_memcpy)] // the kernel language has no `copy_from_slice`
fn copy_sizes(src: &[u32], bytes: &[u32], out: &mut [u32]) {
    let tile = shared_array::<u32>(1024);
    let t = thread_idx().x as usize;
    let base = 16 * t;
    for w in 0..16usize {
        tile[base + w] = 0xdead_beef;
    }
    cp_async_4(shared_address(&tile[base]), global_address(&src[base]));
    cp_async_8(
        shared_address(&tile[base + 2]),
        global_address(&src[base + 2]),
    );
    cp_async_ca_16(
        shared_address(&tile[base + 4]),
        global_address(&src[base + 4]),
    );
    cp_async_16_zfill(
        shared_address(&tile[base + 8]),
        global_address(&src[base + 8]),
        bytes[t],
    );
    cp_async_wait_all();
    for w in 0..16usize {
        out[base + w] = tile[base + w];
    }
}

#[test]
fn cp_async_copies_4_8_and_16_bytes_and_zero_fills() {
    let stream = SimStream::new();
    let threads = 64;
    let src: Vec<u32> = (0..16 * threads as u32)
        .map(|i| i.wrapping_mul(0x0101_0103) ^ 0x5a5a)
        .collect();
    let bytes: Vec<u32> = (0..threads as u32).map(|t| t % 17).collect();
    let mut out = stream.alloc_zeros::<u32>(src.len()).unwrap();
    copy_sizes::launch(
        &stream,
        LaunchConfig::new(1, threads as u32),
        &stream.clone_htod(&src).unwrap(),
        &stream.clone_htod(&bytes).unwrap(),
        &mut out,
    )
    .unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    for (t, &copied) in bytes.iter().enumerate() {
        let base = 16 * t;
        let mut want = vec![0xdead_beefu32; 16];
        want[0] = src[base];
        want[2..8].copy_from_slice(&src[base + 2..base + 8]);
        let source: Vec<u8> = src[base + 8..base + 12]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let mut filled = [0u8; 16];
        let n = copied as usize;
        filled[..n].copy_from_slice(&source[..n]);
        for w in 0..4 {
            want[8 + w] = u32::from_le_bytes(filled[4 * w..4 * w + 4].try_into().unwrap());
        }
        assert_eq!(&out[base..base + 16], want.as_slice(), "thread {t}");
    }
}

/// Two groups; `wait_group 1` completes the first only. With `early`, the thread then
/// reads the second group's destination before its wait.
#[kernel]
fn two_groups(src: &[u32], out: &mut [u32], early: bool) {
    let tile = shared_array::<u32>(256);
    let t = thread_idx().x as usize;
    cp_async_16(shared_address(&tile[4 * t]), global_address(&src[4 * t]));
    cp_async_commit();
    cp_async_16(
        shared_address(&tile[128 + 4 * t]),
        global_address(&src[128 + 4 * t]),
    );
    cp_async_commit();
    cp_async_wait_group::<1>();
    out[t] = tile[4 * t];
    if early {
        out[32 + t] = tile[128 + 4 * t];
    }
    cp_async_wait_group::<0>();
    out[32 + t] += tile[128 + 4 * t + 1];
}

/// Each thread copies its 16 bytes and waits, then reads its neighbour's copy: without a
/// `sync_threads()` between, unless `synced`.
#[kernel]
fn neighbour_copy(src: &[u32], out: &mut [u32], synced: bool) {
    let tile = shared_array::<u32>(128);
    let t = thread_idx().x as usize;
    cp_async_16(shared_address(&tile[4 * t]), global_address(&src[4 * t]));
    cp_async_commit();
    cp_async_wait_group::<0>();
    if synced {
        sync_threads();
    }
    out[t] = tile[4 * ((t + 1) % 32)];
}

#[test]
fn data_of_a_cp_async_group_is_visible_only_after_its_wait() {
    let stream = SimStream::new();
    let src: Vec<u32> = (0..256).map(|i| 1000 + i).collect();
    let dsrc = stream.clone_htod(&src).unwrap();
    let mut out = stream.alloc_zeros::<u32>(64).unwrap();
    two_groups::launch(&stream, LaunchConfig::new(1, 32), &dsrc, &mut out, false).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for t in 0..32 {
        assert_eq!(got[t], src[4 * t]);
        assert_eq!(got[32 + t], src[128 + 4 * t + 1]);
    }

    let error =
        two_groups::launch(&stream, LaunchConfig::new(1, 32), &dsrc, &mut out, true).unwrap_err();
    let Error::Simulator(SimError::SharedMemoryRace { site, detail }) = &error else {
        panic!("expected a read before the wait to be reported, got {error}");
    };
    assert_eq!(site.kernel, "two_groups");
    assert_eq!(site.thread, [0, 0, 0]);
    assert!(site.location.contains("tensor_sim.rs"), "{error}");
    assert!(
        detail.contains("`tile`[128]")
            && detail.contains("this thread")
            && detail.contains("not waited for"),
        "{detail}"
    );
    eprintln!("reported: {error}");

    neighbour_copy::launch(&stream, LaunchConfig::new(1, 32), &dsrc, &mut out, true).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for t in 0..32 {
        assert_eq!(got[t], src[4 * ((t + 1) % 32)]);
    }
    let error = neighbour_copy::launch(&stream, LaunchConfig::new(1, 32), &dsrc, &mut out, false)
        .unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::SharedMemoryRace { detail, .. }) if detail.contains("with no sync_threads() between")),
        "{error}"
    );
    eprintln!("reported: {error}");
}

/// An MMA that only the first `lanes` lanes of the warp reach (the others return).
#[kernel]
fn partial_mma(out: &mut [f32], lanes: u32) {
    let tile = shared_array::<bf16>(256);
    let lane = lane_id();
    if lane >= lanes {
        return;
    }
    let a = load_a_bf16(shared_address(&tile[((lane % 16) * 16) as usize]));
    let b = load_b_bf16(shared_address(&tile[((lane % 8) * 16) as usize]));
    let zero = AccF32 {
        c0: 0.0,
        c1: 0.0,
        c2: 0.0,
        c3: 0.0,
    };
    out[lane as usize] = mma_bf16(a, b, zero).c0;
}

/// `ldmatrix` at an address 8 bytes off the 16-byte rows it needs.
#[kernel]
fn misaligned_ldmatrix(out: &mut [u32]) {
    let tile = shared_array::<u32>(256);
    let lane = lane_id() as usize;
    out[lane] = ldmatrix_x1(shared_address(&tile[4 * lane + 2]));
}

/// An instruction the simulator does not run.
#[kernel]
fn bit_reverse(x: &[u32], out: &mut [u32]) {
    let i = thread_idx().x as usize;
    out[i] = ptx!(u32: "brev.b32 $0, $1;", x[i]);
}

#[test]
fn misuse_of_the_instructions_is_reported() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<f32>(32).unwrap();
    partial_mma::launch(&stream, LaunchConfig::new(1, 32), &mut out, 32).unwrap();
    let error = partial_mma::launch(&stream, LaunchConfig::new(1, 32), &mut out, 16).unwrap_err();
    let Error::Simulator(SimError::Ptx { site, detail }) = &error else {
        panic!("expected a collective that half the warp runs to be reported, got {error}");
    };
    assert_eq!(site.kernel, "partial_mma");
    assert!(
        detail.contains("ldmatrix") && detail.contains("lane 16") && detail.contains("exited"),
        "{detail}"
    );
    eprintln!("reported: {error}");
    let error = partial_mma::launch(&stream, LaunchConfig::new(1, 16), &mut out, 16).unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::Ptx { detail, .. }) if detail.contains("this warp has 16 threads")),
        "{error}"
    );
    eprintln!("reported: {error}");

    let mut words = stream.alloc_zeros::<u32>(32).unwrap();
    let error =
        misaligned_ldmatrix::launch(&stream, LaunchConfig::new(1, 32), &mut words).unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::MemoryAccess { site, detail }) if detail.contains("misaligned") && site.thread == [0, 0, 0]),
        "{error}"
    );
    eprintln!("reported: {error}");

    let x = stream.clone_htod(&[1u32; 32]).unwrap();
    let error = bit_reverse::launch(&stream, LaunchConfig::new(1, 32), &x, &mut words).unwrap_err();
    let Error::Simulator(SimError::Unsupported { what, .. }) = &error else {
        panic!("expected an unsupported instruction, got {error}");
    };
    assert!(
        what.contains("`brev.b32`") && what.contains("ldmatrix"),
        "{what}"
    );
    eprintln!("reported: {error}");
}
