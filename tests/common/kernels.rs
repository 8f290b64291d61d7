//! Kernels that exercise the language, with CPU references, shared by the CPU pipeline
//! tests (which compile them) and the GPU tests (which run them).
#![allow(dead_code)]

use cudajit::prelude::*;
use cudajit::{bf16, f16};

#[kernel]
#[allow(clippy::assign_op_pattern)] // kept as written: a shared test kernel
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

pub fn saxpy_ref(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// Wrapping arithmetic, division, shifts by large amounts, bit operations, comparisons.
#[kernel]
#[allow(clippy::nonminimal_bool)] // kept as written: a shared test kernel
pub fn int_ops(a: &[i32], b: &[i32], shift: u32, out: &mut [i32], flags: &mut [u32]) {
    let i = global_index();
    if i >= out.len() {
        return;
    }
    let x = a[i];
    let y = b[i];
    let mut r = x * 31 + y * 17 - 5;
    r ^= x << shift;
    r = r + (x >> (shift + 3)) + ((y as u32 >> shift) as i32);
    if y != 0 {
        r += x / y + x % y;
    }
    let u = x as u32;
    let mut f: u32 = 0;
    if x < y {
        f |= 1;
    }
    if u < y as u32 {
        f |= 2;
    }
    if x == y || (x > 0 && !(y > 0)) {
        f |= 4;
    }
    f += (u >> shift) & 0xf0;
    out[i] = !r;
    flags[i] = f;
}

pub fn int_ops_ref(a: &[i32], b: &[i32], shift: u32, out: &mut [i32], flags: &mut [u32]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let mut r = x
            .wrapping_mul(31)
            .wrapping_add(y.wrapping_mul(17))
            .wrapping_sub(5);
        r ^= x.wrapping_shl(shift);
        r = r
            .wrapping_add(x.wrapping_shr(shift + 3))
            .wrapping_add(((y as u32).wrapping_shr(shift)) as i32);
        if y != 0 {
            r = r
                .wrapping_add(x.wrapping_div(y))
                .wrapping_add(x.wrapping_rem(y));
        }
        let u = x as u32;
        let mut f: u32 = 0;
        if x < y {
            f |= 1;
        }
        if u < y as u32 {
            f |= 2;
        }
        if x == y || (x > 0 && y <= 0) {
            f |= 4;
        }
        f = f.wrapping_add((u.wrapping_shr(shift)) & 0xf0);
        out[i] = !r;
        flags[i] = f;
    }
}

/// Rust's `as`: saturating float-to-int (NaN to 0), int-to-float, widening and narrowing.
#[kernel]
pub fn casts(
    x: &[f32],
    to_i32: &mut [i32],
    to_u8: &mut [u8],
    to_i16: &mut [i16],
    to_f64: &mut [f64],
    to_u64: &mut [u64],
) {
    let i = global_index();
    if i < x.len() {
        let v = x[i];
        to_i32[i] = v as i32;
        to_u8[i] = v as u8;
        to_i16[i] = v as i16;
        to_f64[i] = v as f64 * 0.5 + (i as f64);
        to_u64[i] = (v as i64) as u64 + (i as u8) as u64;
    }
}

pub fn casts_ref(
    x: &[f32],
    to_i32: &mut [i32],
    to_u8: &mut [u8],
    to_i16: &mut [i16],
    to_f64: &mut [f64],
    to_u64: &mut [u64],
) {
    for i in 0..x.len() {
        let v = x[i];
        to_i32[i] = v as i32;
        to_u8[i] = v as u8;
        to_i16[i] = v as i16;
        to_f64[i] = v as f64 * 0.5 + (i as f64);
        to_u64[i] = ((v as i64) as u64).wrapping_add((i as u8) as u64);
    }
}

