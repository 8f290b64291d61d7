//! CUDA Graph capture of cudajit launches: launches recorded inside a stream capture,
//! the graph instantiated and replayed, results checked on the CPU. Skipped without a GPU.
//!
//! Two ways in: the kernel compiled ahead (`kernel::compile(&context)`, the recommended
//! way: nothing but `cuLaunchKernel` happens during the capture), and the first launch
//! happening inside the capture (cudajit then compiles and loads the module with the
//! thread's capture mode relaxed, so the driver accepts the module load).

use cudajit::prelude::*;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};

#[kernel]
fn graph_axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

#[kernel]
fn graph_scale(a: f32, y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] *= a;
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const N: usize = 100_003;

/// A GPU context, or `None` after printing why the test is skipped.
fn gpu_or_skip() -> Option<std::sync::Arc<cudajit::CudaContext>> {
    match cudajit::default_context() {
        Ok(context) => Some(context),
        Err(error) => {
            eprintln!("skipped: {error}");
            None
        }
    }
}

/// A stream that can be captured (not the legacy default stream), with cudarc's per-slice
/// event tracking off: its events, recorded on each use, would otherwise join the graph
/// to work outside the capture.
fn capturable() -> Option<(
    std::sync::MutexGuard<'static, ()>,
    std::sync::Arc<cudajit::CudaContext>,
    std::sync::Arc<cudajit::CudaStream>,
)> {
    // A capture in CUDA's global mode forbids the calls it deems unsafe (allocations, module
    // loads) on every thread of the process, so the two tests' captures, run in parallel by
    // the test harness, would fail each other: they take turns.
    static ONE_CAPTURE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let turn = ONE_CAPTURE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let context = gpu_or_skip()?;
    // SAFETY: every slice of these tests is used on this one stream only.
    unsafe { context.disable_event_tracking() };
    let stream = context.new_stream().expect("a stream");
    Some((turn, context, stream))
}

#[test]
fn capture_and_replay_compiled_ahead() -> Result<()> {
    let Some((_turn, context, stream)) = capturable() else {
        return Ok(());
    };
    let x = stream.clone_htod(&vec![1.0f32; N])?;
    let mut y = stream.alloc_zeros::<f32>(N)?;
    graph_axpy::compile(&context)?;
    stream.synchronize()?;

    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)?;
    for _ in 0..3 {
        graph_axpy::launch(&stream, LaunchConfig::for_elements(N), 0.5, &x, &mut y)?;
    }
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))?
        .ok_or("the capture produced no graph")?;
    stream.synchronize()?;
    assert!(
        stream.clone_dtoh(&y)?.iter().all(|&v| v == 0.0),
        "captured launches do not run until the graph is launched"
    );
    for _ in 0..4 {
        graph.launch()?;
    }
    stream.synchronize()?;
    let y = stream.clone_dtoh(&y)?;
    // 4 replays x 3 launches x 0.5.
    assert!(y.iter().all(|&v| v == 6.0), "y[0] = {}", y[0]);
    Ok(())
}

#[test]
fn first_launch_inside_a_capture() -> Result<()> {
    let Some((_turn, _context, stream)) = capturable() else {
        return Ok(());
    };
    let mut y = stream.clone_htod(&vec![1.0f32; N])?;
    stream.synchronize()?;

    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)?;
    // Not compiled yet: compiles (or reads the disk cache) and loads the module here.
    let launched = graph_scale::launch(&stream, LaunchConfig::for_elements(N), 2.0, &mut y);
    let graph = stream.end_capture(CUgraphInstantiate_flags(0));
    launched?;
    let graph = graph?.ok_or("the capture produced no graph")?;
    for _ in 0..3 {
        graph.launch()?;
    }
    stream.synchronize()?;
    let y = stream.clone_dtoh(&y)?;
    assert!(y.iter().all(|&v| v == 8.0), "y[0] = {}", y[0]);
    Ok(())
}
