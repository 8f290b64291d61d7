//! Expressions: one example per row of the table's "Expressions" group.

use cudajit::prelude::*;

use super::items::{Pair, Vec2};

const SCALE: f32 = 0.5;

#[device]
pub fn literals(x: &[f32], i: usize) -> f64 {
    let a = 0x1f_u32 + 0b101 + 0o17 + 1_000 + 7u32;
    let b = 2.5e-1f32 + 1.0 + 3f32 + 1e1;
    let t = true as u32 + false as u32;
    (a + t + i as u32) as f64 + (b * x[i]) as f64
}

#[device]
pub fn paths(x: &[f32], i: usize) -> f64 {
    let local = x[i];
    (local * SCALE) as f64 + u32::MAX as f64 + i8::MIN as f64 + i as f64
}

#[device]
pub fn std_constants(x: &[f32], i: usize) -> f64 {
    let a = core::f32::consts::PI * x[i] + std::f64::consts::LN_2 as f32;
    let b = f32::EPSILON + f32::MAX / 2.0e38 + f64::MIN_POSITIVE as f32;
    (a + b) as f64 + i16::MAX as f64 + i as f64
}

#[device]
pub fn arithmetic(x: &[f32], i: usize) -> f64 {
    let v = x[i];
    let n = i as i32 - 7;
    let f = v + 2.0 * v - v / 3.0 + v % 1.5;
    let k = n + 3 * n - n / 2 + n % 3;
    f as f64 + k as f64
}

#[device]
pub fn integer_wrapping(x: &[f32], i: usize) -> f64 {
    // Overflowing arithmetic is written with wrapping methods, so the host (a debug
    // build, which panics on overflow) computes what the device computes.
    let a = (i as u8).wrapping_mul(97).wrapping_add(200);
    let b = (x[i] as i8).wrapping_sub(120);
    a as f64 + b as f64
}

#[device]
pub fn bitwise(x: &[f32], i: usize) -> f64 {
    let a = (i as u32).wrapping_mul(2654435761) % 1024;
    let b = (x[i] * 4.0) as i32;
    let r = (a & 0xf0) | (a ^ 0x55) + (a << 3) + (a >> 2) + (!a & 7);
    let s = (b >> 1) + (b << 2) + (b & 3) + !b;
    r as f64 + s as f64
}

#[device]
pub fn comparisons(x: &[f32], i: usize) -> f64 {
    let v = x[i];
    let n = i as i32;
    let bits = (v < 0.0) as u32
        + 2 * (v <= 0.75) as u32
        + 4 * (v > 1.5) as u32
        + 8 * (v >= -1.5) as u32
        + 16 * (v == 0.0) as u32
        + 32 * (v != 3.0) as u32
        + 64 * (n < 5) as u32
        + 128 * (n == 3) as u32;
    bits as f64
}

#[device]
pub fn lazy_boolean(x: &[f32], i: usize) -> f64 {
    // `i < x.len() && x[i] ..` must not read past the end: `&&` short-circuits.
    let j = i + 8;
    let a = j < x.len() && x[j] > 0.0;
    let b = j >= x.len() || x[j] < 0.0;
    (a as u32 + 2 * b as u32) as f64
}

#[device]
pub fn unary(x: &[f32], i: usize) -> f64 {
    let v = -x[i];
    let n = -(i as i64);
    let b = !(v > 0.0);
    let m = !(i as u16);
    v as f64 + n as f64 + b as u32 as f64 + m as f64
}

#[device]
pub fn assignment(x: &[f32], i: usize) -> f64 {
    let mut a = x[i];
    a = a * 2.0;
    let mut n = i as u32;
    n += 3;
    n -= 1;
    n *= 5;
    n /= 2;
    n %= 7;
    n <<= 2;
    n >>= 1;
    n |= 8;
    n &= 13;
    n ^= 6;
    a += 1.0;
    a -= 0.25;
    a *= 3.0;
    a /= 2.0;
    a as f64 + n as f64
}