/// Every loop form: stepped and inclusive ranges, `while`, `loop` with `break`, labelled
/// `continue`, an `if` used as a value and a `mut` parameter.
#[kernel]
pub fn loops(mut limit: u64, out: &mut [u64]) {
    let i = global_index();
    if i >= out.len() {
        return;
    }
    limit += 1;
    let n = i as u64;
    let mut sum: u64 = 0;
    for j in (0..n).step_by(3) {
        sum += j;
    }
    for j in 1..=4u64 {
        sum += j * 1000;
    }
    let mut k = n;
    while k > 0 {
        sum += k & 1;
        k >>= 1;
    }
    let mut steps = 0u64;
    loop {
        steps += 1;
        if steps * steps > n || steps >= limit {
            break;
        }
    }
    'outer: for a in 0..3u64 {
        for b in 0..3u64 {
            if b > a {
                continue 'outer;
            }
            sum += a * 10 + b;
        }
    }
    let parity = if n % 2 == 0 { 100 } else { 200 };
    out[i] = sum + steps * 1_000_000 + parity;
}

pub fn loops_ref(limit: u64, out: &mut [u64]) {
    let limit = limit + 1;
    for (i, slot) in out.iter_mut().enumerate() {
        let n = i as u64;
        let mut sum: u64 = (0..n).step_by(3).sum();
        sum += (1..=4u64).map(|j| j * 1000).sum::<u64>();
        sum += u64::from(n.count_ones());
        let mut steps = 0u64;
        loop {
            steps += 1;
            if steps * steps > n || steps >= limit {
                break;
            }
        }
        for a in 0..3u64 {
            for b in 0..=a {
                sum += a * 10 + b;
            }
        }
        let parity = if n.is_multiple_of(2) { 100 } else { 200 };
        *slot = sum + steps * 1_000_000 + parity;
    }
}

/// Two-dimensional grid: a transpose of a `rows` x `cols` matrix.
#[kernel]
pub fn transpose(rows: u32, cols: u32, input: &[f64], output: &mut [f64]) {
    let c = block_idx().x * block_dim().x + thread_idx().x;
    let r = block_idx().y * block_dim().y + thread_idx().y;
    if r < rows && c < cols {
        output[(c * rows + r) as usize] = input[(r * cols + c) as usize];
    }
}

/// `bool` parameters and slices, and short-circuit logic.
#[kernel]
pub fn bools(invert: bool, x: &[bool], y: &[i64], out: &mut [bool]) {
    let i = global_index();
    if i < out.len() {
        let v = x[i] && y[i] > 0 || !x[i] && y[i] % 3 == 0;
        out[i] = v != invert;
    }
}

pub fn bools_ref(invert: bool, x: &[bool], y: &[i64], out: &mut [bool]) {
    for i in 0..out.len() {
        let v = x[i] && y[i] > 0 || !x[i] && y[i] % 3 == 0;
        out[i] = v != invert;
    }
}

/// A grid-stride loop, the usual way to cover any size with a fixed grid.
#[kernel]
pub fn scale_strided(factor: f64, data: &mut [f64]) {
    for i in (global_index()..data.len()).step_by(grid_stride()) {
        data[i] *= factor;
    }
}

// ----- device functions, generics, specialisation, math -----

/// A generic device function, callable on the host too.
#[device]
pub fn lerp<T: Float>(a: T, b: T, t: T) -> T {
    a + (b - a) * t
}

/// A device function calling another, with early returns.
#[device]
pub fn clamped_index(i: usize, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    if i < n {
        i
    } else {
        n - 1
    }
}

/// A const-generic device function with a loop the compiler can unroll.
#[device]
pub fn window_sum<const W: usize>(data: &[f32], start: usize) -> f32 {
    let mut sum = 0.0;
    for k in 0..W {
        sum += data[clamped_index(start + k, data.len())];
    }
    sum
}

/// A device function returning nothing, writing through a slice.
#[device]
pub fn store_twice(out: &mut [f32], i: usize, value: f32) {
    out[i] = value * 2.0;
}

/// A generic kernel: one specialisation per element type.
#[kernel]
pub fn blend<T: Float>(t: T, a: &[T], b: &[T], out: &mut [T]) {
    let i = global_index();
    if i < out.len() {
        out[i] = lerp(a[i], b[i], t);
    }
}

