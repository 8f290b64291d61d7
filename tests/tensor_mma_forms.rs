//! The warp-level MMA forms beyond bf16/f16 → f32 — f16 accumulation, tf32 (m16n8k8),
//! FP8 e4m3/e5m2 and s8/u8 (m16n8k32) — `stmatrix`, and accumulator elements by (row,
//! column), each against a host computation of what the PTX ISA defines: on the CPU
//! simulator always, on a GPU when there is one (Hopper for `stmatrix`, sm_89+ for FP8),
//! and in the PTX (the instruction present, no local memory, no call). Then the
//! simulator's reports of their misuse.

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::tensor::ldmatrix::{
    load_a_e4m3, load_a_e5m2, load_a_f16, load_a_s8, load_a_tf32, load_a_u8, load_b_e4m3,
    load_b_e5m2, load_b_f16, load_b_s8, load_b_tf32, load_b_u8,
};
use cudajit::tensor::mma::{
    acc_owner, acc_position, acc_s32_zero, acc_zero, mma_e4m3, mma_e5m2, mma_f16_f16, mma_s8,
    mma_s8_satfinite, mma_tf32, mma_u8, mma_u8_satfinite, AccF16, AccF32, AccS32,
};
use cudajit::tensor::pack::to_tf32;
use cudajit::tensor::stmatrix::{
    stmatrix_x1, stmatrix_x1_trans, stmatrix_x2, stmatrix_x2_trans, stmatrix_x4, stmatrix_x4_trans,
    store_acc_bf16,
};
use cudajit::{bf16, f16, Arch, Error, LaunchConfig, SimError, Specialization, Stream};

/// The f32 accumulator of the row-major 16×8 tile `c[base..]`, through `acc_position`.
#[device]
fn f32_tile(c: &[f32], base: usize, lane: u32) -> AccF32 {
    let mut acc = acc_zero();
    for e in 0..4u32 {
        let (row, column) = acc_position(lane, e);
        acc.set_element(e, c[base + (row * 8 + column) as usize]);
    }
    acc
}

#[device]
fn s32_tile(c: &[i32], base: usize, lane: u32) -> AccS32 {
    let mut acc = acc_s32_zero();
    for e in 0..4u32 {
        let (row, column) = acc_position(lane, e);
        acc.set_element(e, c[base + (row * 8 + column) as usize]);
    }
    acc
}

#[device]
fn store_f32(acc: AccF32, d: &mut [f32], base: usize, lane: u32) {
    for e in 0..4u32 {
        let (row, column) = acc_position(lane, e);
        d[base + (row * 8 + column) as usize] = acc.element(e);
    }
}

#[device]
fn store_s32(acc: AccS32, d: &mut [i32], base: usize, lane: u32) {
    for e in 0..4u32 {
        let (row, column) = acc_position(lane, e);
        d[base + (row * 8 + column) as usize] = acc.element(e);
    }
}

