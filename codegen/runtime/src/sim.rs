//! The CPU simulator as a launch target: [`SimStream`] and its buffers.
//!
//! A `SimStream` stands where a `CudaStream` would: the generated `launch` functions take
//! either, and [`SimBuffer`]s where they take device slices. A launch on a `SimStream`
//! runs the kernel to completion on the host before it returns (there is nothing to
//! synchronise), and reports what the kernel did wrong as [`crate::Error::Simulator`].
//! Most programs use the portable [`crate::Stream`] instead, which is one or the other.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use cudajit_sim::{
    DeviceMemory, GroupLaunch, Program, SimArg, SimExterns, SimLaunch, SimOptions, SimReport,
};

use crate::Error;

use crate::buffer_element;
pub use crate::buffer_element::BufferElement;

/// Memory of the simulator holding `len` values of type `T`: what `alloc_zeros` and
/// `clone_htod` of a [`SimStream`] return, passed to kernels as `&[T]` / `&mut [T]`.
pub struct SimBuffer<T> {
    /// Shared with the copies queued on a simulated rank's stream, which
    /// run after the caller's borrow of the buffer has ended.
    memory: Arc<DeviceMemory>,
    len: usize,
    _element: PhantomData<T>,
}

impl<T> std::fmt::Debug for SimBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimBuffer({} elements)", self.len)
    }
}

impl<T: BufferElement> SimBuffer<T> {
    fn zeroed(len: usize) -> Self {
        SimBuffer {
            memory: Arc::new(DeviceMemory::zeroed(len * T::ELEMENT.size())),
            len,
            _element: PhantomData,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A copy of the elements.
    pub fn to_vec(&self) -> Vec<T> {
        let mut bytes = vec![0u8; self.memory.len()];
        self.memory.read_bytes(0, &mut bytes);
        buffer_element::decode(&bytes)
    }

    /// Overwrites the first `data.len()` elements.
    pub fn copy_from(&mut self, data: &[T]) -> Result<(), Error> {
        if data.len() > self.len {
            return Err(Error::Backend(format!(
                "copying {} elements into a simulator buffer of {}",
                data.len(),
                self.len
            )));
        }
        self.memory.store_bytes(0, &buffer_element::encode(data));
        Ok(())
    }

    /// The buffer's memory, for a copy on a stream ([`SimStream::copy_in_order`]).
    pub fn shared_memory(&self) -> Arc<DeviceMemory> {
        self.memory.clone()
    }

    /// The simulator memory holding the elements.
    pub(crate) fn memory(&self) -> &DeviceMemory {
        &self.memory
    }

    /// The buffer as a `&[T]` kernel argument.
    pub fn sim_arg(&self) -> SimArg<'_> {
        buffer_element::slice_arg::<T>(&self.memory, 0, self.len, false)
    }

    /// The buffer as a `&mut [T]` kernel argument.
    pub fn sim_arg_mut(&mut self) -> SimArg<'_> {
        buffer_element::slice_arg::<T>(&self.memory, 0, self.len, true)
    }
}

/// A stream of the CPU simulator: allocates [`SimBuffer`]s and runs kernels launched on
/// it. Clones share their options and last report.
#[derive(Clone, Debug, Default)]
pub struct SimStream {
    options: SimOptions,
    last: Arc<Mutex<Option<SimReport>>>,
    /// The group this stream is member `.1` of: its launches wait for the other members'.
    group: Option<(SimGroup, usize)>,
}

impl SimStream {
    /// A stream with the default options: every core (or `CUDAJIT_SIM_THREADS`), `print!`
    /// to stdout, race detection on.
    pub fn new() -> Self {
        SimStream::default()
    }

    /// A stream with `options` (with `print: PrintTarget::capture()`, read `print!` output
    /// back with [`SimStream::take_output`]).
    pub fn with_options(options: SimOptions) -> Self {
        SimStream {
            options,
            last: Arc::default(),
            group: None,
        }
    }

    /// The group this stream's launches run in, and its index there.
    pub fn group(&self) -> Option<(&SimGroup, usize)> {
        self.group.as_ref().map(|(g, m)| (g, *m))
    }

    /// The options launches on this stream use.
    pub fn options(&self) -> &SimOptions {
        &self.options
    }

    /// `len` zeros.
    pub fn alloc_zeros<T: BufferElement>(&self, len: usize) -> Result<SimBuffer<T>, Error> {
        Ok(SimBuffer::zeroed(len))
    }

    /// A buffer holding a copy of `data`.
    pub fn clone_htod<T: BufferElement>(&self, data: &[T]) -> Result<SimBuffer<T>, Error> {
        let mut buffer = SimBuffer::zeroed(data.len());
        buffer.copy_from(data)?;
        Ok(buffer)
    }