/// A const-generic kernel calling a const-generic device function.
#[kernel]
pub fn window_sums<const W: usize>(input: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i < out.len() {
        let s = window_sum::<W>(input, i);
        store_twice(out, i, s);
    }
}

/// A `#[comptime]` parameter: a launch value compiled in as a constant.
#[kernel]
pub fn collatz_steps(#[comptime] rounds: u32, data: &mut [u64]) {
    let i = global_index();
    if i < data.len() {
        let mut v = data[i];
        for _ in 0..rounds {
            v = if v % 2 == 0 { v / 2 } else { 3 * v + 1 };
        }
        data[i] = v;
    }
}

pub fn collatz_ref(rounds: u32, data: &mut [u64]) {
    for v in data.iter_mut() {
        for _ in 0..rounds {
            *v = if *v % 2 == 0 { *v / 2 } else { 3 * *v + 1 };
        }
    }
}

/// Float methods through libdevice, and integer bit counts.
#[kernel]
pub fn math_ops(
    x: &[f32],
    y: &[f64],
    bits: &[u32],
    out32: &mut [f32],
    out64: &mut [f64],
    counts: &mut [u32],
) {
    let i = global_index();
    if i < x.len() {
        let v = x[i];
        out32[i] = v.abs().sqrt()
            + v.sin() * v.cos()
            + (v * 0.1).exp()
            + v.abs().max(1.0).ln()
            + f32::min(v, 0.5)
            + v.mul_add(2.0, 1.0)
            + v.floor()
            + v.tanh()
            + v.powi(3);
        let w = y[i];
        out64[i] = w.abs().sqrt() + w.exp2().log2() + w.atan2(1.5) + w.cbrt() + w.powf(2.0);
        counts[i] =
            bits[i].count_ones() + bits[i].leading_zeros() * 100 + bits[i].trailing_zeros() * 10000;
    }
}

pub fn math_ops_ref(
    x: &[f32],
    y: &[f64],
    bits: &[u32],
    out32: &mut [f32],
    out64: &mut [f64],
    counts: &mut [u32],
) {
    for i in 0..x.len() {
        let v = x[i];
        out32[i] = v.abs().sqrt()
            + v.sin() * v.cos()
            + (v * 0.1).exp()
            + v.abs().max(1.0).ln()
            + f32::min(v, 0.5)
            + v.mul_add(2.0, 1.0)
            + v.floor()
            + v.tanh()
            + v.powi(3);
        let w = y[i];
        out64[i] = w.abs().sqrt() + w.exp2().log2() + w.atan2(1.5) + w.cbrt() + w.powf(2.0);
        counts[i] =
            bits[i].count_ones() + bits[i].leading_zeros() * 100 + bits[i].trailing_zeros() * 10000;
    }
}

// ----- shared memory, barriers, atomics, warps -----

/// The sum of `data` into `total[0]`: a grid-stride loop per thread, a warp reduction
/// with shuffles, per-warp partial sums in shared memory, one atomic per block.
#[kernel]
pub fn block_sum(data: &[u32], total: &mut [u64]) {
    let partial = shared_array::<u64>(32);
    let mut sum: u64 = 0;
    for i in (global_index()..data.len()).step_by(grid_stride()) {
        sum += data[i] as u64;
    }
    let mut offset = 16;
    while offset > 0 {
        sum += shfl_down_sync(FULL_WARP, sum, offset);
        offset /= 2;
    }
    let warp = thread_idx().x / 32;
    if lane_id() == 0 {
        partial[warp as usize] = sum;
    }
    sync_threads();
    if warp == 0 {
        let warps = block_dim().x / 32;
        let mut value: u64 = if lane_id() < warps {
            partial[lane_id() as usize]
        } else {
            0
        };
        let mut k = 16;
        while k > 0 {
            value += shfl_xor_sync(FULL_WARP, value, k);
            k >>= 1;
        }
        if lane_id() == 0 {
            atomic_add(&mut total[0], value);
        }
    }
}

