//! `#[device]` impl blocks of `DeviceCopy` structs: methods taking `self`, `&self` and
//! `&mut self`, associated functions (`Vec3::new`), and the operators (`Add`, `Sub`, `Mul`
//! with `Self` and `f32` on the right, `Neg`, `AddAssign`, `MulAssign<f32>`), on the CPU
//! simulator and the GPU, against the same impls run on the host; and the PTX: every
//! method inlined, no call and no local memory.

use cudajit::prelude::*;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub};

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Vec3 {
    pub fn new(x: f32, y: f32, z: f32) -> Self {
        Self { x, y, z }
    }

    pub fn zero() -> Self {
        Self::new(0.0, 0.0, 0.0)
    }

    pub fn dot(&self, other: Vec3) -> f32 {
        self.x * other.x + self.y * other.y + self.z * other.z
    }

    pub fn length(&self) -> f32 {
        self.dot(*self).sqrt()
    }

    /// Named like a scalar method: the struct's own wins on a struct.
    pub fn abs(self) -> Vec3 {
        Vec3::new(self.x.abs(), self.y.abs(), self.z.abs())
    }

    /// Writes the receiver in place.
    pub fn normalize(&mut self) {
        let length = self.length();
        if length > 0.0 {
            let inverse = 1.0 / length;
            self.x *= inverse;
            self.y *= inverse;
            self.z *= inverse;
        }
    }

    /// By value, with a `mut` copy and another method called on it.
    pub fn clamped(mut self, limit: f32) -> Vec3 {
        if self.length() > limit {
            self.normalize();
            self *= limit;
        }
        self
    }
}

#[device]
impl Add for Vec3 {
    type Output = Vec3;
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

#[device]
impl Sub for Vec3 {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

#[device]
impl Mul<f32> for Vec3 {
    type Output = Vec3;
    fn mul(self, s: f32) -> Vec3 {
        Vec3::new(self.x * s, self.y * s, self.z * s)
    }
}

/// Component-wise: `Mul` with `Self` on the right beside `Mul<f32>`.
#[device]
impl Mul for Vec3 {
    type Output = Vec3;
    fn mul(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x * o.x, self.y * o.y, self.z * o.z)
    }
}

#[device]
impl Neg for Vec3 {
    type Output = Vec3;
    fn neg(self) -> Vec3 {
        Vec3::new(-self.x, -self.y, -self.z)
    }
}

#[device]
impl AddAssign for Vec3 {
    fn add_assign(&mut self, o: Vec3) {
        self.x += o.x;
        self.y += o.y;
        self.z += o.z;
    }
}

#[device]
impl MulAssign<f32> for Vec3 {
    fn mul_assign(&mut self, s: f32) {
        self.x *= s;
        self.y *= s;
        self.z *= s;
    }
}

/// A device function that takes a struct by `&mut` and calls a method on it.
#[device]
fn damp(v: &mut Vec3, factor: f32) {
    *v *= factor;
    v.normalize();
}

/// One step of particles under gravity, written with the struct's methods and operators.
#[kernel]
fn step(dt: f32, pos: &[Vec3], vel: &mut [Vec3], out: &mut [Vec3], scalars: &mut [f32]) {
    let i = global_index();
    if i < pos.len() {
        let p = pos[i];
        let mut v = vel[i];
        let gravity = Vec3::new(0.0, -9.8, 0.0);
        v += gravity * dt;
        let moved = p + v * dt - Vec3::zero();
        let mut direction = moved;
        direction.normalize();
        scalars[2 * i] = moved.length() + (-direction).dot(direction) + (p * v).abs().x;
        let mut damped = v;
        damp(&mut damped, 0.5);
        scalars[2 * i + 1] = damped.dot(v.clamped(2.0));
        out[i] = moved;
        vel[i] = v;
        vel[i] *= 0.5;
        vel[i] += direction;
    }
}

/// A local array of structs: built from one value, its elements written whole, by field,
/// by operator and by `&mut self` method, and read back.
#[kernel]
fn tally(points: &[Vec3], out: &mut [Vec3], sums: &mut [f32]) {
    let i = global_index();
    if i < out.len() {
        let mut bins = [Vec3::zero(); 4];
        for k in 0..4 {
            bins[k] = points[(i + k) % points.len()] * (k as f32 + 1.0);
        }
        bins[1].x += 1.0;
        let first = bins[0];
        bins[2] += first;
        bins[3].normalize();
        let mut total = Vec3::zero();
        for bin in bins {
            total += bin;
        }
        out[i] = total;
        sums[i] = bins[3].length() + bins[1].dot(bins[2]) + bins.len() as f32;
    }
}

fn tally_on_host(points: &[Vec3], out: &mut [Vec3], sums: &mut [f32]) {
    for i in 0..out.len() {
        let mut bins = [Vec3::zero(); 4];
        for k in 0..4 {
            bins[k] = points[(i + k) % points.len()] * (k as f32 + 1.0);
        }
        bins[1].x += 1.0;
        let first = bins[0];
        bins[2] += first;
        bins[3].normalize();
        let mut total = Vec3::zero();
        for bin in bins {
            total += bin;
        }
        out[i] = total;
        sums[i] = bins[3].length() + bins[1].dot(bins[2]) + bins.len() as f32;
    }
}

fn tally_matches_the_host(stream: &cudajit::Stream) {
    let n = 64;
    let points: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(i as f32 * 0.25, 2.0 - (i % 9) as f32, (i % 4) as f32))
        .collect();
    let dpoints = stream.clone_htod(&points).unwrap();
    let mut dout = stream.alloc_zeros::<Vec3>(n).unwrap();
    let mut dsums = stream.alloc_zeros::<f32>(n).unwrap();
    tally::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dpoints,
        &mut dout,
        &mut dsums,
    )
    .unwrap();
    let mut out_host = vec![Vec3::zero(); n];
    let mut sums_host = vec![0.0f32; n];
    tally_on_host(&points, &mut out_host, &mut sums_host);
    let out = stream.clone_dtoh(&dout).unwrap();
    let sums = stream.clone_dtoh(&dsums).unwrap();
    for i in 0..n {
        assert!(
            close3(out[i], out_host[i]),
            "out[{i}]: {:?} != {:?}",
            out[i],
            out_host[i]
        );
        assert!(
            close(sums[i], sums_host[i]),
            "sums[{i}]: {} != {}",
            sums[i],
            sums_host[i]
        );
    }
}

