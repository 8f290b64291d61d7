//! Measures, in one process run on one GPU:
//! - SAXPY bandwidth against the device-to-device copy bandwidth (`cuMemcpyDtoD`),
//! - the host cost of a cached cudajit launch against a raw cudarc launch of the same
//!   cubin (`launch_builder`) and a bare `cuLaunchKernel`,
//! - the compile steps of the first launch.
//!
//! Kernel times are CUDA-event medians of 20 runs after 3 warm-ups. Run:
//! `cargo run --release --example saxpy_bench`

#[path = "bench/timing.rs"]
mod timing;

use std::time::Instant;

use cudajit::prelude::*;
use cudajit::{CudaStream, DevicePtr, DevicePtrMut};
use cudarc::driver::PushKernelArg;
use timing::{median_ms, Result};

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

/// Does nothing unless `flag` is a magic value: a launch with five kernel arguments whose
/// cost is all launch overhead.
#[kernel]
fn nearly_empty(flag: u32, out: &mut [u32], input: &[u32]) {
    if flag == 0x5eed_5eed {
        out[0] = input[0];
    }
}

fn main() -> Result<()> {
    let Some((context, stream)) = timing::gpu()? else {
        return Ok(());
    };

    for elements in [16usize << 20, 256 << 20] {
        bandwidth(&stream, elements)?;
    }
    launch_overhead(&context, &stream)?;
    Ok(())
}

fn bandwidth(stream: &std::sync::Arc<CudaStream>, n: usize) -> Result<()> {
    let x_host: Vec<f32> = (0..n).map(|i| (i % 1013) as f32 * 0.25).collect();
    let x = stream.clone_htod(&x_host)?;
    let mut y = stream.clone_htod(&x_host)?;
    let mut copy = stream.alloc_zeros::<f32>(n)?;
    let bytes = (n * 4) as f64;

    let copy_ms = median_ms(stream, || Ok(stream.memcpy_dtod(&x, &mut copy)?))?;
    let config = LaunchConfig::for_elements(n);
    let saxpy_ms = median_ms(stream, || {
        Ok(saxpy::launch(stream, config, 0.5, &x, &mut y)?)
    })?;
    let copy_gbs = 2.0 * bytes / copy_ms / 1e6;
    let saxpy_gbs = 3.0 * bytes / saxpy_ms / 1e6;
    println!(
        "n = {:>4} Mi f32: copy D2D {copy_ms:.4} ms = {copy_gbs:.0} GB/s | saxpy {saxpy_ms:.4} ms = {saxpy_gbs:.0} GB/s | saxpy/copy bandwidth = {:.3}",
        n >> 20,
        saxpy_gbs / copy_gbs
    );
    Ok(())
}

fn launch_overhead(
    context: &std::sync::Arc<cudajit::CudaContext>,
    stream: &std::sync::Arc<CudaStream>,
) -> Result<()> {
    const LAUNCHES: usize = 20_000;
    let mut out = stream.alloc_zeros::<u32>(1)?;
    let input = stream.alloc_zeros::<u32>(1)?;
    let config = LaunchConfig::new(1, 32);

    let first = Instant::now();
    nearly_empty::launch(stream, config, 0, &mut out, &input)?;
    stream.synchronize()?;
    let first = first.elapsed();
    let loaded = nearly_empty::compile(context)?;
    let report = &loaded.compiled().report;
    println!(
        "first launch of a small kernel: {:.2} ms (cubin {:?}: lookup {:.2} ms, lower {:.2} ms, libNVVM {:.2} ms, nvJitLink {:.2} ms, module load {:.2} ms)",
        first.as_secs_f64() * 1e3,
        report.origin,
        report.lookup.as_secs_f64() * 1e3,
        report.lower.as_secs_f64() * 1e3,
        report.nvvm.as_secs_f64() * 1e3,
        report.link.as_secs_f64() * 1e3,
        loaded.load_time().as_secs_f64() * 1e3
    );

    // The same cubin loaded a second time, launched through cudarc.
    let module = context.load_module(cudarc::nvrtc::Ptx::from_binary(
        loaded.compiled().cubin.to_vec(),
    ))?;
    let function = module.load_function("nearly_empty")?;
    let cudarc_config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };

    let time = |label: &str, launch: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        for _ in 0..100 {
            launch()?;
        }
        stream.synchronize()?;
        let mut best = f64::MAX;
        for _ in 0..5 {
            let started = Instant::now();
            for _ in 0..LAUNCHES {
                launch()?;
            }
            let host = started.elapsed().as_secs_f64() * 1e6 / LAUNCHES as f64;
            stream.synchronize()?;
            best = best.min(host);
        }
        println!("{label:<28} {best:.3} us per launch (host, best of 5 x {LAUNCHES})");
        Ok(best)
    };
    let ours = time("cudajit launch", &mut || {
        Ok(nearly_empty::launch(stream, config, 0, &mut out, &input)?)
    })?;
    let builder = time("cudarc launch_builder", &mut || {
        let len = out.len() as u64;
        let input_len = input.len() as u64;
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(&0u32)
            .arg(&mut out)
            .arg(&len)
            .arg(&input)
            .arg(&input_len);
        // SAFETY: the arguments match `nearly_empty`'s compiled signature.
        unsafe { builder.launch(cudarc_config) }?;
        Ok(())
    })?;
    let raw = time("raw cuLaunchKernel", &mut || {
        let flag = 0u32;
        let len = out.len() as u64;
        let input_len = input.len() as u64;
        let (out_ptr, _out_sync) = out.device_ptr_mut(stream);
        let (in_ptr, _in_sync) = input.device_ptr(stream);
        let mut args = [
            &flag as *const u32 as *mut std::ffi::c_void,
            &out_ptr as *const u64 as *mut std::ffi::c_void,
            &len as *const u64 as *mut std::ffi::c_void,
            &in_ptr as *const u64 as *mut std::ffi::c_void,
            &input_len as *const u64 as *mut std::ffi::c_void,
        ];
        // SAFETY: as above; the pointers outlive the call.
        unsafe {
            cudarc::driver::result::launch_kernel(
                function.cu_function(),
                (1, 1, 1),
                (32, 1, 1),
                0,
                stream.cu_stream(),
                &mut args,
            )
        }?;
        Ok(())
    })?;
    println!(
        "cudajit - cudarc launch_builder = {:+.3} us; cudajit - raw = {:+.3} us",
        ours - builder,
        ours - raw
    );
    Ok(())
}