/// A 256-bin histogram of bytes: per-block bins in shared memory (shared atomics), merged
/// into the global bins (global atomics).
#[kernel]
pub fn histogram(data: &[u8], bins: &mut [u32]) {
    let local = shared_array::<u32>(256);
    let mut b = thread_idx().x as usize;
    while b < 256 {
        local[b] = 0;
        b += block_dim().x as usize;
    }
    sync_threads();
    for i in (global_index()..data.len()).step_by(grid_stride()) {
        atomic_add(&mut local[data[i] as usize], 1);
    }
    sync_threads();
    let mut b = thread_idx().x as usize;
    while b < 256 {
        let count = local[b];
        if count > 0 {
            atomic_add(&mut bins[b], count);
        }
        b += block_dim().x as usize;
    }
}

/// Transpose through a padded shared-memory tile of `TILE` x (`TILE` + 1), so that both
/// the reads and the writes of global memory are coalesced.
#[kernel]
pub fn transpose_tiled<const TILE: usize>(rows: u32, cols: u32, input: &[f32], output: &mut [f32]) {
    let tile = shared_array::<f32>(TILE * (TILE + 1));
    let t = TILE as u32;
    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let c = block_idx().x * t + tx;
    let r = block_idx().y * t + ty;
    if r < rows && c < cols {
        tile[(ty * (t + 1) + tx) as usize] = input[(r * cols + c) as usize];
    }
    sync_threads();
    let oc = block_idx().y * t + tx;
    let or = block_idx().x * t + ty;
    if or < cols && oc < rows {
        output[(or * rows + oc) as usize] = tile[(tx * (t + 1) + ty) as usize];
    }
}

/// Warp votes, lane ids, an inclusive warp scan with `shfl_up_sync`, a reversal through
/// dynamic shared memory, compare-exchange and min/max atomics.
#[kernel]
pub fn warp_ops(
    values: &[i32],
    ballots: &mut [u32],
    flags: &mut [u32],
    scan: &mut [i32],
    reversed: &mut [i32],
    extremes: &mut [i32],
) {
    let i = global_index();
    let v = values[i];
    let lane = lane_id();
    let ballot = ballot_sync(FULL_WARP, v > 0);
    let all = all_sync(FULL_WARP, v > -1000);
    let any = any_sync(FULL_WARP, v == 7);
    ballots[i] = ballot;
    flags[i] = lane
        + (all as u32) * 100
        + (any as u32) * 1000
        + (activemask() == FULL_WARP) as u32 * 10000;
    let mut running = v;
    let mut delta = 1;
    while delta < 32 {
        let up = shfl_up_sync(FULL_WARP, running, delta);
        if lane >= delta {
            running += up;
        }
        delta *= 2;
    }
    scan[i] = running;
    let buffer = dynamic_shared::<i32>();
    let t = thread_idx().x as usize;
    buffer[t] = v;
    sync_threads();
    reversed[i] = buffer[buffer.len() - 1 - t];
    atomic_min(&mut extremes[0], v);
    atomic_max(&mut extremes[1], v);
    let mut seen = extremes[2];
    loop {
        let previous = atomic_compare_exchange(&mut extremes[2], seen, seen + 1);
        if previous == seen {
            break;
        }
        seen = previous;
    }
}

/// 16-byte vector loads and stores: `y = a * x + y` four elements at a time, the tail
/// element by element.
#[kernel]
#[allow(clippy::assign_op_pattern)] // kept as written: a shared test kernel
pub fn saxpy_vec4(a: f32, x: &[f32], y: &mut [f32]) {
    let n = y.len();
    let vectors = n / 4;
    for v in (global_index()..vectors).step_by(grid_stride()) {
        let (x0, x1, x2, x3) = vload4(x, v);
        let (y0, y1, y2, y3) = vload4(y, v);
        vstore4(y, v, (a * x0 + y0, a * x1 + y1, a * x2 + y2, a * x3 + y3));
    }
    let tail = vectors * 4 + global_index();
    if tail < n {
        y[tail] = a * x[tail] + y[tail];
    }
}