/// Every u32-register form in one warp. `a`/`b` hold six forms' A (16 rows of 32 bytes,
/// 128 words) and B (8 columns of 32 bytes of k, 64 words) tiles: e4m3, e5m2, s8, u8, s8
/// saturating, u8 saturating; `tf` the tf32 form's 16×8 A and then 8×8 B (column by
/// column) f32 tiles, rounded with `to_tf32` on the way to shared memory. C and D are row-major
/// 16×8: `cf`/`df` tf32, e4m3, e5m2; `ci`/`di` the four integer forms.
#[kernel]
fn mma_forms(
    a: &[u32],
    b: &[u32],
    tf: &[f32],
    cf: &[f32],
    ci: &[i32],
    df: &mut [f32],
    di: &mut [i32],
) {
    let sa = shared_array::<u32>(896);
    let sb = shared_array::<u32>(448);
    let lane = lane_id();
    let l = lane as usize;
    for i in 0..4usize {
        sa[l * 4 + i] = to_tf32(tf[l * 4 + i]);
    }
    for i in 0..2usize {
        sb[l * 2 + i] = to_tf32(tf[128 + l * 2 + i]);
    }
    for i in 0..24usize {
        sa[128 + l * 24 + i] = a[l * 24 + i];
    }
    for i in 0..12usize {
        sb[64 + l * 12 + i] = b[l * 12 + i];
    }
    sync_threads();
    // A: row l % 16 at byte 16 (l / 16); B: column l % 8 at byte 16 ((l / 8) % 2).
    let a_at = (l % 16) * 8 + 4 * (l / 16);
    let b_at = (l % 8) * 8 + 4 * ((l / 8) % 2);
    let d = mma_tf32(
        load_a_tf32(shared_address(&sa[a_at])),
        load_b_tf32(shared_address(&sb[b_at])),
        f32_tile(cf, 0, lane),
    );
    store_f32(d, df, 0, lane);
    let d = mma_e4m3(
        load_a_e4m3(shared_address(&sa[128 + a_at])),
        load_b_e4m3(shared_address(&sb[64 + b_at])),
        f32_tile(cf, 128, lane),
    );
    store_f32(d, df, 128, lane);
    let d = mma_e5m2(
        load_a_e5m2(shared_address(&sa[256 + a_at])),
        load_b_e5m2(shared_address(&sb[128 + b_at])),
        f32_tile(cf, 256, lane),
    );
    store_f32(d, df, 256, lane);
    let d = mma_s8(
        load_a_s8(shared_address(&sa[384 + a_at])),
        load_b_s8(shared_address(&sb[192 + b_at])),
        s32_tile(ci, 0, lane),
    );
    store_s32(d, di, 0, lane);
    let d = mma_u8(
        load_a_u8(shared_address(&sa[512 + a_at])),
        load_b_u8(shared_address(&sb[256 + b_at])),
        s32_tile(ci, 128, lane),
    );
    store_s32(d, di, 128, lane);
    let d = mma_s8_satfinite(
        load_a_s8(shared_address(&sa[640 + a_at])),
        load_b_s8(shared_address(&sb[320 + b_at])),
        s32_tile(ci, 256, lane),
    );
    store_s32(d, di, 256, lane);
    let d = mma_u8_satfinite(
        load_a_u8(shared_address(&sa[768 + a_at])),
        load_b_u8(shared_address(&sb[384 + b_at])),
        s32_tile(ci, 384, lane),
    );
    store_s32(d, di, 384, lane);
}

/// f16 inputs, f16 accumulation: `a` 16×16 row-major, `b` 16×8 column by column (the
/// f16 bit patterns), `c` and `d` row-major 16×8 f16 as pairs (word `r * 4 + t` holds
/// columns 2t, 2t+1 of row r).
#[kernel]
fn mma_f16_accumulate(a: &[u16], b: &[u16], c: &[u32], d: &mut [u32]) {
    let tile_a = shared_array::<u16>(256);
    let tile_b = shared_array::<u16>(128);
    let lane = lane_id() as usize;
    for i in 0..8usize {
        tile_a[lane * 8 + i] = a[lane * 8 + i];
    }
    for i in 0..4usize {
        tile_b[lane * 4 + i] = b[lane * 4 + i];
    }
    sync_threads();
    let (g, t) = (lane / 4, lane % 4);
    let acc = AccF16 {
        c0: c[g * 4 + t],
        c1: c[(g + 8) * 4 + t],
    };
    let r = mma_f16_f16(
        load_a_f16(shared_address(&tile_a[(lane % 16) * 16 + 8 * (lane / 16)])),
        load_b_f16(shared_address(
            &tile_b[(lane % 8) * 16 + 8 * ((lane / 8) % 2)],
        )),
        acc,
    );
    d[g * 4 + t] = r.c0;
    d[(g + 8) * 4 + t] = r.c1;
}

/// The register lane `l` gives matrix `m` of a `stmatrix`.
fn register(lane: usize, m: usize) -> u32 {
    ((lane * 131 + m * 17) as u32 & 0xffff) | (((lane * 7 + m * 29 + 3) as u32 & 0xffff) << 16)
}

/// The 16-byte row lane `l` gives `stmatrix`: a permutation of the 32 rows of a region.
fn row_of(lane: usize) -> usize {
    (lane * 5 + 3) % 32
}