#[device]
pub fn casts(x: &[f32], i: usize) -> f64 {
    let v = x[i] * 100.0;
    let a = v as i8;
    let b = v as u8;
    let c = (i as i32 - 8) as u64;
    let d = (v > 0.0) as u8;
    let e = i as f32 / 3.0;
    let f = (v * 1.0e9) as i32;
    let g = f64::NAN as u32;
    a as f64 + b as f64 + (c % 1000) as f64 + d as f64 + e as f64 + f as f64 + g as f64
}

#[device]
pub fn parentheses(x: &[f32], i: usize) -> f64 {
    let v = (x[i] + 1.0) * (2.0 - (x[i] - i as f32));
    v as f64
}

#[device]
pub fn block_value(x: &[f32], i: usize) -> f64 {
    let v = {
        let t = x[i] * 2.0;
        t + 1.0
    };
    v as f64 + i as f64
}

#[device]
pub fn trusted_block(x: &[f32], i: usize) -> f64 {
    #[allow(unused_unsafe)]
    let v = unsafe { x[i] + 1.0 };
    v as f64 + i as f64
}

#[device]
pub fn if_value(x: &[f32], i: usize) -> f64 {
    let v = if x[i] > 1.0 {
        1.0
    } else if x[i] < -1.0 {
        -1.0
    } else {
        x[i]
    };
    v as f64 + i as f64
}

#[device]
pub fn if_struct_value(x: &[f32], i: usize) -> f64 {
    let near = Vec2::new(x[i], 1.0);
    let far = Vec2::new(2.0, x[i]);
    let p = if x[i] > 0.5 { near } else { far };
    let q = match i % 3 {
        0 => near,
        1 => Vec2::new(0.25, 0.75),
        _ => far,
    };
    let r = {
        let s = p + q;
        s
    };
    let w = if x[i] > 0.0 {
        [x[i], 0.5]
    } else {
        [0.25f32; 2]
    };
    (p.x + q.y * 2.0 + r.length_squared() + w[0] * 3.0 + w[1]) as f64
}

#[device]
pub fn match_value(x: &[f32], i: usize) -> f64 {
    let v = match i % 5 {
        0 => x[i],
        1 | 2 => -x[i],
        _ => 0.5,
    };
    v as f64
}

#[device]
pub fn loop_value(x: &[f32], i: usize) -> f64 {
    let mut k = i;
    let found = loop {
        if k >= x.len() {
            break 99;
        }
        if x[k] > 2.0 {
            break k;
        }
        k += 1;
    };
    found as f64
}

#[device]
pub fn while_loop(x: &[f32], i: usize) -> f64 {
    let mut n = i as u32 + 1;
    let mut steps = 0u32;
    while n != 1 && steps < 100 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps as f64 + x[i] as f64
}

#[device]
pub fn for_range(x: &[f32], i: usize) -> f64 {
    let mut acc = 0.0f32;
    for k in 0..i {
        acc += x[k];
    }
    for k in 1..=3 {
        acc += k as f32;
    }
    for k in (0..x.len()).rev().step_by(3) {
        acc -= x[k] * 0.5;
    }
    acc as f64
}

#[device]
pub fn labelled_break_continue(x: &[f32], i: usize) -> f64 {
    let mut count = 0u32;
    'outer: for a in 0..6usize {
        for b in 0..6usize {
            if b > a {
                continue 'outer;
            }
            if a * b > i {
                break 'outer;
            }
            if (a + b) % 2 == 0 {
                continue;
            }
            count += 1;
        }
    }
    count as f64 + x[i] as f64
}

#[device]
pub fn early_return(x: &[f32], i: usize) -> f64 {
    if x[i] < 0.0 {
        return -1.0;
    }
    if i > 10 {
        return 10.0;
    }
    x[i] as f64
}

#[device]
pub fn twice_of(v: f32) -> f32 {
    v * 2.0
}

#[device]
pub fn calls(x: &[f32], i: usize) -> f64 {
    (twice_of(x[i]) + twice_of(twice_of(i as f32))) as f64
}

