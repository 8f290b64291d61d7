//! Generic `DeviceCopy` structs and generic `#[device]` impl blocks: `Pair<T>` with
//! `impl<T> Pair<T>` methods, two instances (`Pair<f32>`, `Pair<u32>`) in one kernel, as
//! kernel parameters (slices and by value), locals, fields of other generic structs
//! (`Seg<T>`), parameters and results of generic device functions, struct literals with
//! inferred and explicit arguments, user traits and operators implemented generically,
//! const generic arrays (`Row<N>`) and two parameters (`KV<K, V>`). Each kernel's results
//! are checked against rustc running the same functions on the host; on the CPU simulator
//! always, on a GPU when there is one, and through libNVVM and nvJitLink to sm_90 PTX.

mod common;

use core::ops::Add;

use cudajit::prelude::*;
use cudajit::Stream;

/// Every element's float bits as rustc's.
fn same_bits(got: &[f32], want: &[f32], what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}[{i}]: cudajit {g}, rustc {w}"
        );
    }
    assert_eq!(got.len(), want.len());
}

/// A kernel's three tests: its check on the simulator and on a GPU (skipped without one),
/// and its sm_90 PTX, in registers (no local memory).
macro_rules! runs_everywhere {
    ($check:ident, $kernel:ident, $sim:ident, $gpu:ident, $ptx:ident) => {
        #[test]
        fn $sim() {
            $check(&Stream::simulator());
        }

        #[test]
        fn $gpu() {
            let Some(context) = common::gpu_or_skip() else {
                return;
            };
            std::env::set_var("CUDAJIT_FMA", "0");
            $check(&Stream::from_cuda(context.default_stream()));
        }

        #[test]
        fn $ptx() {
            let Some(ptx) = common::sm90_ptx_or_skip($kernel::KERNEL.captured()) else {
                return;
            };
            assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
        }
    };
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Pair<T> {
    pub a: T,
    pub b: T,
}

#[device]
impl<T: DeviceScalar + Add<Output = T>> Pair<T> {
    pub fn new(a: T, b: T) -> Self {
        Pair { a, b }
    }

    pub fn sum(&self) -> T {
        self.a + self.b
    }

    pub fn swap(self) -> Pair<T> {
        Pair {
            a: self.b,
            b: self.a,
        }
    }
}

/// A generic struct of a generic struct.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Seg<T> {
    pub p: Pair<T>,
    pub q: Pair<T>,
}

/// A const generic array field.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Row<const N: usize> {
    pub v: [f32; N],
}

/// Two parameters.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct KV<K, V> {
    pub key: K,
    pub value: V,
}

/// A user trait, implemented generically (with a default method).
#[device]
pub trait Count {
    fn count(&self) -> u32;
    fn twice(&self) -> u32 {
        self.count() * 2
    }
}

#[device]
impl<T: DeviceScalar + Add<Output = T>> Seg<T> {
    pub fn length(&self) -> T {
        self.p.sum() + self.q.sum()
    }

    pub fn flipped(self) -> Self {
        Seg {
            p: self.q.swap(),
            q: self.p,
        }
    }
}

#[device]
impl<T: DeviceScalar + Add<Output = T>> Add for Pair<T> {
    type Output = Pair<T>;
    fn add(self, o: Pair<T>) -> Pair<T> {
        Pair::new(self.a + o.a, self.b + o.b)
    }
}

#[device]
impl<T: DeviceScalar + Add<Output = T>> Count for Pair<T> {
    fn count(&self) -> u32 {
        2
    }
}

#[device]
impl<const N: usize> Count for Row<N> {
    fn count(&self) -> u32 {
        N as u32 + self.v.len() as u32
    }
}

#[device]
impl<const N: usize> Row<N> {
    pub fn total(&self) -> f32 {
        let mut acc = 0.0;
        for k in 0..N {
            acc += self.v[k];
        }
        acc
    }

    pub fn scaled(self, by: f32) -> Self {
        let mut out = self;
        for k in 0..N {
            out.v[k] = self.v[k] * by;
        }
        out
    }
}

#[device]
impl<K: DeviceScalar, V: DeviceScalar> KV<K, V> {
    pub fn value(&self) -> V {
        self.value
    }
}

#[device]
impl<T: DeviceScalar + Add<Output = T>> Pair<T> {
    /// A method taking a closure.
    pub fn apply<F: Fn(T) -> T>(self, f: F) -> Pair<T> {
        Pair::new(f(self.a), f(self.b))
    }
}

