//! Measures `cudajit::nccl::device`'s reduce-copy on one GPU: the LSA all-reduce's inner
//! loop (`lsa_reduce_copy`), with the peers' windows stood in for by `n` arrays of the same
//! GPU, against the device-to-device copy bandwidth (`cuMemcpyDtoD`) of the same GPU.
//! Reported: the bandwidth of the bytes the reduce-copy moves (`n` arrays read, one
//! written) and its ratio to the copy's. Every sum is checked against the host.
//!
//! Kernel times are CUDA-event medians of 20 runs after 3 warm-ups. Run:
//! `cargo run --release --features nccl --example reduce_copy_bench`

#[path = "bench/timing.rs"]
mod timing;

use cudajit::nccl::device as nccl;
use cudajit::prelude::*;
use cudajit::{bf16, f16, BufferElement, CudaSlice, CudaStream, DevicePtr};
use timing::{median_ms, Result};

#[kernel]
fn reduce_f32(sources: &[usize], n: usize, destination: &[usize], len: usize) {
    nccl::lsa_reduce_copy::<f32, 4>(sources, n, destination, 1, len, 0, len / 4);
}

#[kernel]
fn reduce_f64(sources: &[usize], n: usize, destination: &[usize], len: usize) {
    nccl::lsa_reduce_copy::<f64, 2>(sources, n, destination, 1, len, 0, len / 2);
}

#[kernel]
fn reduce_f16(sources: &[usize], n: usize, destination: &[usize], len: usize) {
    nccl::lsa_reduce_copy::<f16, 8>(sources, n, destination, 1, len, 0, len / 8);
}

#[kernel]
fn reduce_bf16(sources: &[usize], n: usize, destination: &[usize], len: usize) {
    nccl::lsa_reduce_copy_bf16::<8>(sources, n, destination, 1, len, 0, len / 8);
}

/// The kernels' common signature: (sources, n, destination, len).
type Launch = fn(
    &std::sync::Arc<CudaStream>,
    LaunchConfig,
    &CudaSlice<usize>,
    usize,
    &CudaSlice<usize>,
    usize,
) -> std::result::Result<(), cudajit::Error>;

/// One element type: its name, kernel, host value of array `a` element `k`, and the host
/// sum (in `f32` for the 16-bit types, rounded once, as the kernels do for `bf16`).
struct Case<T> {
    name: &'static str,
    launch: Launch,
    value: fn(usize, usize) -> T,
    sum: fn(&[T]) -> T,
}

fn main() -> Result<()> {
    let Some((_, stream)) = timing::gpu()? else {
        return Ok(());
    };
    let bytes = 128usize << 20;
    let copy_gbs = copy_bandwidth(&stream, bytes)?;
    println!(
        "copy D2D {} MiB: {copy_gbs:.0} GB/s (read + write)",
        bytes >> 20
    );
    for n in [2, 4, 8] {
        run(&stream, n, bytes, copy_gbs, &f32_case())?;
    }
    run(&stream, 4, bytes, copy_gbs, &f64_case())?;
    run(&stream, 4, bytes, copy_gbs, &f16_case())?;
    run(&stream, 4, bytes, copy_gbs, &bf16_case())?;
    Ok(())
}

fn copy_bandwidth(stream: &std::sync::Arc<CudaStream>, bytes: usize) -> Result<f64> {
    let x = stream.alloc_zeros::<u8>(bytes)?;
    let mut y = stream.alloc_zeros::<u8>(bytes)?;
    let ms = median_ms(stream, || Ok(stream.memcpy_dtod(&x, &mut y)?))?;
    Ok(2.0 * bytes as f64 / ms / 1e6)
}

/// Reduces `n` arrays of `bytes` bytes into one, times it and checks every element.
fn run<
    T: BufferElement
        + cudarc::driver::DeviceRepr
        + cudarc::driver::ValidAsZeroBits
        + PartialEq
        + std::fmt::Debug,
>(
    stream: &std::sync::Arc<CudaStream>,
    n: usize,
    bytes: usize,
    copy_gbs: f64,
    case: &Case<T>,
) -> Result<()> {
    let len = bytes / std::mem::size_of::<T>();
    let hosts: Vec<Vec<T>> = (0..n)
        .map(|a| (0..len).map(|k| (case.value)(a, k)).collect())
        .collect();
    let arrays = hosts
        .iter()
        .map(|host| stream.clone_htod(host))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let destination = stream.alloc_zeros::<T>(len)?;
    let address = |array: &CudaSlice<T>| array.device_ptr(stream).0 as usize;
    let sources = stream.clone_htod(&arrays.iter().map(address).collect::<Vec<_>>())?;
    let target = stream.clone_htod(&[address(&destination)])?;
    let sms = context_sms(stream)?;
    let config = LaunchConfig::new(sms * 4, 512u32);
    let ms = median_ms(stream, || {
        Ok((case.launch)(stream, config, &sources, n, &target, len)?)
    })?;
    let got = stream.clone_dtoh(&destination)?;
    for (k, value) in got.iter().enumerate() {
        let terms: Vec<T> = hosts.iter().map(|host| host[k]).collect();
        assert_eq!(*value, (case.sum)(&terms), "{}: element {k}", case.name);
    }
    let gbs = ((n + 1) * bytes) as f64 / ms / 1e6;
    println!(
        "reduce-copy {:>4} x {n} arrays of {} MiB: {ms:.4} ms = {gbs:.0} GB/s | / copy = {:.3}",
        case.name,
        bytes >> 20,
        gbs / copy_gbs
    );
    Ok(())
}

fn context_sms(stream: &std::sync::Arc<CudaStream>) -> Result<u32> {
    use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
    Ok(stream
        .context()
        .attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32)
}

fn f32_case() -> Case<f32> {
    Case {
        name: "f32",
        launch: |stream, config, sources, n, target, len| {
            reduce_f32::launch(stream, config, sources, n, target, len)
        },
        value: |a, k| ((a * 7 + k) % 1024) as f32 * 0.5,
        sum: |terms| terms.iter().sum(),
    }
}

fn f64_case() -> Case<f64> {
    Case {
        name: "f64",
        launch: |stream, config, sources, n, target, len| {
            reduce_f64::launch(stream, config, sources, n, target, len)
        },
        value: |a, k| ((a * 7 + k) % 1024) as f64 * 0.25,
        sum: |terms| terms.iter().sum(),
    }
}

fn f16_case() -> Case<f16> {
    Case {
        name: "f16",
        launch: |stream, config, sources, n, target, len| {
            reduce_f16::launch(stream, config, sources, n, target, len)
        },
        value: |a, k| f16::from_f32(((a * 3 + k) % 64) as f32),
        sum: |terms| f16::from_f32(terms.iter().map(|t| t.to_f32()).sum()),
    }
}

fn bf16_case() -> Case<bf16> {
    Case {
        name: "bf16",
        launch: |stream, config, sources, n, target, len| {
            reduce_bf16::launch(stream, config, sources, n, target, len)
        },
        value: |a, k| bf16::from_f32(((a * 3 + k) % 64) as f32 + 1.0 / 64.0),
        sum: |terms| bf16::from_f32(terms.iter().map(|t| t.to_f32()).sum()),
    }
}
