//! What the single-GPU benchmarks share: the GPU or the reason there is none, and kernel
//! time as the median of CUDA-event timings.

use std::sync::Arc;

use cudajit::{CudaContext, CudaStream};

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Events that record time (cudarc's default disables timing).
const TIMED: cudarc::driver::sys::CUevent_flags =
    cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;

/// The GPU's context and default stream, after printing its name; `None` after printing
/// why the benchmark is skipped.
pub fn gpu() -> Result<Option<(Arc<CudaContext>, Arc<CudaStream>)>> {
    let context = match cudajit::default_context() {
        Ok(context) => context,
        Err(error) => {
            println!("skipped: {error}");
            return Ok(None);
        }
    };
    let stream = context.default_stream();
    println!("GPU: {}", context.name()?);
    Ok(Some((context, stream)))
}

/// Median time in ms of `run` over 20 timed runs after 3 warm-ups, with CUDA events.
pub fn median_ms(stream: &CudaStream, mut run: impl FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..3 {
        run()?;
    }
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = stream.record_event(Some(TIMED))?;
        run()?;
        let end = stream.record_event(Some(TIMED))?;
        end.synchronize()?;
        times.push(f64::from(start.elapsed_ms(&end)?));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
