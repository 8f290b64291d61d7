//! rustc as cudajit's oracle.
//!
//! The build script writes random programs (`cudajit-oracle-generator`) into this crate
//! twice from one text: as `#[kernel]`s, which cudajit compiles and runs on its CPU
//! simulator or a GPU, and as host functions, which rustc compiles and [`run_host`] runs
//! thread by thread (a barrier is the boundary between two phases). [`compare`] then asks
//! for bit-for-bit agreement (floats too: GPU runs compile without FMA contraction; NaNs
//! agree with any NaN, since Rust does not fix a NaN's payload). The simulator and the
//! NVVM back end share cudajit's front end, so their agreement with each other cannot see
//! a front-end bug; agreement with rustc can.
//!
//! The crate is built without overflow checks (see the workspace's `Cargo.toml`), so host
//! integer arithmetic wraps as the kernel language's does.

pub mod host_rt;
mod pt;
pub mod tables;
mod wr;

use cudajit::{Buffer, LaunchConfig, Stream};
pub use cudajit_oracle_generator as generator;
use generator::ast::{COUNTERS, F32_SLOTS, F64_SLOTS, INT_SLOTS};
use generator::rng::Rng;
pub use pt::Pt;
pub use wr::Wr;

/// The scalar parameters every generated kernel takes.
#[derive(Clone, Debug)]
pub struct Args {
    pub n: u32,
    pub s_i32: i32,
    pub s_u32: u32,
    pub s_i64: i64,
    pub s_u64: u64,
    pub s_f32: f32,
    pub s_f64: f64,
    pub s_b: bool,
}

/// Everything a generated kernel reads.
#[derive(Clone, Debug)]
pub struct Inputs {
    pub args: Args,
    pub in_i8: Vec<i8>,
    pub in_u16: Vec<u16>,
    pub in_i32: Vec<i32>,
    pub in_u32: Vec<u32>,
    pub in_i64: Vec<i64>,
    pub in_u64: Vec<u64>,
    pub in_f32: Vec<f32>,
    pub in_f64: Vec<f64>,
}

/// Everything a generated kernel writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    pub out_i: Vec<i64>,
    pub out_f32: Vec<f32>,
    pub out_f64: Vec<f64>,
    pub cnt: Vec<u32>,
}

/// The kernel's slices in device memory (GPU or simulator).
pub struct DeviceData {
    pub in_i8: Buffer<i8>,
    pub in_u16: Buffer<u16>,
    pub in_i32: Buffer<i32>,
    pub in_u32: Buffer<u32>,
    pub in_i64: Buffer<i64>,
    pub in_u64: Buffer<u64>,
    pub in_f32: Buffer<f32>,
    pub in_f64: Buffer<f64>,
    pub out_i: Buffer<i64>,
    pub out_f32: Buffer<f32>,
    pub out_f64: Buffer<f64>,
    pub cnt: Buffer<u32>,
}

pub type LaunchFn = fn(&Stream, LaunchConfig, &Args, &mut DeviceData) -> Result<(), cudajit::Error>;

/// One phase of one thread of a program, as rustc compiled it.
pub type HostFn = fn(
    usize,
    u32,
    i32,
    u32,
    i64,
    u64,
    f32,
    f64,
    bool,
    &[i8],
    &[u16],
    &[i32],
    &[u32],
    &[i64],
    &[u64],
    &[f32],
    &[f64],
    &mut [i64],
    &mut [f32],
    &mut [f64],
    &mut [u32],
);

/// A generated program, compiled both ways.
pub struct Program {
    pub seed: u64,
    pub grid: u32,
    pub block: u32,
    pub active: u32,
    pub phases: usize,
    pub launch: LaunchFn,
    pub host: HostFn,
    /// The program's text: its device functions and its kernel.
    pub source: &'static str,
}

impl Program {
    pub fn threads(&self) -> usize {
        (self.grid * self.block) as usize
    }
}

include!(concat!(env!("OUT_DIR"), "/programs.rs"));