/// Register blocking with a local array: each thread computes `R` dot products of
/// length `k` (row `r` of `a` with `R` consecutive columns of `b`), accumulating in
/// registers.
#[kernel]
pub fn row_times_columns<const R: usize>(k: u32, a: &[f64], b: &[f64], out: &mut [f64]) {
    let row = global_index();
    let rows = out.len() / R;
    if row < rows {
        let mut acc = [0.0; R];
        for j in 0..k as usize {
            let left = a[row * k as usize + j];
            for c in 0..R {
                acc[c] += left * b[j * R + c];
            }
        }
        for c in 0..acc.len() {
            out[row * R + c] = acc[c];
        }
    }
}

/// The warp helpers of `cudajit::warp`, scoped atomics, `erf` and the fast intrinsics.
#[kernel]
pub fn warp_helpers(
    values: &[f32],
    sums: &mut [f32],
    maxima: &mut [f32],
    scans: &mut [u32],
    per_block: &mut [u32],
    total: &mut [u64],
    specials: &mut [f32],
) {
    let i = global_index();
    let v = values[i];
    let s = warp_sum(v);
    let m = warp_max(v);
    let lowest = warp_min(v);
    let scan = warp_inclusive_scan(1u32);
    if lane_id() == 0 {
        sums[i / 32] = s;
        maxima[i / 32] = m - lowest;
    }
    scans[i] = scan;
    atomic_add_block(&mut per_block[block_idx().x as usize], 1);
    atomic_max_block(
        &mut per_block[grid_dim().x as usize + block_idx().x as usize],
        thread_idx().x,
    );
    atomic_add_system(&mut total[0], 1);
    let x = v * 0.01;
    specials[i] = erf(x)
        + erfc(x)
        + rsqrt(x.abs() + 1.0)
        + x.fast_exp()
        + x.fast_sin()
        + x.fast_cos()
        + (x.abs() + 1.0).fast_ln()
        + x.fast_div(3.0);
}

// ----- debugging: printing, assertions, bounds checks -----

/// `println!` on the device.
#[kernel]
pub fn debug_print(values: &[i32]) {
    let i = global_index();
    if i < 2 {
        println!(
            "value {} = {} half {:.2} positive {} hex {:x}",
            i,
            values[i],
            values[i] as f32 / 2.0,
            values[i] > 0,
            values[i]
        );
    }
}

/// `assert!` with a message: a zero divisor stops the kernel.
#[kernel]
pub fn checked_division(values: &[i32], out: &mut [i32]) {
    let i = global_index();
    if i < values.len() {
        assert!(values[i] != 0, "zero divisor at index {}", i);
        debug_assert_eq!(out[i], 0);
        out[i] = 100 / values[i];
    }
}

/// Reads one element past the end in its last thread.
#[kernel]
pub fn off_by_one(values: &[i32], out: &mut [i32]) {
    let i = global_index();
    if i < out.len() {
        out[i] = values[i + 1];
    }
}

/// `match` on integers: literals, ranges, `|`, guards, as a value and as a statement.
#[kernel]
#[allow(clippy::manual_range_patterns)] // kept as written: a shared test kernel
pub fn classify(values: &[i32], classes: &mut [u32], flags: &mut [u32]) {
    let i = global_index();
    if i < values.len() {
        let v = values[i];
        classes[i] = match v {
            0 => 100,
            1 | 2 | 3 => 200,
            -5..=-1 => 300,
            10..20 if v % 2 == 0 => 400,
            10..20 => 401,
            _ => 500,
        };
        match v % 4 {
            0 => flags[i] = 1,
            1 | 2 => {
                flags[i] = 2;
            }
            _ => {}
        }
    }
}

pub fn classify_ref(values: &[i32], classes: &mut [u32], flags: &mut [u32]) {
    for i in 0..values.len() {
        let v = values[i];
        classes[i] = match v {
            0 => 100,
            1..=3 => 200,
            -5..=-1 => 300,
            10..20 if v % 2 == 0 => 400,
            10..20 => 401,
            _ => 500,
        };
        match v % 4 {
            0 => flags[i] = 1,
            1 | 2 => flags[i] = 2,
            _ => {}
        }
    }
}