/// A generic function bounded by the user trait.
#[device]
pub fn counted<S: Count>(s: &S) -> u32 {
    s.count() + s.twice()
}

/// A generic result built from scalars.
#[device]
pub fn make<T: DeviceScalar + Add<Output = T>>(a: T, b: T) -> Pair<T> {
    Pair::<T> { a, b }
}

#[device]
pub fn total<T: DeviceScalar + Add<Output = T>>(ps: &[Pair<T>], start: T) -> T {
    let mut acc = start;
    for k in 0..ps.len() {
        acc = acc + ps[k].sum();
    }
    acc
}

#[kernel]
fn pairs(x: &[Pair<f32>], y: &mut [f32], z: &[Pair<u32>], w: &mut [u32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    let p: Pair<f32> = Pair::new(x[i].a, 2.0);
    y[i] = p.swap().sum() + x[i].sum() + total(x, 0.5);
    w[i] = Pair::<u32>::new(z[i].a, z[i].b).sum() + total(z, 1);
}

/// One element of `combined`: the kernel's and rustc's (on the host).
#[device]
pub fn combined_value(s: Seg<f32>, one: Pair<f32>, row: Row<4>, kv: KV<u32, f32>, i: usize) -> f32 {
    let flipped = s.flipped();
    let explicit = Pair::<f32> { a: 1.5, b: s.p.a };
    let added = explicit + one + make(s.q.a, 0.25);
    let doubled = added.apply(|v| v * 2.0 + 1.0);
    let arr = [doubled, one, explicit];
    let mut from_arr = 0.0;
    for k in 0..arr.len() {
        from_arr += arr[k].sum();
    }
    let m =
        (counted(&one) + doubled.twice() + Pair::<u32>::new(i as u32, 3).count() + counted(&row))
            as f32;
    s.length()
        + flipped.p.a
        + added.sum()
        + doubled.sum()
        + from_arr
        + m
        + row.total()
        + kv.value()
        + kv.key as f32
}

#[kernel]
fn combined(
    segs: &[Seg<f32>],
    one: Pair<f32>,
    rows: &[Row<4>],
    kvs: &[KV<u32, f32>],
    out: &mut [f32],
    rows_out: &mut [Row<4>],
) {
    let i = global_index();
    if i >= segs.len() {
        return;
    }
    out[i] = combined_value(segs[i], one, rows[i], kvs[i], i);
    rows_out[i] = rows[i].scaled(0.5);
}

fn host_combined(
    segs: &[Seg<f32>],
    one: Pair<f32>,
    rows: &[Row<4>],
    kvs: &[KV<u32, f32>],
) -> (Vec<f32>, Vec<Row<4>>) {
    let out = (0..segs.len())
        .map(|i| combined_value(segs[i], one, rows[i], kvs[i], i))
        .collect();
    let rows_out = rows.iter().map(|r| r.scaled(0.5)).collect();
    (out, rows_out)
}

fn check_combined(stream: &Stream) {
    let n = 29;
    let segs: Vec<Seg<f32>> = (0..n)
        .map(|i| Seg {
            p: Pair::new(i as f32 * 0.5, -1.25),
            q: Pair::new(3.0 - i as f32, i as f32 * 0.125),
        })
        .collect();
    let one = Pair::new(0.75f32, -2.5);
    let rows: Vec<Row<4>> = (0..n)
        .map(|i| Row {
            v: [i as f32, 1.0, -0.5 * i as f32, 2.25],
        })
        .collect();
    let kvs: Vec<KV<u32, f32>> = (0..n)
        .map(|i| KV {
            key: i as u32 * 7,
            value: i as f32 * -0.375,
        })
        .collect();
    let d_segs = stream.clone_htod(&segs).unwrap();
    let d_rows = stream.clone_htod(&rows).unwrap();
    let d_kvs = stream.clone_htod(&kvs).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    let mut rows_out = stream.alloc_zeros::<Row<4>>(n).unwrap();
    combined::launch(
        stream,
        LaunchConfig::for_elements(n),
        &d_segs,
        one,
        &d_rows,
        &d_kvs,
        &mut out,
        &mut rows_out,
    )
    .unwrap();
    let (want, want_rows) = host_combined(&segs, one, &rows, &kvs);
    same_bits(&stream.clone_dtoh(&out).unwrap(), &want, "out");
    assert_eq!(stream.clone_dtoh(&rows_out).unwrap(), want_rows);
}

runs_everywhere!(
    check_combined,
    combined,
    combined_on_the_simulator,
    combined_on_the_gpu,
    combined_compiles_to_ptx
);

/// A literal of an instance the program names nowhere: no layout rustc computed.
#[kernel]
fn unnamed_instance(out: &mut [i64]) {
    let i = global_index();
    if i < out.len() {
        let p = Pair { a: i as i64, b: 2 };
        out[i] = p.a + p.b;
    }
}

#[test]
fn an_instance_the_program_never_names_is_an_error_naming_the_fix() {
    let stream = Stream::simulator();
    let mut out = stream.alloc_zeros::<i64>(4).unwrap();
    let error = unnamed_instance::launch(&stream, LaunchConfig::for_elements(4), &mut out)
        .expect_err("no layout of `Pair<i64>`");
    let text = error.to_string();
    assert!(
        text.contains("no instance of the generic struct `Pair`")
            && text.contains("give the arguments, `Pair::<f32> { .. }`"),
        "{text}"
    );
}

/// The same literal with its arguments, or a typed local: the layout is named, so it runs.
#[kernel]
fn named_instance(out: &mut [i64]) {
    let i = global_index();
    if i < out.len() {
        let p = Pair::<i64> { a: i as i64, b: 2 };
        let q: Pair<i16> = Pair { a: 1, b: -1 };
        out[i] = p.a + p.b + (q.a + q.b) as i64;
    }
}

#[test]
fn an_instance_named_by_its_literal_runs() {
    let stream = Stream::simulator();
    let mut out = stream.alloc_zeros::<i64>(4).unwrap();
    named_instance::launch(&stream, LaunchConfig::for_elements(4), &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![2, 3, 4, 5]);
}

fn host_pairs(x: &[Pair<f32>], z: &[Pair<u32>]) -> (Vec<f32>, Vec<u32>) {
    let y = (0..x.len())
        .map(|i| {
            let p: Pair<f32> = Pair::new(x[i].a, 2.0);
            p.swap().sum() + x[i].sum() + total(x, 0.5)
        })
        .collect();
    let w = (0..x.len())
        .map(|i| Pair::<u32>::new(z[i].a, z[i].b).sum() + total(z, 1))
        .collect();
    (y, w)
}

fn check_pairs(stream: &Stream) {
    let n = 37;
    let x: Vec<Pair<f32>> = (0..n)
        .map(|i| Pair::new(i as f32 * 0.25 - 3.0, 1.5 - i as f32 * 0.125))
        .collect();
    let z: Vec<Pair<u32>> = (0..n)
        .map(|i| Pair::new(i as u32 * 3, 100 - i as u32))
        .collect();
    let dx = stream.clone_htod(&x).unwrap();
    let dz = stream.clone_htod(&z).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    let mut w = stream.alloc_zeros::<u32>(n).unwrap();
    pairs::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &mut y,
        &dz,
        &mut w,
    )
    .unwrap();
    let got = (
        stream.clone_dtoh(&y).unwrap(),
        stream.clone_dtoh(&w).unwrap(),
    );
    let want = host_pairs(&x, &z);
    same_bits(&got.0, &want.0, "y");
    assert_eq!(got.1, want.1);
}

runs_everywhere!(
    check_pairs,
    pairs,
    pairs_on_the_simulator,
    pairs_on_the_gpu,
    pairs_compile_to_ptx
);

/// A generic kernel over the instance's parameter: it names only `Pair<T>`, whose layout
/// only an instance has.
#[kernel]
fn generic_kernel<T: DeviceScalar + Add<Output = T>>(x: &[Pair<T>], y: &mut [T]) {
    let i = global_index();
    if i < x.len() {
        y[i] = x[i].sum();
    }
}

#[test]
fn a_generic_kernel_over_pair_t_is_an_error_naming_the_fix() {
    let stream = Stream::simulator();
    let x = stream.clone_htod(&[Pair::new(1.0f32, 2.0)]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(1).unwrap();
    let text = generic_kernel::launch(&stream, LaunchConfig::for_elements(1), &x, &mut y)
        .expect_err("only `Pair<T>` is named")
        .to_string();
    assert!(
        text.contains("no layout for `Pair<f32>`") && text.contains("let p: Pair<f32>"),
        "{text}"
    );
}