/// Initial values of the atomic counters: the identity of each counter's operation.
fn counters() -> Vec<u32> {
    // add, or, xor: 0; and, min: all ones; max: 0.
    vec![0, 0, 0, u32::MAX, u32::MAX, 0]
}

fn pick<T: Copy>(rng: &mut Rng, edges: &[T], random: T) -> T {
    if rng.chance(30) {
        *rng.pick(edges)
    } else {
        random
    }
}

impl Inputs {
    /// The inputs of `program`: random values of each type with their edge values mixed in
    /// (MIN, MAX, 0, -1, infinities, NaN, -0.0, subnormals), from its seed.
    pub fn new(program: &Program) -> Inputs {
        let mut rng = Rng::new(program.seed ^ 0x5eed_0f1a_7a00);
        let n = program.threads();
        let f32s = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN_POSITIVE,
            1.0e-40,
            0.5,
        ];
        let f64s = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
            1.0e-310,
            0.5,
        ];
        let f32_value = |rng: &mut Rng| {
            let random = (rng.next_u64() as i64 % 2_000_000) as f32 / 1024.0;
            pick(rng, &f32s, random)
        };
        let in_f32 = (0..n).map(|_| f32_value(&mut rng)).collect();
        let f64_value = |rng: &mut Rng| {
            let random = (rng.next_u64() as i64 % 2_000_000_000) as f64 / 4096.0;
            pick(rng, &f64s, random)
        };
        let in_f64 = (0..n).map(|_| f64_value(&mut rng)).collect();
        macro_rules! ints {
            ($t:ty) => {
                (0..n)
                    .map(|_| {
                        let random = rng.next_u64() as $t;
                        let small = (rng.below(17) as i64 - 8) as $t;
                        let edges = [
                            <$t>::MIN,
                            <$t>::MAX,
                            0 as $t,
                            1 as $t,
                            (0 as $t).wrapping_sub(1),
                            small,
                        ];
                        pick(&mut rng, &edges, random)
                    })
                    .collect()
            };
        }
        let in_i8 = ints!(i8);
        let in_u16 = ints!(u16);
        let in_i32 = ints!(i32);
        let in_u32 = ints!(u32);
        let in_i64 = ints!(i64);
        let in_u64 = ints!(u64);
        let (r32, r32u, r64) = (
            rng.next_u64() as i32,
            (rng.next_u64() % 1000) as u32,
            rng.next_u64() as i64,
        );
        let args = Args {
            n: program.active,
            s_i32: pick(&mut rng, &[i32::MIN, i32::MAX, -1, 0], r32),
            s_u32: pick(&mut rng, &[u32::MAX, 0, 1], r32u),
            s_i64: pick(&mut rng, &[i64::MIN, i64::MAX, -1], r64),
            s_u64: rng.next_u64(),
            s_f32: f32_value(&mut rng),
            s_f64: f64_value(&mut rng),
            s_b: rng.chance(50),
        };
        Inputs {
            args,
            in_i8,
            in_u16,
            in_i32,
            in_u32,
            in_i64,
            in_u64,
            in_f32,
            in_f64,
        }
    }
}

fn zeroed_outputs(threads: usize) -> Outputs {
    Outputs {
        out_i: vec![0; threads * INT_SLOTS],
        out_f32: vec![0.0; threads * F32_SLOTS],
        out_f64: vec![0.0; threads * F64_SLOTS],
        cnt: counters(),
    }
}

/// The program run by rustc's compilation of it: each block's threads one after another,
/// phase by phase (every thread finishes a phase before any starts the next, which is what
/// `sync_threads()` guarantees).
pub fn run_host(program: &Program, inputs: &Inputs) -> Outputs {
    let mut out = zeroed_outputs(program.threads());
    let a = &inputs.args;
    for block in 0..program.grid {
        host_rt::begin_block();
        for phase in 0..program.phases {
            for thread in 0..program.block {
                host_rt::enter_thread(thread, block, program.block, program.grid);
                (program.host)(
                    phase,
                    a.n,
                    a.s_i32,
                    a.s_u32,
                    a.s_i64,
                    a.s_u64,
                    a.s_f32,
                    a.s_f64,
                    a.s_b,
                    &inputs.in_i8,
                    &inputs.in_u16,
                    &inputs.in_i32,
                    &inputs.in_u32,
                    &inputs.in_i64,
                    &inputs.in_u64,
                    &inputs.in_f32,
                    &inputs.in_f64,
                    &mut out.out_i,
                    &mut out.out_f32,
                    &mut out.out_f64,
                    &mut out.cnt,
                );
            }
        }
    }
    out
}