#[device]
pub fn generic_scale<T: Float>(v: T, k: T) -> T {
    v * k + T::one()
}

#[device]
pub fn windowed<const N: usize>(x: &[f32], i: usize) -> f32 {
    let mut s = 0.0f32;
    for k in 0..N {
        s += x[(i + k) % x.len()];
    }
    s
}

#[device]
pub fn generic_calls(x: &[f32], i: usize) -> f64 {
    let a = generic_scale(x[i], 3.0f32);
    let b = generic_scale::<f64>(i as f64, 0.5);
    let c = windowed::<3>(x, i);
    a as f64 + b + c as f64
}

#[device]
pub fn method_calls(x: &[f32], i: usize) -> f64 {
    let a = Vec2::new(x[i], i as f32);
    let b = Vec2::new(1.0, -2.0);
    (a.dot(&b) + a.scaled(2.0).length_squared()) as f64
}

#[device]
pub fn path_calls(x: &[f32], i: usize) -> f64 {
    let a = Vec2::new(x[i], 1.0);
    let b = Vec2::new(i as f32, 2.0);
    (Vec2::dot(&a, &b) + f32::max(x[i], 0.5) + f32::sqrt(i as f32) + u32::min(i as u32, 4) as f32)
        as f64
}

#[device]
pub fn fields(x: &[f32], i: usize) -> f64 {
    let mut p = Pair {
        a: x[i],
        b: i as u32,
    };
    p.a *= 2.0;
    p.b += 1;
    (p.a + p.b as f32) as f64
}

#[device]
pub fn tuples(x: &[f32], i: usize) -> f64 {
    let mut t = (x[i], i as u32, true);
    t.1 += 2;
    let u = t;
    let (a, b, c) = u;
    (a * 2.0 + b as f32 + c as u32 as f32 + t.0) as f64
}

#[device]
pub fn arrays(x: &[f32], i: usize) -> f64 {
    let a = [x[i], 1.0, 2.0];
    let mut b = [0u32; 4];
    b[i % 4] = 7;
    b[3] += a.len() as u32;
    (a[0] + a[2] + b[3] as f32 + b[i % 4] as f32) as f64
}

#[device]
pub fn indexing(x: &[f32], i: usize) -> f64 {
    let j = (i + 3) % x.len();
    (x[i] + x[j] + x[x.len() - 1]) as f64
}

#[device]
pub fn struct_literals(x: &[f32], i: usize) -> f64 {
    let a = x[i];
    let b = i as u32;
    let p = Pair { a, b };
    let q = Pair { b: 3, a: p.a + 1.0 };
    let v = Vec2 { x: q.a, y: 2.0 };
    (p.a + q.b as f32 + v.x * v.y) as f64
}

#[device]
pub fn closures(x: &[f32], i: usize) -> f64 {
    let k = x[i];
    let affine = |v: f32| v * k + 1.0;
    let twice = |v| affine(affine(v));
    let mut hits = 0u32;
    let mut count = |v: f32| {
        if v > 0.0 {
            hits += 1;
        }
    };
    count(k);
    count(1.0);
    (twice(i as f32) + hits as f32) as f64
}

#[device]
pub fn apply<F: Fn(f32) -> f32>(v: f32, f: F) -> f32 {
    f(v) + f(1.0)
}

#[device]
pub fn closures_passed(x: &[f32], i: usize) -> f64 {
    let k = x[i];
    let scaled = |v: f32| v * k;
    (apply(i as f32, scaled) + apply(2.0, |v| v - k)) as f64
}

#[device]
pub fn references(x: &[f32], i: usize) -> f64 {
    let mut acc = Vec2::new(x[i], 2.0);
    acc.flip();
    let p = Vec2::new(acc.x, 1.0);
    let q = Vec2::new(1.0, i as f32);
    (acc.y + p.dot(&q)) as f64
}

#[device]
pub fn dereference(x: &[f32], i: usize) -> f64 {
    let mut acc = 0.0f32;
    for v in x.iter() {
        acc += *v;
    }
    if let Some(v) = x.get(i + 1) {
        acc += *v;
    }
    acc as f64
}