/// Every form of `stmatrix` into its own region of 32 rows of 16 bytes (128 words),
/// lane `l` giving row `row_of(l)`, then `store_acc_bf16` of the accumulator of the
/// row-major 16×8 `c` into region 6 (rows 0–15). `out` receives the seven regions.
#[kernel]
fn stmatrix_forms(c: &[f32], out: &mut [u32]) {
    let tile = shared_array::<u32>(896);
    let lane = lane_id();
    let l = lane as usize;
    for i in 0..28usize {
        tile[l * 28 + i] = 0xdead_beef;
    }
    sync_threads();
    let mut r = [0u32; 4];
    for m in 0..4usize {
        r[m] =
            ((l * 131 + m * 17) as u32 & 0xffff) | (((l * 7 + m * 29 + 3) as u32 & 0xffff) << 16);
    }
    let row = ((l * 5 + 3) % 32) * 4;
    stmatrix_x1(shared_address(&tile[row]), r[0]);
    stmatrix_x1_trans(shared_address(&tile[128 + row]), r[0]);
    stmatrix_x2(shared_address(&tile[256 + row]), r[0], r[1]);
    stmatrix_x2_trans(shared_address(&tile[384 + row]), r[0], r[1]);
    stmatrix_x4(shared_address(&tile[512 + row]), r[0], r[1], r[2], r[3]);
    stmatrix_x4_trans(shared_address(&tile[640 + row]), r[0], r[1], r[2], r[3]);
    store_acc_bf16(
        shared_address(&tile[768 + (l % 16) * 4]),
        f32_tile(c, 0, lane),
    );
    sync_threads();
    for i in 0..28usize {
        out[l * 28 + i] = tile[l * 28 + i];
    }
}

/// Accumulator elements by (row, column): lane `l` reads `((7l + 3) % 16, (3l + 1) % 8)`
/// with the warp-collective `get` into `out[l]`, then (5, 6) is set to -1 and the tile
/// is written row-major to `out[32..160]`.
#[kernel]
fn accumulator_by_position(c: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    let mut acc = f32_tile(c, 0, lane);
    out[lane as usize] = acc.get((7 * lane + 3) % 16, (3 * lane + 1) % 8);
    acc.set(5, 6, -1.0);
    let (owner, element) = acc_owner(5, 6);
    if lane == owner {
        out[160] = acc.element(element);
    }
    store_f32(acc, out, 32, lane);
}

// ---- host references -------------------------------------------------------------------

fn e4m3(byte: u8) -> f64 {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let (exponent, mantissa) = (i32::from((byte >> 3) & 0xf), f64::from(byte & 7));
    if exponent == 0 {
        sign * mantissa / 8.0 * 2f64.powi(-6)
    } else {
        sign * (1.0 + mantissa / 8.0) * 2f64.powi(exponent - 7)
    }
}

fn e5m2(byte: u8) -> f64 {
    f16::from_bits(u16::from(byte) << 8).to_f64()
}

/// The byte of `decode` whose value is `v` (small integers are in both FP8 formats).
fn fp8_byte(decode: fn(u8) -> f64, v: f64) -> u8 {
    (0..=255u8)
        .find(|&b| decode(b) == v)
        .expect("representable")
}

