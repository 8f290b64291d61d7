//! Events on a [`Stream`]: marks in its work that a program waits for and times kernels
//! with, on either backend, without reaching into cudarc.
//!
//! On a GPU an event is a CUDA event created with timing enabled (`CU_EVENT_DEFAULT`) and
//! recorded with `cuEventRecord`; its time is the GPU's, taken when the stream's work
//! reaches it. On the simulator a launch runs to completion before `launch` returns, so
//! the stream's work is done when an event is recorded: the event holds the host's
//! wall-clock time of the record (`std::time::Instant`), and elapsed times measure the
//! simulator on the CPU, not what the kernels would take on a GPU.

use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaEvent;

use crate::backend::{Backend, Stream};
use crate::Error;

/// A point in a [`Stream`]'s work, made by [`Stream::record_event`].
///
/// ```
/// use cudajit::prelude::*;
/// use cudajit::Stream;
///
/// #[kernel]
/// fn double(values: &mut [f32]) {
///     let i = global_index();
///     if i < values.len() {
///         values[i] *= 2.0;
///     }
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     let stream = Stream::simulator();
///     let mut values = stream.clone_htod(&[1.0f32; 64])?;
///     let start = stream.record_event()?;
///     double::launch(&stream, LaunchConfig::for_elements(values.len()), &mut values)?;
///     let end = stream.record_event()?;
///     end.synchronize()?;
///     let ms = start.elapsed_ms(&end)?;
///     assert!(ms >= 0.0);
///     Ok(())
/// }
/// ```
#[derive(Debug)]
pub struct Event(EventInner);

#[derive(Debug)]
enum EventInner {
    Cuda(CudaEvent),
    /// When the record happened on the host; the simulator's work before it was done.
    Sim(Instant),
}

impl Stream {
    /// An event recorded after the work launched on this stream so far: on a GPU a timing
    /// CUDA event, on the simulator the host's clock now (see [`Event`]).
    ///
    /// On a stream of a [`crate::SimGroup`] whose launches still wait for other members,
    /// an error: the time would not include those launches.
    pub fn record_event(&self) -> Result<Event, Error> {
        if let Some(stream) = self.cuda() {
            let event = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            return Ok(Event(EventInner::Cuda(event)));
        }
        let stream = self.sim().expect("a stream is on the GPU or the simulator");
        stream.synchronize().map_err(|waiting| {
            Error::Backend(format!(
                "cannot record an event on this simulator stream: launches on it still wait for \
                 other members of its group, so the event's time would not include them; \
                 launch on the other members first ({waiting})"
            ))
        })?;
        Ok(Event(EventInner::Sim(Instant::now())))
    }
}

impl Event {
    /// The backend of the stream the event was recorded on.
    pub fn backend(&self) -> Backend {
        match self.0 {
            EventInner::Cuda(_) => Backend::Gpu,
            EventInner::Sim(_) => Backend::Simulator,
        }
    }

    /// Waits until the work before the event is done (on the simulator it already is).
    pub fn synchronize(&self) -> Result<(), Error> {
        match &self.0 {
            EventInner::Cuda(event) => Ok(event.synchronize()?),
            EventInner::Sim(_) => Ok(()),
        }
    }

    /// Milliseconds from `self` to `end` (negative when `end` was recorded first), waiting
    /// for both: `cuEventElapsedTime` on a GPU (a resolution of about half a
    /// microsecond), the host's clock on the simulator. Events of two backends are an
    /// [`Error::Backend`].
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, Error> {
        match (&self.0, &end.0) {
            (EventInner::Cuda(start), EventInner::Cuda(end)) => Ok(start.elapsed_ms(end)?),
            (EventInner::Sim(start), EventInner::Sim(end)) => Ok(signed_ms(*start, *end)),
            _ => Err(Error::Backend(
                "elapsed_ms between an event of the GPU and one of the simulator: record both \
                 events on streams of one backend"
                    .into(),
            )),
        }
    }
}

/// `end - start` in milliseconds, negative when `end` is earlier (as CUDA's is).
fn signed_ms(start: Instant, end: Instant) -> f32 {
    match end.checked_duration_since(start) {
        Some(forward) => forward.as_secs_f32() * 1e3,
        None => -(start.duration_since(end).as_secs_f32() * 1e3),
    }
}
