//! The host cost of a launch after the first: cudajit against cudarc's `launch_builder`
//! and a bare `cuLaunchKernel`, same process, same cubin, same five arguments.
//!
//! 10^5 back-to-back launches of an empty kernel per measurement; seven rounds with the
//! three variants in rotating order; the median round is reported. Target: cudajit at
//! most 0.5 µs above the bare `cuLaunchKernel`. Run:
//! `cargo run --release --example launch_bench` (prints "skipped" without a GPU).

// Only its `gpu()`: launch_bench times launches on the host.
#[allow(dead_code)]
#[path = "bench/timing.rs"]
mod timing;

use std::ffi::c_void;
use std::time::Instant;

use cudajit::prelude::*;
use cudajit::{CudaStream, DevicePtr, DevicePtrMut};
use cudarc::driver::PushKernelArg;
use timing::Result;

/// Five kernel arguments (a scalar and two slices, each a pointer and a length), no work.
#[kernel]
fn empty5(flag: u32, out: &mut [u32], input: &[u32]) {
    if flag == 0x5eed_5eed {
        out[0] = input[0];
    }
}

const LAUNCHES: usize = 100_000;
const ROUNDS: usize = 7;
/// The target for cudajit's extra cost over a bare `cuLaunchKernel`.
const TARGET_US: f64 = 0.5;

fn main() -> Result<()> {
    let Some((context, stream)) = timing::gpu()? else {
        return Ok(());
    };
    let mut out = stream.alloc_zeros::<u32>(1)?;
    let input = stream.alloc_zeros::<u32>(1)?;
    let config = LaunchConfig::new(1, 32);

    let loaded = empty5::compile(&context)?;
    // The same cubin loaded again for the cudarc variants.
    let module = context.load_module(cudarc::nvrtc::Ptx::from_binary(
        loaded.compiled().cubin.to_vec(),
    ))?;
    let function = module.load_function(&loaded.compiled().entry)?;
    let cudarc_config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };

    let mut cudajit_launch =
        || -> Result<()> { Ok(empty5::launch(&stream, config, 0, &mut out, &input)?) };
    let mut out2 = stream.alloc_zeros::<u32>(1)?;
    let mut builder_launch = || -> Result<()> {
        let (len, input_len) = (out2.len() as u64, input.len() as u64);
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(&0u32)
            .arg(&mut out2)
            .arg(&len)
            .arg(&input)
            .arg(&input_len);
        // SAFETY: the arguments match `empty5`'s compiled signature.
        unsafe { builder.launch(cudarc_config) }?;
        Ok(())
    };
    let mut out3 = stream.alloc_zeros::<u32>(1)?;
    let raw_function = function.cu_function();
    let mut raw_launch = || -> Result<()> {
        let flag = 0u32;
        let (len, input_len) = (out3.len() as u64, input.len() as u64);
        let (out_ptr, _out_sync) = out3.device_ptr_mut(&stream);
        let (in_ptr, _in_sync) = input.device_ptr(&stream);
        let mut args = [
            &flag as *const u32 as *mut c_void,
            &out_ptr as *const u64 as *mut c_void,
            &len as *const u64 as *mut c_void,
            &in_ptr as *const u64 as *mut c_void,
            &input_len as *const u64 as *mut c_void,
        ];
        // SAFETY: as above; the pointers outlive the call.
        unsafe {
            cudarc::driver::result::launch_kernel(
                raw_function,
                (1, 1, 1),
                (32, 1, 1),
                0,
                stream.cu_stream(),
                &mut args,
            )
        }?;
        Ok(())
    };

    let labels = [
        "cudajit launch",
        "cudarc launch_builder",
        "bare cuLaunchKernel",
    ];
    let mut times: [Vec<f64>; 3] = Default::default();
    for round in 0..ROUNDS {
        for step in 0..3 {
            let variant = (round + step) % 3;
            let launch: &mut dyn FnMut() -> Result<()> = match variant {
                0 => &mut cudajit_launch,
                1 => &mut builder_launch,
                _ => &mut raw_launch,
            };
            times[variant].push(per_launch_us(&stream, launch)?);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [mut ours, mut builder, mut raw] = times;
    let (ours, builder, raw) = (median(&mut ours), median(&mut builder), median(&mut raw));
    println!("host time per launch, median of {ROUNDS} rounds x {LAUNCHES} back-to-back launches:");
    for (label, us) in labels.iter().zip([ours, builder, raw]) {
        println!("  {label:<24} {us:.3} us");
    }
    let extra = ours - raw;
    println!(
        "cudajit - bare cuLaunchKernel = {extra:+.3} us (ratio {:.3}); cudajit - launch_builder = {:+.3} us (ratio {:.3})",
        ours / raw,
        ours - builder,
        ours / builder
    );
    println!(
        "target: at most {TARGET_US} us above bare cuLaunchKernel: {}",
        if extra <= TARGET_US { "met" } else { "NOT met" }
    );
    Ok(())
}

/// Host microseconds per launch over [`LAUNCHES`] back-to-back launches (the stream is
/// drained before and after, outside the timing).
fn per_launch_us(stream: &CudaStream, launch: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..1000 {
        launch()?;
    }
    stream.synchronize()?;
    let started = Instant::now();
    for _ in 0..LAUNCHES {
        launch()?;
    }
    let us = started.elapsed().as_secs_f64() * 1e6 / LAUNCHES as f64;
    stream.synchronize()?;
    Ok(us)
}