/// Inline PTX: a result, arguments of several register classes, and a statement.
#[kernel]
pub fn inline_ptx(a: &[u32], b: &[f64], out: &mut [u32], wide: &mut [f64], lanes: &mut [u32]) {
    let i = global_index();
    if i < out.len() {
        out[i] = ptx!(u32: "add.u32 $0, $1, $2;", a[i], 7u32);
        wide[i] = ptx!(f64: "fma.rn.f64 $0, $1, $2, $3;", b[i], 2.0, 0.5);
        lanes[i] = ptx!(u32: "mov.u32 $0, %laneid;");
        ptx!("membar.gl;");
    }
}

// ----- user structs -----

/// A particle, as the host lays it out.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Particle {
    pub x: f32,
    pub v: f32,
    pub id: u32,
    pub alive: bool,
    pub mass: f64,
}

/// An operation code, as the host stores it.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(u8)]
pub enum Op {
    Add = 1,
    Sub = 7,
    Mul,
    Keep = 200,
}

/// Apply one [`Op`] per element; `mode` (by value) chooses how results are scaled.
/// Enums by value and in slices, variants in expressions and `match` patterns.
#[kernel]
pub fn apply_ops(mode: Op, ops: &[Op], a: &[f32], b: &[f32], out: &mut [f32], codes: &mut [u32]) {
    let i = global_index();
    if i < out.len() {
        let op = ops[i];
        let r = match op {
            Op::Add => a[i] + b[i],
            Op::Sub => a[i] - b[i],
            Op::Mul => a[i] * b[i],
            _ => a[i],
        };
        out[i] = if mode == Op::Mul { r * 2.0 } else { r };
        codes[i] = op as u32 + if op != Op::Keep { 1000 } else { 0 };
    }
}

pub fn apply_ops_ref(
    mode: Op,
    ops: &[Op],
    a: &[f32],
    b: &[f32],
    out: &mut [f32],
    codes: &mut [u32],
) {
    for i in 0..out.len() {
        let op = ops[i];
        let r = match op {
            Op::Add => a[i] + b[i],
            Op::Sub => a[i] - b[i],
            Op::Mul => a[i] * b[i],
            _ => a[i],
        };
        out[i] = if mode == Op::Mul { r * 2.0 } else { r };
        codes[i] = op as u32 + if op != Op::Keep { 1000 } else { 0 };
    }
}

/// Simulation parameters, passed by value.
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct Step {
    pub dt: f32,
    pub gravity: f32,
    pub generation: u64,
}

/// Structs by value and in slices: field reads and writes, whole-struct copies, structs
/// passed to a device function.
#[kernel]
pub fn advance(step: Step, particles: &mut [Particle], snapshot: &mut [Particle], ids: &mut [u64]) {
    let i = global_index();
    if i < particles.len() {
        let before = particles[i];
        if particles[i].alive {
            particles[i].v += step.gravity * step.dt;
            particles[i].x += particles[i].v * step.dt;
            particles[i].mass *= 0.5;
        }
        let mut copy = before;
        copy.id += 1000;
        snapshot[i] = copy;
        ids[i] = tagged_id(step, before);
    }
}

/// A device function taking structs by value (a parameter and a local).
#[device]
pub fn tagged_id(step: Step, particle: Particle) -> u64 {
    step.generation + particle.id as u64
}

pub fn advance_ref(
    step: Step,
    particles: &mut [Particle],
    snapshot: &mut [Particle],
    ids: &mut [u64],
) {
    for i in 0..particles.len() {
        let before = particles[i];
        if particles[i].alive {
            particles[i].v += step.gravity * step.dt;
            particles[i].x += particles[i].v * step.dt;
            particles[i].mass *= 0.5;
        }
        let mut copy = before;
        copy.id += 1000;
        snapshot[i] = copy;
        ids[i] = step.generation + before.id as u64;
    }
}

// ----- tuples -----