    /// A copy of `buffer`'s elements.
    pub fn clone_dtoh<T: BufferElement>(&self, buffer: &SimBuffer<T>) -> Result<Vec<T>, Error> {
        Ok(buffer.to_vec())
    }

    /// Copies `data` into `buffer`.
    pub fn memcpy_htod<T: BufferElement>(
        &self,
        data: &[T],
        buffer: &mut SimBuffer<T>,
    ) -> Result<(), Error> {
        buffer.copy_from(data)
    }

    /// Runs `copy` in the stream's order: now, unless a launch of this stream waits for
    /// the other members of its group; then right after that launch has run (as
    /// `cuMemcpyAsync` after a kernel on a CUDA stream).
    pub fn copy_in_order(&self, copy: SimCopy) -> Result<(), Error> {
        match &self.group {
            Some((group, member)) => group.copy_in_order(*member, copy),
            None => copy.run(),
        }
    }

    /// Launches run to completion, so there is nothing to wait for; on a stream of a
    /// [`SimGroup`], an error if a launch of this stream still waits for other members.
    pub fn synchronize(&self) -> Result<(), Error> {
        match &self.group {
            Some((group, member)) => group.check_member(*member),
            None => Ok(()),
        }
    }

    /// The `print!` output captured since the last call (with a capturing
    /// [`SimOptions::print`]), including that of launches that failed.
    pub fn take_output(&self) -> String {
        self.options.print.take()
    }

    /// What the last launch on this stream did (threads, time, barriers).
    pub fn last_report(&self) -> Option<SimReport> {
        self.lock().clone()
    }

    pub(crate) fn record(&self, report: SimReport) {
        *self.lock() = Some(report);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<SimReport>> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A launch deferred until every member of its group has launched.
struct PendingLaunch {
    program: Arc<Program>,
    config: SimLaunch,
    args: Vec<SimArg<'static>>,
    /// The copies queued on the member's stream after this launch, run once it has.
    then: Vec<SimCopy>,
}

/// A copy of `bytes` bytes from the start of one simulator memory to the start of
/// another (a device-to-device copy on a stream).
pub struct SimCopy {
    pub from: Arc<DeviceMemory>,
    pub to: Arc<DeviceMemory>,
    pub bytes: usize,
}

impl SimCopy {
    fn run(&self) -> Result<(), Error> {
        if self.bytes > self.from.len() || self.bytes > self.to.len() {
            return Err(Error::Backend(format!(
                "copying {} bytes between simulator memories of {} and {}",
                self.bytes,
                self.from.len(),
                self.to.len()
            )));
        }
        let mut bytes = vec![0u8; self.bytes];
        self.from.read_bytes(0, &mut bytes);
        self.to.store_bytes(0, &bytes);
        Ok(())
    }
}

/// The host of a group's extern functions, made afresh for each run (so it sees the
/// memory allocated since).
pub type ExternsFactory = dyn Fn() -> Option<Arc<dyn SimExterns>> + Send + Sync;

/// Simulator streams whose launches run together, as the ranks of a multi-GPU program do:
/// a launch on a member stream (such as `cudajit::nccl::sim::SimWorld::stream`) waits until every member has
/// launched, and the launch that completes the set runs them all with
/// [`cudajit_sim::launch_group`]: block `b` of every launch on one host thread,
/// meeting at the group barriers of extern functions. That launch returns the group's
/// result (an error names the member, e.g. `rank 1`). Launches queue per member, in order,
/// like work on a CUDA stream. A launch on a member stream takes scalar and struct
/// arguments only (memory is shared through the extern host, e.g. NCCL windows).
///
/// Used by `cudajit::nccl::sim::SimWorld`; most programs use that.
#[derive(Clone)]
pub struct SimGroup {
    inner: Arc<GroupInner>,
}

struct GroupInner {
    labels: Vec<String>,
    options: SimOptions,
    externs: Box<ExternsFactory>,
    queues: Mutex<Vec<VecDeque<PendingLaunch>>>,
    last: Mutex<Option<SimReport>>,
}

impl std::fmt::Debug for SimGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimGroup")
            .field("members", &self.inner.labels)
            .finish_non_exhaustive()
    }
}

impl SimGroup {
    /// A group of `labels.len()` members named by `labels` in messages, running with
    /// `options` and the extern host `externs()` returns at each run.
    pub fn new(labels: Vec<String>, options: SimOptions, externs: Box<ExternsFactory>) -> SimGroup {
        let members = labels.len();
        SimGroup {
            inner: Arc::new(GroupInner {
                labels,
                options,
                externs,
                queues: Mutex::new((0..members).map(|_| VecDeque::new()).collect()),
                last: Mutex::new(None),
            }),
        }
    }