#[device]
pub fn apply_on<F: Fn(f32) -> f32>(v: f32, f: F) -> f32 {
    apply(v, &f) + apply(v * 2.0, f)
}

#[device]
pub fn closures_passed_on(x: &[f32], i: usize) -> f64 {
    let k = x[i];
    (apply_on(i as f32, |v| v * k) + apply_on(1.0, |v: f32| v - k)) as f64
}

#[device]
pub fn halve(n: u32) -> Option<u32> {
    if n % 2 == 0 {
        Some(n / 2)
    } else {
        None
    }
}

#[device]
pub fn quarter(n: u32) -> Option<u32> {
    let h = halve(n)?;
    halve(h)
}

#[device]
pub fn question_mark(x: &[f32], i: usize) -> f64 {
    quarter(i as u32).unwrap_or(100) as f64 + x[i] as f64
}

#[device]
pub fn assert_macros(x: &[f32], i: usize) -> f64 {
    assert!(i < x.len());
    assert_eq!(x.len(), 16, "the inputs are 16");
    assert_ne!(i, 99);
    debug_assert!(x[i] == x[i]);
    x[i] as f64
}

#[device]
pub fn destructuring_assignment(x: &[f32], i: usize) -> f64 {
    let (mut lo, mut hi) = (x[i], i as f32);
    if lo > hi {
        (lo, hi) = (hi, lo);
    }
    (lo * 10.0 + hi) as f64
}

#[device]
pub fn while_let(x: &[f32], i: usize) -> f64 {
    let mut j = i;
    while let Some(v) = x.get(j) {
        if *v < 0.0 {
            break;
        }
        j += 1;
    }
    j as f64
}

#[device]
pub fn if_let(x: &[f32], i: usize) -> f64 {
    if let Some(v) = x.get(i + 12) {
        *v as f64
    } else if let Some(h) = halve(i as u32) {
        h as f64
    } else {
        -1.0
    }
}

#[device]
pub fn print_macros(x: &[f32], i: usize) -> f64 {
    // Compiled, never run: the test's output stays quiet.
    if i == 99 {
        println!("{} {:.2} {:x} {:?}", i, x[i], i, x[i]);
        print!("{:4}", i);
    }
    x[i] as f64
}

group!(expressions, ROWS {
    "expr.literal" => literals,
    "expr.path" => paths,
    "expr.std-constant" => std_constants,
    "expr.arithmetic" => arithmetic,
    "expr.integer-overflow" => integer_wrapping,
    "expr.bitwise" => bitwise,
    "expr.comparison" => comparisons,
    "expr.lazy-boolean" => lazy_boolean,
    "expr.negation" => unary,
    "expr.assignment" => assignment,
    "expr.cast" => casts,
    "expr.grouped" => parentheses,
    "expr.block" => block_value,
    "expr.unsafe-block" => trusted_block,
    "expr.if" => if_value,
    "expr.if-struct" => if_struct_value,
    "expr.match" => match_value,
    "expr.loop-break-value" => loop_value,
    "expr.while" => while_loop,
    "expr.while-let" => while_let,
    "expr.if-let" => if_let,
    "expr.print" => print_macros,
    "expr.for-range" => for_range,
    "expr.label" => labelled_break_continue,
    "expr.return" => early_return,
    "expr.call" => calls,
    "expr.call-generic" => generic_calls,
    "expr.method-call" => method_calls,
    "expr.path-call" => path_calls,
    "expr.field" => fields,
    "expr.tuple" => tuples,
    "expr.array" => arrays,
    "expr.index" => indexing,
    "expr.struct" => struct_literals,
    "expr.closure" => closures,
    "expr.closure-argument" => closures_passed,
    "expr.closure-pass-on" => closures_passed_on,
    "expr.reference" => references,
    "expr.dereference" => dereference,
    "expr.try" => question_mark,
    "expr.assert" => assert_macros,
    "expr.destructuring-assignment" => destructuring_assignment,
});