/// Tuples: literals, `.N` reads and writes, destructuring (with `_` and `mut`), swaps,
/// annotated types, whole-tuple copies and `vload4` bound to one name.
#[kernel]
pub fn tuples(x: &[f32], y: &[u32], out: &mut [f32], idx: &mut [u32], quads: &mut [f32]) {
    let i = global_index();
    if i < out.len() {
        let mut best = (x[i], y[i]);
        let other: (f32, u32) = (x[i] * 0.5 + 1.0, y[i] + 3);
        if other.0 > best.0 {
            best = other;
        }
        let (mut lo, mut hi) = (x[i], other.0);
        if lo > hi {
            (lo, hi) = (hi, lo);
        }
        let copy = best;
        let (value, _) = copy;
        best.1 += 1;
        let (a, b, c) = (lo, hi, value);
        out[i] = a * 100.0 + b * 10.0 + c;
        idx[i] = best.1;
    }
    if i * 4 + 3 < quads.len() {
        let v = vload4(x, i);
        quads[i * 4] = v.3;
        quads[i * 4 + 1] = v.2;
        quads[i * 4 + 2] = v.1;
        quads[i * 4 + 3] = v.0;
    }
}

pub fn tuples_ref(x: &[f32], y: &[u32], out: &mut [f32], idx: &mut [u32], quads: &mut [f32]) {
    for i in 0..out.len() {
        let mut best = (x[i], y[i]);
        let other: (f32, u32) = (x[i] * 0.5 + 1.0, y[i] + 3);
        if other.0 > best.0 {
            best = other;
        }
        let (mut lo, mut hi) = (x[i], other.0);
        if lo > hi {
            (lo, hi) = (hi, lo);
        }
        let copy = best;
        let (value, _) = copy;
        best.1 += 1;
        let (a, b, c) = (lo, hi, value);
        out[i] = a * 100.0 + b * 10.0 + c;
        idx[i] = best.1;
    }
    for i in 0..quads.len() / 4 {
        for k in 0..4 {
            quads[i * 4 + k] = x[i * 4 + 3 - k];
        }
    }
}

/// Tuples as the values of `if`, `match` and blocks, nested and from tuple locals.
#[kernel]
pub fn tuple_branches(x: &[i32], lo: &mut [i32], hi: &mut [i32], tag: &mut [u32]) {
    let i = global_index();
    if i + 1 < x.len() {
        let (a, b) = (x[i], x[i + 1]);
        let (small, large) = if a < b { (a, b) } else { (b, a) };
        let pair = (small, large);
        let t = match x[i] & 3 {
            0 => (1u32, pair.0),
            1 | 2 => {
                let bump = pair.1 + 1;
                (2, bump)
            }
            _ => {
                if a > 0 {
                    (3, a)
                } else {
                    (4, b)
                }
            }
        };
        let (c, d) = {
            let s = t;
            (s.1, s.0)
        };
        lo[i] = small + c;
        hi[i] = large;
        tag[i] = d;
    }
}

pub fn tuple_branches_ref(x: &[i32], lo: &mut [i32], hi: &mut [i32], tag: &mut [u32]) {
    for i in 0..x.len().saturating_sub(1) {
        let (a, b) = (x[i], x[i + 1]);
        let (small, large) = if a < b { (a, b) } else { (b, a) };
        let pair = (small, large);
        let t = match x[i] & 3 {
            0 => (1u32, pair.0),
            1 | 2 => {
                let bump = pair.1 + 1;
                (2, bump)
            }
            _ => {
                if a > 0 {
                    (3, a)
                } else {
                    (4, b)
                }
            }
        };
        let (c, d) = {
            let s = t;
            (s.1, s.0)
        };
        lo[i] = small + c;
        hi[i] = large;
        tag[i] = d;
    }
}

// ----- 16-bit floats -----

/// `f16` arithmetic natively, `bf16` through `f32`, conversions both ways.
#[kernel]
pub fn half_precision(
    x: &[f16],
    y: &[bf16],
    scale: f32,
    out16: &mut [f16],
    outb: &mut [bf16],
    wide: &mut [f32],
) {
    let i = global_index();
    if i < x.len() {
        let h = x[i];
        let s = f16::from_f32(scale);
        out16[i] = h * s + h;
        outb[i] = y[i] * bf16::from_f32(scale) - y[i];
        wide[i] = h.to_f32() + y[i].to_f32();
    }
}