/// `cvt.rna.tf32.f32`: ties away from zero.
fn tf32(x: f32) -> f32 {
    f32::from_bits((x.to_bits() + 0x1000) & !0x1fff)
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// A tile's bytes packed four to a little-endian word.
fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

/// `C + A · B` for A 16×k row-major, B stored column by column (`b[n * k + kk]`).
fn product(a: &[f64], b: &[f64], c: &[f64], k: usize) -> Vec<f64> {
    (0..128)
        .map(|i| {
            let (m, n) = (i / 8, i % 8);
            c[i] + (0..k).map(|kk| a[m * k + kk] * b[n * k + kk]).sum::<f64>()
        })
        .collect()
}

/// Runs `mma_forms` on `stream` against the host. Every FP8 and integer result is exact;
/// the tf32 sums round (eighths times `1 + 2^-10` span more than f32's 24 bits), so they
/// are checked exactly against the host's sum rounded once on the simulator (`exact`) and
/// within 2^-20 · Σ|a·b| (docs/simulator.md's bound) on a GPU.
fn check_mma_forms(stream: &Stream, exact: bool) {
    let mut rng = Lcg(0x5eed);
    // tf32: eighths below 4 with junk low bits (rounded away by `to_tf32`), and ties.
    let tf = |rng: &mut Lcg| {
        let v = (rng.next() % 64) as f32 / 8.0 - 4.0;
        match rng.next() % 3 {
            0 => v + v.abs() * 2f32.powi(-16),
            1 => v * (1.0 + 2f32.powi(-11)),
            _ => v,
        }
    };
    let at: Vec<f32> = (0..128).map(|_| tf(&mut rng)).collect();
    let bt: Vec<f32> = (0..64).map(|_| tf(&mut rng)).collect();
    // FP8: small integers; 8-bit integers: any byte.
    let small = |rng: &mut Lcg| (rng.next() % 7) as f64 - 3.0;
    let mut a_bytes = Vec::new();
    let mut b_bytes = Vec::new();
    let mut a_values: Vec<Vec<f64>> = Vec::new();
    let mut b_values: Vec<Vec<f64>> = Vec::new();
    for form in 0..6 {
        let (mut av, mut bv) = (Vec::new(), Vec::new());
        for (values, bytes, n) in [(&mut av, &mut a_bytes, 512), (&mut bv, &mut b_bytes, 256)] {
            for _ in 0..n {
                let (byte, value) = match form {
                    0 | 1 => {
                        let decode = if form == 0 { e4m3 } else { e5m2 };
                        let v = small(&mut rng);
                        (fp8_byte(decode, v), v)
                    }
                    2 | 4 => {
                        let byte = rng.next() as u8;
                        (byte, f64::from(byte as i8))
                    }
                    _ => {
                        let byte = rng.next() as u8;
                        (byte, f64::from(byte))
                    }
                };
                bytes.push(byte);
                values.push(value);
            }
        }
        a_values.push(av);
        b_values.push(bv);
    }
    let cf: Vec<f32> = (0..384).map(|i| (i % 11) as f32 - 5.0).collect();
    // The saturating forms start near the ends of i32's range, to overflow.
    let ci: Vec<i32> = (0..512)
        .map(|i| match i / 128 {
            2 => i32::MIN + 1000 + i,
            3 => i32::MAX - 1000 - i,
            _ => i * 1000 - 200_000,
        })
        .collect();
    let dev = |v: &[u32]| stream.clone_htod(v).unwrap();
    let mut df = stream.alloc_zeros::<f32>(384).unwrap();
    let mut di = stream.alloc_zeros::<i32>(512).unwrap();
    mma_forms::launch(
        stream,
        LaunchConfig::new(1, 32),
        &dev(&words(&a_bytes)),
        &dev(&words(&b_bytes)),
        &stream
            .clone_htod(&[at.as_slice(), bt.as_slice()].concat())
            .unwrap(),
        &stream.clone_htod(&cf).unwrap(),
        &stream.clone_htod(&ci).unwrap(),
        &mut df,
        &mut di,
    )
    .unwrap();
    let df = stream.clone_dtoh(&df).unwrap();
    let di = stream.clone_dtoh(&di).unwrap();
    let c_of =
        |base: usize| -> Vec<f64> { cf[base..base + 128].iter().map(|&x| f64::from(x)).collect() };
    let at64: Vec<f64> = at.iter().map(|&x| f64::from(tf32(x))).collect();
    let bt64: Vec<f64> = bt.iter().map(|&x| f64::from(tf32(x))).collect();
    let tf32_want = product(&at64, &bt64, &c_of(0), 8);
    let magnitude = product(
        &at64.iter().map(|x| x.abs()).collect::<Vec<_>>(),
        &bt64.iter().map(|x| x.abs()).collect::<Vec<_>>(),
        &[0.0; 128],
        8,
    );
    for i in 0..128 {
        let (got, want) = (df[i], tf32_want[i]);
        if exact {
            assert_eq!(got, want as f32, "tf32 D[{}][{}]", i / 8, i % 8);
        } else {
            let bound = magnitude[i] * 2f64.powi(-20);
            assert!(
                (f64::from(got) - want).abs() <= bound,
                "tf32 D[{}][{}]: {got} against {want}",
                i / 8,
                i % 8
            );
        }
    }
    // Small integers: every partial sum is exact in f32, so GPU and host agree exactly.
    let floats = [
        ("e4m3", product(&a_values[0], &b_values[0], &c_of(128), 32)),
        ("e5m2", product(&a_values[1], &b_values[1], &c_of(256), 32)),
    ];
    for (f, (name, want)) in floats.iter().enumerate() {
        for i in 0..128 {
            assert_eq!(
                f64::from(df[(f + 1) * 128 + i]),
                want[i],
                "{name} D[{}][{}]",
                i / 8,
                i % 8
            );
        }
    }
    for (f, (name, saturate)) in [
        ("s8", false),
        ("u8", false),
        ("s8 satfinite", true),
        ("u8 satfinite", true),
    ]
    .iter()
    .enumerate()
    {
        let c: Vec<f64> = ci[f * 128..(f + 1) * 128]
            .iter()
            .map(|&x| f64::from(x))
            .collect();
        let exact = product(&a_values[2 + f], &b_values[2 + f], &c, 32);
        for i in 0..128 {
            let exact = exact[i] as i64;
            let want = if *saturate {
                exact.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
            } else {
                exact as i32
            };
            assert_eq!(di[f * 128 + i], want, "{name} D[{}][{}]", i / 8, i % 8);
        }
    }
    // The saturating forms did overflow, and clamped.
    assert!(di[256..384].contains(&i32::MIN) && di[384..].contains(&i32::MAX));
}

fn check_f16_accumulation(stream: &Stream) {
    let value = |i: usize| f16::from_f32(((i * 7 + 3) % 9) as f32 - 4.0);
    let a: Vec<f16> = (0..256).map(value).collect();
    let b: Vec<f16> = (0..128).map(|i| value(3 * i + 1)).collect();
    let c_tile: Vec<f16> = (0..128).map(|i| f16::from_f32(i as f32 - 64.0)).collect();
    let bits = |tile: &[f16]| -> Vec<u16> { tile.iter().map(|x| x.to_bits()).collect() };
    let pairs = |tile: &[f16]| -> Vec<u32> {
        tile.chunks(2)
            .map(|p| u32::from(p[0].to_bits()) | (u32::from(p[1].to_bits()) << 16))
            .collect()
    };
    let mut d = stream.alloc_zeros::<u32>(64).unwrap();
    mma_f16_accumulate::launch(
        stream,
        LaunchConfig::new(1, 32),
        &stream.clone_htod(&bits(&a)).unwrap(),
        &stream.clone_htod(&bits(&b)).unwrap(),
        &stream.clone_htod(&pairs(&c_tile)).unwrap(),
        &mut d,
    )
    .unwrap();
    let d = stream.clone_dtoh(&d).unwrap();
    let want: Vec<f16> = (0..128)
        .map(|i| {
            let (m, n) = (i / 8, i % 8);
            let sum: f32 = (0..16)
                .map(|k| a[m * 16 + k].to_f32() * b[n * 16 + k].to_f32())
                .sum();
            f16::from_f32(c_tile[i].to_f32() + sum)
        })
        .collect();
    assert_eq!(d, pairs(&want));
}

fn check_stmatrix(stream: &Stream) {
    let c: Vec<f32> = (0..128).map(|i| i as f32 * 0.37 - 20.0).collect();
    let mut out = stream.alloc_zeros::<u32>(896).unwrap();
    stmatrix_forms::launch(
        stream,
        LaunchConfig::new(1, 32),
        &stream.clone_htod(&c).unwrap(),
        &mut out,
    )
    .unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    let half = |word: u32, h: usize| (word >> (16 * h)) as u16;
    for (region, (matrices, trans)) in [
        (1, false),
        (1, true),
        (2, false),
        (2, true),
        (4, false),
        (4, true),
    ]
    .into_iter()
    .enumerate()
    {
        let mut want = vec![0xdead_beefu32; 128];
        for m in 0..matrices {
            for r in 0..8 {
                // Element (r, e) of matrix m: lane 4r + e/2's half e % 2, or, transposed,
                // lane 4e + r/2's half r % 2.
                let element = |e: usize| {
                    if trans {
                        half(register(4 * e + r / 2, m), r % 2)
                    } else {
                        half(register(4 * r + e / 2, m), e % 2)
                    }
                };
                let row = row_of(8 * m + r);
                for w in 0..4 {
                    want[row * 4 + w] =
                        u32::from(element(2 * w)) | (u32::from(element(2 * w + 1)) << 16);
                }
            }
        }
        assert_eq!(
            &out[region * 128..(region + 1) * 128],
            want.as_slice(),
            "stmatrix x{matrices} trans {trans}"
        );
    }
    let bf = |x: f32| u32::from(bf16::from_f32(x).to_bits());
    let tile: Vec<u32> = (0..64)
        .map(|w| bf(c[2 * w]) | (bf(c[2 * w + 1]) << 16))
        .collect();
    assert_eq!(&out[768..832], tile.as_slice(), "store_acc_bf16");
    assert!(out[832..].iter().all(|&w| w == 0xdead_beef));
}

fn check_accumulator_by_position(stream: &Stream) {
    let c: Vec<f32> = (0..128).map(|i| i as f32 + 0.5).collect();
    let mut out = stream.alloc_zeros::<f32>(161).unwrap();
    accumulator_by_position::launch(
        stream,
        LaunchConfig::new(1, 32),
        &stream.clone_htod(&c).unwrap(),
        &mut out,
    )
    .unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    for (lane, &got) in out[..32].iter().enumerate() {
        let (row, column) = ((7 * lane + 3) % 16, (3 * lane + 1) % 8);
        assert_eq!(got, c[row * 8 + column], "lane {lane}");
    }
    let mut want = c.clone();
    want[5 * 8 + 6] = -1.0;
    assert_eq!(&out[32..160], want.as_slice());
    assert_eq!(out[160], -1.0);
}

// ---- on the simulator, on a GPU, in the PTX ---------------------------------------------

#[test]
fn mma_forms_match_the_host_on_the_simulator() {
    check_mma_forms(&Stream::simulator(), true);
}

#[test]
fn f16_accumulation_matches_the_host_on_the_simulator() {
    check_f16_accumulation(&Stream::simulator());
}

#[test]
fn stmatrix_distributes_as_the_ptx_isa_says_on_the_simulator() {
    check_stmatrix(&Stream::simulator());
}

#[test]
fn accumulator_elements_by_position_on_the_simulator() {
    check_accumulator_by_position(&Stream::simulator());
}

/// A GPU of compute capability 9.0 (FP8 MMA needs 8.9, `stmatrix` 9.0), or `None`.
fn hopper() -> Option<Stream> {
    let context = common::gpu_or_skip()?;
    let (major, _) = context.compute_capability().ok()?;
    if major < 9 {
        eprintln!("skipped: needs compute capability 9.0");
        return None;
    }
    Some(Stream::from_cuda(context.default_stream()))
}

#[test]
fn mma_forms_match_the_host_on_the_gpu() {
    if let Some(stream) = hopper() {
        check_mma_forms(&stream, false);
    }
}

#[test]
fn f16_accumulation_matches_the_host_on_the_gpu() {
    if let Some(stream) = hopper() {
        check_f16_accumulation(&stream);
    }
}

#[test]
fn stmatrix_distributes_as_the_ptx_isa_says_on_the_gpu() {
    if let Some(stream) = hopper() {
        check_stmatrix(&stream);
    }
}

#[test]
fn accumulator_elements_by_position_on_the_gpu() {
    if let Some(stream) = hopper() {
        check_accumulator_by_position(&stream);
    }
}

fn ptx_of(kernel: &'static cudajit::Kernel) -> Option<String> {
    common::toolchain_or_skip()?;
    Some(
        linked_ptx(
            kernel.captured(),
            &Specialization::default(),
            Arch::SM_90,
            &CompileOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    )
}

#[test]
fn every_form_is_its_instruction_in_registers() {
    let cases: [(&'static cudajit::Kernel, &[&str]); 4] = [
        (
            &mma_forms::KERNEL,
            &[
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
                "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
                "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
                "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
                "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32",
                "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",
                "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32",
                "cvt.rna.tf32.f32",
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            ],
        ),
        (
            &mma_f16_accumulate::KERNEL,
            &["mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"],
        ),
        (
            &stmatrix_forms::KERNEL,
            &[
                "stmatrix.sync.aligned.m8n8.x1.shared.b16",
                "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
                "stmatrix.sync.aligned.m8n8.x2.shared.b16",
                "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
                "stmatrix.sync.aligned.m8n8.x4.shared.b16",
                "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
                "cvt.rn.bf16x2.f32",
            ],
        ),
        (&accumulator_by_position::KERNEL, &["shfl.sync.idx.b32"]),
    ];
    for (kernel, needles) in cases {
        let Some(ptx) = ptx_of(kernel) else {
            return;
        };
        for needle in needles {
            assert!(ptx.contains(needle), "`{needle}` missing:\n{ptx}");
        }
        assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
        assert!(!ptx.contains("call"), "a call was not inlined:\n{ptx}");
    }
}

// ---- misuse on the simulator ---------------------------------------------------------------

/// `stmatrix` at an address 8 bytes off the 16-byte rows it writes.
#[kernel]
fn misaligned_stmatrix(out: &mut [u32]) {
    let tile = shared_array::<u32>(256);
    let lane = lane_id() as usize;
    stmatrix_x1(shared_address(&tile[4 * lane + 2]), 7);
    out[lane] = 1;
}

/// A form the PTX ISA has but the simulator does not run: A e4m3, B e5m2.
#[kernel]
fn mixed_fp8_mma(out: &mut [f32]) {
    let lane = lane_id() as usize;
    let (d0, d1, d2, d3) = ptx!((f32, f32, f32, f32): "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        0u32, 0u32, 0u32, 0u32, 0u32, 0u32, 0.0f32, 0.0f32, 0.0f32, 0.0f32);
    out[lane] = d0 + d1 + d2 + d3;
}

#[test]
fn misuse_is_reported_at_the_kernels_line() {
    let stream = Stream::simulator();
    let mut words = stream.alloc_zeros::<u32>(32).unwrap();
    let error =
        misaligned_stmatrix::launch(&stream, LaunchConfig::new(1, 32), &mut words).unwrap_err();
    let Error::Simulator(SimError::MemoryAccess { site, detail }) = &error else {
        panic!("expected a misaligned stmatrix to be reported, got {error}");
    };
    assert!(detail.contains("misaligned"), "{detail}");
    assert_eq!(site.kernel, "misaligned_stmatrix");
    // At the instruction's line in the library, called from the kernel's line.
    assert!(site.location.contains("src/tensor/stmatrix.rs"), "{error}");
    assert!(
        site.callers
            .iter()
            .any(|(f, at)| f == "misaligned_stmatrix" && at.contains("tensor_mma_forms.rs")),
        "{error}"
    );
    eprintln!("reported: {error}");

    let mut floats = stream.alloc_zeros::<f32>(32).unwrap();
    let error = mixed_fp8_mma::launch(&stream, LaunchConfig::new(1, 32), &mut floats).unwrap_err();
    let Error::Simulator(SimError::Unsupported { what, location, .. }) = &error else {
        panic!("expected an unsupported MMA form, got {error}");
    };
    assert!(
        what.contains("e4m3.e5m2")
            && what.contains("m16n8k32.row.col.f32.{e4m3.e4m3,e5m2.e5m2}.f32"),
        "{what}"
    );
    assert!(location.contains("tensor_mma_forms.rs"), "{error}");
    eprintln!("reported: {error}");
}