    /// The number of members.
    pub fn members(&self) -> usize {
        self.inner.labels.len()
    }

    /// A stream whose launches are member `member`'s.
    pub fn stream(&self, member: usize) -> SimStream {
        SimStream {
            options: self.inner.options.clone(),
            last: Arc::default(),
            group: Some((self.clone(), member)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<VecDeque<PendingLaunch>>> {
        self.inner.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the group's last run did (every member's launch together).
    pub fn last_report(&self) -> Option<SimReport> {
        self.inner
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// `Ok` unless launches wait: then an error naming the members that must launch.
    pub fn synchronize(&self) -> Result<(), Error> {
        let queues = self.lock();
        match queues.iter().position(|q| !q.is_empty()) {
            Some(member) => Err(self.waiting_error(&queues, member)),
            None => Ok(()),
        }
    }

    fn check_member(&self, member: usize) -> Result<(), Error> {
        let queues = self.lock();
        if queues[member].is_empty() {
            Ok(())
        } else {
            Err(self.waiting_error(&queues, member))
        }
    }

    fn waiting_error(&self, queues: &[VecDeque<PendingLaunch>], member: usize) -> Error {
        let missing: Vec<&str> = queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.is_empty())
            .map(|(m, _)| self.inner.labels[m].as_str())
            .collect();
        let kernel = queues[member]
            .front()
            .map(|p| p.program.kernel().to_owned())
            .unwrap_or_default();
        Error::Backend(format!(
            "the launch of `{kernel}` on {} waits for {} to launch: launches on a simulated group run when every member has launched",
            self.inner.labels[member],
            missing.join(", ")
        ))
    }

    /// Runs `copy` after member `member`'s last queued launch, or now if none waits.
    fn copy_in_order(&self, member: usize, copy: SimCopy) -> Result<(), Error> {
        let mut queues = self.lock();
        match queues[member].back_mut() {
            Some(last) => {
                last.then.push(copy);
                Ok(())
            }
            None => copy.run(),
        }
    }

    /// Queues member `member`'s launch; runs the group's next launches once every member
    /// has one queued.
    pub(crate) fn submit(
        &self,
        stream: &SimStream,
        member: usize,
        program: Arc<Program>,
        config: SimLaunch,
        args: &[SimArg<'_>],
    ) -> Result<(), Error> {
        let args = args
            .iter()
            .map(|arg| match arg {
                SimArg::Scalar { scalar, bits } => Ok(SimArg::Scalar {
                    scalar: *scalar,
                    bits: *bits,
                }),
                SimArg::Struct { bytes } => Ok(SimArg::Struct {
                    bytes: bytes.clone(),
                }),
                SimArg::Slice { .. } | SimArg::StructSlice { .. } | SimArg::TensorMap { .. } => Err(crate::__private::sim_unsupported(
                    program.kernel(),
                    "a slice or tensor-map argument in a launch on a simulated rank (launches of a group run later; share memory through windows)",
                )),
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut queues = self.lock();
        queues[member].push_back(PendingLaunch {
            program,
            config,
            args,
            then: Vec::new(),
        });
        if queues.iter().any(|q| q.is_empty()) {
            return Ok(());
        }
        let batch: Vec<PendingLaunch> = queues
            .iter_mut()
            .map(|q| q.pop_front().expect("every queue has a launch"))
            .collect();
        // The queues stay locked while the batch runs, so batches run in launch order.
        let launches: Vec<GroupLaunch<'_, '_>> = batch
            .iter()
            .zip(&self.inner.labels)
            .map(|(pending, label)| GroupLaunch {
                program: &pending.program,
                config: pending.config,
                args: &pending.args,
                label: Some(label.clone()),
            })
            .collect();
        let mut options = self.inner.options.clone();
        options.externs = (self.inner.externs)();
        let kernel = launches.first().map_or("?", |l| l.program.kernel());
        let step = format!(
            "simulating a group of {} launches on the CPU",
            launches.len()
        );
        let _notice = cudajit_codegen::progress::notice(kernel, &step)?;
        let report = cudajit_sim::launch_group(&launches, &options)?;
        tracing::debug!(
            "cudajit: kernel `{kernel}`: simulated {} launches together, {} threads in {:.1} ms",
            launches.len(),
            report.threads,
            report.elapsed.as_secs_f64() * 1e3
        );
        batch
            .iter()
            .flat_map(|pending| &pending.then)
            .try_for_each(SimCopy::run)?;
        *self.inner.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(report.clone());
        stream.record(report);
        Ok(())
    }
}