pub fn half_precision_ref(
    x: &[f16],
    y: &[bf16],
    scale: f32,
    out16: &mut [f16],
    outb: &mut [bf16],
    wide: &mut [f32],
) {
    for i in 0..x.len() {
        let h = x[i];
        let s = f16::from_f32(scale);
        out16[i] = h * s + h;
        outb[i] = y[i] * bf16::from_f32(scale) - y[i];
        wide[i] = h.to_f32() + y[i].to_f32();
    }
}

// ----- values returned by device functions -----

/// An interval, built in kernels and returned by device functions.
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct Interval {
    pub lo: i32,
    pub hi: i32,
    pub wide: bool,
}

/// Struct literals; structs and tuples returned by `#[device]` functions (early and as
/// the final value, from branches, generic); tuple parameters; a returned tuple bound by a
/// pattern, by a type annotation and to one name.
#[kernel]
pub fn returned_values(
    x: &[i32],
    lo: &mut [i32],
    hi: &mut [i32],
    sum: &mut [i64],
    tag: &mut [u32],
) {
    let i = global_index();
    if i + 1 < x.len() {
        let s = ordered(x[i], x[i + 1]);
        let widened = widen(s, 10);
        let (q, r) = div_rem(widened.hi, 7);
        let pair = (q, r);
        let t: (i32, i32) = sorted_pair(pair);
        let m = sum_tag(t, widened);
        lo[i] = widened.lo;
        hi[i] = t.0 * 1000 + t.1;
        sum[i] = m.0 + width_plus(&widened, 1) as i64;
        tag[i] = m.1 + div_rem::<u32>(17, 5).1;
    }
}

/// A struct returned early or as the final value, built by struct literals.
#[device]
pub fn ordered(a: i32, b: i32) -> Interval {
    if a <= b {
        return Interval {
            lo: a,
            hi: b,
            wide: false,
        };
    }
    Interval {
        hi: a,
        lo: b,
        wide: false,
    }
}

/// A struct parameter returned changed.
#[device]
pub fn widen(s: Interval, by: i32) -> Interval {
    let mut out = s;
    out.lo -= by;
    out.hi += by;
    out.wide = out.hi - out.lo > 1000;
    out
}

/// A struct by reference, passed on as it is.
#[device]
pub fn width_plus(s: &Interval, k: i32) -> i32 {
    width(s) + k
}

/// A struct by reference, read in place.
#[device]
pub fn width(s: &Interval) -> i32 {
    s.hi - s.lo
}

/// A generic tuple result.
#[device]
pub fn div_rem<T: Int>(a: T, b: T) -> (T, T) {
    (a / b, a % b)
}

/// A tuple parameter, and a tuple result from branches.
#[device]
pub fn sorted_pair(p: (i32, i32)) -> (i32, i32) {
    let (a, b) = p;
    if a > b {
        (b, a)
    } else {
        p
    }
}

/// A tuple and a struct in, a tuple of other types out.
#[device]
pub fn sum_tag(t: (i32, i32), s: Interval) -> (i64, u32) {
    let total = t.0 as i64 + t.1 as i64 + s.lo as i64;
    (total, if s.wide { 1 } else { 0 })
}

pub fn returned_values_ref(
    x: &[i32],
    lo: &mut [i32],
    hi: &mut [i32],
    sum: &mut [i64],
    tag: &mut [u32],
) {
    for i in 0..x.len() - 1 {
        let (a, b) = (x[i].min(x[i + 1]), x[i].max(x[i + 1]));
        let (wlo, whi) = (a - 10, b + 10);
        let wide = whi - wlo > 1000;
        let (q, r) = (whi / 7, whi % 7);
        let (t0, t1) = if q > r { (r, q) } else { (q, r) };
        lo[i] = wlo;
        hi[i] = t0 * 1000 + t1;
        sum[i] = t0 as i64 + t1 as i64 + wlo as i64 + (whi - wlo + 1) as i64;
        tag[i] = u32::from(wide) + 2;
    }
}