/// The program compiled by cudajit and run on `stream` (the simulator or a GPU).
pub fn run_kernel(program: &Program, stream: &Stream, inputs: &Inputs) -> Result<Outputs, String> {
    let fail = |e: cudajit::Error| format!("{e}");
    let zero = zeroed_outputs(program.threads());
    let mut data = DeviceData {
        in_i8: stream.clone_htod(&inputs.in_i8).map_err(fail)?,
        in_u16: stream.clone_htod(&inputs.in_u16).map_err(fail)?,
        in_i32: stream.clone_htod(&inputs.in_i32).map_err(fail)?,
        in_u32: stream.clone_htod(&inputs.in_u32).map_err(fail)?,
        in_i64: stream.clone_htod(&inputs.in_i64).map_err(fail)?,
        in_u64: stream.clone_htod(&inputs.in_u64).map_err(fail)?,
        in_f32: stream.clone_htod(&inputs.in_f32).map_err(fail)?,
        in_f64: stream.clone_htod(&inputs.in_f64).map_err(fail)?,
        out_i: stream.clone_htod(&zero.out_i).map_err(fail)?,
        out_f32: stream.clone_htod(&zero.out_f32).map_err(fail)?,
        out_f64: stream.clone_htod(&zero.out_f64).map_err(fail)?,
        cnt: stream.clone_htod(&zero.cnt).map_err(fail)?,
    };
    let config = LaunchConfig::new(program.grid, program.block);
    (program.launch)(stream, config, &inputs.args, &mut data).map_err(fail)?;
    Ok(Outputs {
        out_i: stream.clone_dtoh(&data.out_i).map_err(fail)?,
        out_f32: stream.clone_dtoh(&data.out_f32).map_err(fail)?,
        out_f64: stream.clone_dtoh(&data.out_f64).map_err(fail)?,
        cnt: stream.clone_dtoh(&data.cnt).map_err(fail)?,
    })
}

/// Where `got` differs from `want` (at most `limit` places): bit for bit, except that any
/// NaN equals any NaN.
pub fn compare(want: &Outputs, got: &Outputs, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut note = |what: String| {
        if out.len() < limit {
            out.push(what);
        }
    };
    for (k, (w, g)) in want.out_i.iter().zip(&got.out_i).enumerate() {
        if w != g {
            note(format!(
                "thread {} out_i slot {}: rustc {w}, cudajit {g}",
                k / INT_SLOTS,
                k % INT_SLOTS
            ));
        }
    }
    for (k, (w, g)) in want.out_f32.iter().zip(&got.out_f32).enumerate() {
        if w.to_bits() != g.to_bits() && !(w.is_nan() && g.is_nan()) {
            note(format!(
                "thread {} out_f32 slot {}: rustc {w:e}, cudajit {g:e}",
                k / F32_SLOTS,
                k % F32_SLOTS
            ));
        }
    }
    for (k, (w, g)) in want.out_f64.iter().zip(&got.out_f64).enumerate() {
        if w.to_bits() != g.to_bits() && !(w.is_nan() && g.is_nan()) {
            note(format!(
                "thread {} out_f64 slot {}: rustc {w:e}, cudajit {g:e}",
                k / F64_SLOTS,
                k % F64_SLOTS
            ));
        }
    }
    for k in 0..COUNTERS {
        if want.cnt[k] != got.cnt[k] {
            note(format!(
                "counter {k}: rustc {}, cudajit {}",
                want.cnt[k], got.cnt[k]
            ));
        }
    }
    out
}