#[test]
fn local_arrays_of_structs_run_on_the_simulator() {
    tally_matches_the_host(&cudajit::Stream::simulator());
}

#[test]
fn local_arrays_of_structs_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    tally_matches_the_host(&stream);
}

/// The host's step: the same impls, run by rustc's code.
fn step_on_host(dt: f32, pos: &[Vec3], vel: &mut [Vec3], out: &mut [Vec3], scalars: &mut [f32]) {
    for i in 0..pos.len() {
        let p = pos[i];
        let mut v = vel[i];
        v += Vec3::new(0.0, -9.8, 0.0) * dt;
        let moved = p + v * dt - Vec3::zero();
        let mut direction = moved;
        direction.normalize();
        scalars[2 * i] = moved.length() + (-direction).dot(direction) + (p * v).abs().x;
        let mut damped = v;
        damp(&mut damped, 0.5);
        scalars[2 * i + 1] = damped.dot(v.clamped(2.0));
        out[i] = moved;
        vel[i] = v;
        vel[i] *= 0.5;
        vel[i] += direction;
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * (1.0 + a.abs().max(b.abs()))
}

fn close3(a: Vec3, b: Vec3) -> bool {
    close(a.x, b.x) && close(a.y, b.y) && close(a.z, b.z)
}

fn step_matches_the_host(stream: &cudajit::Stream) {
    let n = 100;
    let pos: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(i as f32 * 0.5 - 20.0, (i % 7) as f32, 1.0 - (i % 3) as f32))
        .collect();
    let vel: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new((i % 5) as f32 - 2.0, 3.0, i as f32 * 0.1))
        .collect();
    let dpos = stream.clone_htod(&pos).unwrap();
    let mut dvel = stream.clone_htod(&vel).unwrap();
    let mut dout = stream.alloc_zeros::<Vec3>(n).unwrap();
    let mut dscalars = stream.alloc_zeros::<f32>(2 * n).unwrap();
    step::launch(
        stream,
        LaunchConfig::for_elements(n),
        0.01,
        &dpos,
        &mut dvel,
        &mut dout,
        &mut dscalars,
    )
    .unwrap();
    let mut vel_host = vel.clone();
    let mut out_host = vec![Vec3::zero(); n];
    let mut scalars_host = vec![0.0f32; 2 * n];
    step_on_host(0.01, &pos, &mut vel_host, &mut out_host, &mut scalars_host);
    let out = stream.clone_dtoh(&dout).unwrap();
    let vel = stream.clone_dtoh(&dvel).unwrap();
    let scalars = stream.clone_dtoh(&dscalars).unwrap();
    for i in 0..n {
        assert!(
            close3(out[i], out_host[i]),
            "out[{i}]: {:?} != {:?}",
            out[i],
            out_host[i]
        );
        assert!(
            close3(vel[i], vel_host[i]),
            "vel[{i}]: {:?} != {:?}",
            vel[i],
            vel_host[i]
        );
    }
    for i in 0..2 * n {
        assert!(
            close(scalars[i], scalars_host[i]),
            "scalars[{i}]: {} != {}",
            scalars[i],
            scalars_host[i]
        );
    }
}

#[test]
fn methods_and_operators_of_structs_run_on_the_simulator() {
    step_matches_the_host(&cudajit::Stream::simulator());
}

#[test]
fn methods_and_operators_of_structs_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    step_matches_the_host(&stream);
}

/// The NVVM writer's side: methods and operators are device functions the call inlines,
/// so the release-build PTX of `step` has neither a call nor local memory (the structs
/// live in registers, as `float3` arithmetic does in CUDA C++); nor has `tally`'s, whose
/// array of structs is indexed by constants once its loops are unrolled.
#[test]
fn methods_and_operators_inline_without_local_memory() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if cudajit::codegen::toolchain::Toolchain::global().is_err()
        && std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1")
    {
        eprintln!("skipped: no NVIDIA toolchain (run scripts/test.sh to install it)");
        return;
    }
    let options = CompileOptions {
        bounds_checks: false,
        ..CompileOptions::default()
    };
    for kernel in [&step::KERNEL, &tally::KERNEL] {
        let ptx = linked_ptx(
            kernel.captured(),
            &cudajit::Specialization::default(),
            cudajit::Arch::SM_90,
            &options,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
        assert!(
            !ptx.contains(".local"),
            "{}: local memory:\n{ptx}",
            kernel.name()
        );
        assert!(
            !ptx.contains("call.uni"),
            "{}: a call left:\n{ptx}",
            kernel.name()
        );
        assert!(
            ptx.contains("sqrt.rn.f32"),
            "{}: no `length`'s square root:\n{ptx}",
            kernel.name()
        );
    }
}
