//! Where kernels run: a GPU or the CPU simulator, behind one launch API.
//!
//! The generated `launch` functions take `&impl LaunchStream` and slices as
//! `&impl KernelSlice<T>` / `&mut impl KernelSliceMut<T>`, so the same call launches on
//! - a cudarc `CudaStream` with `CudaSlice`/`CudaView`/`CudaViewMut` (the GPU, as before);
//! - a [`SimStream`] with [`SimBuffer`]s (the simulator);
//! - a portable [`Stream`] with [`Buffer`]s, which is one or the other, chosen at run time
//!   by [`Stream::new`]: `CUDAJIT_BACKEND=sim` or `gpu`, otherwise the GPU when there is one
//!   and the simulator when there is none. A program written against `Stream` does not
//!   change to switch.
//!
//! A buffer of one backend given to a launch on the other is an error
//! ([`Error::Backend`]), not a crash.

use std::sync::Arc;

use cudajit_core::EnvVar;
use cudajit_sim::{SimArg, SimOptions};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop,
};

use crate::buffer_element::CudaCopy;
use crate::sim::{BufferElement, SimBuffer, SimStream};
use crate::Error;

/// The stream a launch resolves to.
pub enum StreamTarget<'a> {
    Cuda(&'a CudaStream),
    Sim(&'a SimStream),
}

/// Something kernels can be launched on: a `CudaStream`, a [`SimStream`] or a [`Stream`]
/// (and `Arc`s and references of them).
pub trait LaunchStream {
    /// The stream a launch on `self` uses.
    fn target(&self) -> StreamTarget<'_>;
}

impl LaunchStream for CudaStream {
    #[inline(always)]
    fn target(&self) -> StreamTarget<'_> {
        StreamTarget::Cuda(self)
    }
}

impl LaunchStream for SimStream {
    #[inline(always)]
    fn target(&self) -> StreamTarget<'_> {
        StreamTarget::Sim(self)
    }
}

impl<S: LaunchStream + ?Sized> LaunchStream for Arc<S> {
    #[inline(always)]
    fn target(&self) -> StreamTarget<'_> {
        (**self).target()
    }
}

impl<S: LaunchStream + ?Sized> LaunchStream for &S {
    #[inline(always)]
    fn target(&self) -> StreamTarget<'_> {
        (**self).target()
    }
}

fn wrong_backend(what: &str, target: &str) -> Error {
    Error::Backend(format!(
        "{what} cannot be used by a launch on {target}; allocate buffers from the stream the kernel is launched on (a `cudajit::Stream` gives buffers of its own backend)"
    ))
}

/// A kernel argument for a `&[T]` parameter.
pub trait KernelSlice<T> {
    /// The number of elements.
    fn slice_len(&self) -> usize;
    /// The device pointer for a launch on `stream` (a GPU launch).
    fn cuda_ptr<'a>(
        &'a self,
        stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error>;
    /// The argument of a simulator launch.
    fn sim_slice(&self) -> Result<SimArg<'_>, Error>;
}

/// A kernel argument for a `&mut [T]` parameter.
pub trait KernelSliceMut<T> {
    /// The number of elements.
    fn slice_len(&self) -> usize;
    /// The device pointer for a launch on `stream` (a GPU launch).
    fn cuda_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error>;
    /// The argument of a simulator launch.
    fn sim_slice_mut(&mut self) -> Result<SimArg<'_>, Error>;
}

/// cudarc's device memory: GPU launches only.
macro_rules! cuda_slices {
    ($($ty:ty),*) => {$(
        impl<T> KernelSlice<T> for $ty {
            #[inline(always)]
            fn slice_len(&self) -> usize {
                DeviceSlice::len(self)
            }
            #[inline(always)]
            fn cuda_ptr<'a>(
                &'a self,
                stream: &'a CudaStream,
            ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
                Ok(self.device_ptr(stream))
            }
            fn sim_slice(&self) -> Result<SimArg<'_>, Error> {
                Err(wrong_backend("GPU memory (a cudarc slice)", "the CPU simulator"))
            }
        }
    )*};
}

macro_rules! cuda_slices_mut {
    ($($ty:ty),*) => {$(
        impl<T> KernelSliceMut<T> for $ty {
            #[inline(always)]
            fn slice_len(&self) -> usize {
                DeviceSlice::len(self)
            }
            #[inline(always)]
            fn cuda_ptr_mut<'a>(
                &'a mut self,
                stream: &'a CudaStream,
            ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
                Ok(self.device_ptr_mut(stream))
            }
            fn sim_slice_mut(&mut self) -> Result<SimArg<'_>, Error> {
                Err(wrong_backend("GPU memory (a cudarc slice)", "the CPU simulator"))
            }
        }
    )*};
}

cuda_slices!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);
cuda_slices_mut!(CudaSlice<T>, CudaViewMut<'_, T>);

impl<T, S: KernelSlice<T> + ?Sized> KernelSlice<T> for &S {
    #[inline(always)]
    fn slice_len(&self) -> usize {
        (**self).slice_len()
    }
    #[inline(always)]
    fn cuda_ptr<'a>(
        &'a self,
        stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
        (**self).cuda_ptr(stream)
    }
    fn sim_slice(&self) -> Result<SimArg<'_>, Error> {
        (**self).sim_slice()
    }
}

impl<T, S: KernelSliceMut<T> + ?Sized> KernelSliceMut<T> for &mut S {
    #[inline(always)]
    fn slice_len(&self) -> usize {
        (**self).slice_len()
    }
    #[inline(always)]
    fn cuda_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
        (**self).cuda_ptr_mut(stream)
    }
    fn sim_slice_mut(&mut self) -> Result<SimArg<'_>, Error> {
        (**self).sim_slice_mut()
    }
}

impl<T: BufferElement> KernelSlice<T> for SimBuffer<T> {
    fn slice_len(&self) -> usize {
        self.len()
    }
    fn cuda_ptr<'a>(
        &'a self,
        _stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
        Err(wrong_backend("a simulator buffer", "a GPU"))
    }
    fn sim_slice(&self) -> Result<SimArg<'_>, Error> {
        Ok(self.sim_arg())
    }
}

impl<T: BufferElement> KernelSliceMut<T> for SimBuffer<T> {
    fn slice_len(&self) -> usize {
        self.len()
    }
    fn cuda_ptr_mut<'a>(
        &'a mut self,
        _stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
        Err(wrong_backend("a simulator buffer", "a GPU"))
    }
    fn sim_slice_mut(&mut self) -> Result<SimArg<'_>, Error> {
        Ok(self.sim_arg_mut())
    }
}

/// The variable [`Stream::new`] reads: `gpu`, `sim` or `auto` (the default).
pub const BACKEND_VARIABLE: &str = "CUDAJIT_BACKEND";

/// Which backend a [`Stream`] runs kernels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Gpu,
    Simulator,
}

impl Backend {
    /// The backend `CUDAJIT_BACKEND` asks for: `None` for `auto` (or unset), an error for
    /// a value that is none of `gpu`, `sim`, `auto` (`cuda`, `simulator` and `cpu` are
    /// accepted too).
    pub fn from_env() -> Result<Option<Backend>, cudajit_core::EnvVarError> {
        let choices = [
            ("auto", None),
            ("gpu", Some(Backend::Gpu)),
            ("sim", Some(Backend::Simulator)),
            ("cuda", Some(Backend::Gpu)),
            ("simulator", Some(Backend::Simulator)),
            ("cpu", Some(Backend::Simulator)),
        ];
        Ok(EnvVar::process(BACKEND_VARIABLE)
            .choice(&choices)?
            .flatten())
    }
}

/// A stream of whichever backend the program runs on: a CUDA stream on a GPU, or the CPU
/// simulator. Kernels launch on it and it allocates [`Buffer`]s, with the methods of a
/// cudarc stream, so code written against it runs unchanged on both.
///
/// ```
/// use cudajit::prelude::*;
/// use cudajit::{Backend, Stream};
///
/// #[kernel]
/// fn scale(factor: f32, values: &mut [f32]) {
///     let i = global_index();
///     if i < values.len() {
///         values[i] *= factor;
///     }
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     // A program calls `Stream::new()`; the example runs on the simulator everywhere.
///     let stream = Stream::simulator();
///     assert_eq!(stream.backend(), Backend::Simulator);
///     let mut values = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0])?;
///     scale::launch(&stream, LaunchConfig::for_elements(values.len()), 0.5, &mut values)?;
///     stream.synchronize()?;
///     assert_eq!(stream.clone_dtoh(&values)?, [0.5, 1.0, 1.5, 2.0]);
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Stream {
    inner: StreamInner,
    /// Why the simulator was chosen when no GPU was found.
    no_gpu: Option<Arc<str>>,
}

#[derive(Clone, Debug)]
enum StreamInner {
    Cuda(Arc<CudaStream>),
    Sim(SimStream),
}

impl Stream {
    /// The stream of the backend the environment asks for: `CUDAJIT_BACKEND=sim` the
    /// simulator, `CUDAJIT_BACKEND=gpu` GPU 0 (an error without one); unset (or `auto`),
    /// GPU 0's default stream if there is a GPU, else the simulator
    /// ([`Stream::no_gpu_reason`] then says why).
    ///
    /// ```
    /// use cudajit::{Backend, Stream};
    ///
    /// let stream = Stream::new()?;
    /// match stream.backend() {
    ///     Backend::Gpu => println!("running on the GPU"),
    ///     Backend::Simulator => println!(
    ///         "running on the CPU simulator: {}",
    ///         stream.no_gpu_reason().unwrap_or("CUDAJIT_BACKEND=sim")
    ///     ),
    /// }
    /// # Ok::<(), cudajit::Error>(())
    /// ```
    pub fn new() -> Result<Stream, Error> {
        match Backend::from_env()? {
            Some(Backend::Simulator) => Ok(Stream::simulator()),
            Some(Backend::Gpu) => Stream::gpu(0),
            None => match crate::default_context() {
                Ok(context) => Ok(Stream::from_cuda(context.default_stream())),
                Err(Error::NoGpu(reason)) => {
                    tracing::info!(
                        "cudajit: no GPU found ({reason}); running on the CPU simulator"
                    );
                    Ok(Stream {
                        inner: StreamInner::Sim(SimStream::new()),
                        no_gpu: Some(reason.into()),
                    })
                }
                Err(other) => Err(other),
            },
        }
    }

    /// The default stream of GPU `ordinal`.
    pub fn gpu(ordinal: usize) -> Result<Stream, Error> {
        crate::gpu_count()?;
        let context = cudarc::driver::CudaContext::new(ordinal)
            .map_err(|e| Error::NoGpu(format!("cannot create a context on GPU {ordinal}: {e}")))?;
        Ok(Stream::from_cuda(context.default_stream()))
    }

    /// A simulator stream with the default options.
    pub fn simulator() -> Stream {
        Stream::simulator_with(SimOptions::default())
    }

    /// A simulator stream with `options`.
    pub fn simulator_with(options: SimOptions) -> Stream {
        Stream {
            inner: StreamInner::Sim(SimStream::with_options(options)),
            no_gpu: None,
        }
    }

    /// A stream on an existing CUDA stream, such as one that cudarc code (or candle)
    /// already uses: its buffers can then be [`Buffer`]s of this stream or the cudarc
    /// slices that code allocated.
    ///
    /// ```no_run
    /// use cudajit::Stream;
    ///
    /// let context = cudajit::CudaContext::new(0)?;
    /// let stream = Stream::from_cuda(context.new_stream()?);
    /// assert!(stream.cuda().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cuda(stream: Arc<CudaStream>) -> Stream {
        Stream {
            inner: StreamInner::Cuda(stream),
            no_gpu: None,
        }
    }

    /// A stream on an existing simulator stream (a rank of a simulated NCCL world, say).
    pub fn from_sim(stream: SimStream) -> Stream {
        Stream {
            inner: StreamInner::Sim(stream),
            no_gpu: None,
        }
    }

    /// The backend kernels launched on this stream run on.
    pub fn backend(&self) -> Backend {
        match self.inner {
            StreamInner::Cuda(_) => Backend::Gpu,
            StreamInner::Sim(_) => Backend::Simulator,
        }
    }

    /// Why [`Stream::new`] fell back to the simulator, if it did because no GPU was found.
    pub fn no_gpu_reason(&self) -> Option<&str> {
        self.no_gpu.as_deref()
    }

    /// The CUDA stream, on a GPU.
    pub fn cuda(&self) -> Option<&Arc<CudaStream>> {
        match &self.inner {
            StreamInner::Cuda(stream) => Some(stream),
            StreamInner::Sim(_) => None,
        }
    }

    /// The simulator stream, on the simulator.
    pub fn sim(&self) -> Option<&SimStream> {
        match &self.inner {
            StreamInner::Cuda(_) => None,
            StreamInner::Sim(stream) => Some(stream),
        }
    }

    /// `len` zeros.
    pub fn alloc_zeros<T: BufferElement>(&self, len: usize) -> Result<Buffer<T>, Error> {
        Ok(Buffer(match &self.inner {
            StreamInner::Cuda(stream) => BufferInner::Cuda(T::Cuda::alloc_zeros(stream, len)?),
            StreamInner::Sim(stream) => BufferInner::Sim(stream.alloc_zeros(len)?),
        }))
    }

    /// A buffer holding a copy of `data`.
    pub fn clone_htod<T: BufferElement>(&self, data: &[T]) -> Result<Buffer<T>, Error> {
        Ok(Buffer(match &self.inner {
            StreamInner::Cuda(stream) => BufferInner::Cuda(T::Cuda::clone_htod(stream, data)?),
            StreamInner::Sim(stream) => BufferInner::Sim(stream.clone_htod(data)?),
        }))
    }

    /// A copy of `buffer`'s elements (waits for the stream's work on a GPU).
    pub fn clone_dtoh<T: BufferElement>(&self, buffer: &Buffer<T>) -> Result<Vec<T>, Error> {
        match (&self.inner, &buffer.0) {
            (StreamInner::Cuda(stream), BufferInner::Cuda(slice)) => {
                Ok(T::Cuda::clone_dtoh(stream, slice)?)
            }
            (StreamInner::Sim(stream), BufferInner::Sim(slice)) => stream.clone_dtoh(slice),
            _ => Err(wrong_backend("a buffer of another backend", "this stream")),
        }
    }

    /// Copies `data` into the start of `buffer`.
    pub fn memcpy_htod<T: BufferElement>(
        &self,
        data: &[T],
        buffer: &mut Buffer<T>,
    ) -> Result<(), Error> {
        match (&self.inner, &mut buffer.0) {
            (StreamInner::Cuda(stream), BufferInner::Cuda(slice)) => {
                Ok(T::Cuda::memcpy_htod(stream, data, slice)?)
            }
            (StreamInner::Sim(stream), BufferInner::Sim(slice)) => stream.memcpy_htod(data, slice),
            _ => Err(wrong_backend("a buffer of another backend", "this stream")),
        }
    }

    /// Waits for the work launched on the stream.
    pub fn synchronize(&self) -> Result<(), Error> {
        match &self.inner {
            StreamInner::Cuda(stream) => Ok(stream.synchronize()?),
            StreamInner::Sim(stream) => stream.synchronize(),
        }
    }
}

impl LaunchStream for Stream {
    #[inline(always)]
    fn target(&self) -> StreamTarget<'_> {
        match &self.inner {
            StreamInner::Cuda(stream) => StreamTarget::Cuda(stream),
            StreamInner::Sim(stream) => StreamTarget::Sim(stream),
        }
    }
}

/// Memory of a [`Stream`]'s backend holding values of type `T`: GPU memory or simulator
/// memory. Passed to kernels as `&[T]` / `&mut [T]`.
///
/// A buffer belongs to the backend of the stream that made it: a launch on another backend
/// is an [`Error::Backend`].
///
/// ```
/// use cudajit::Stream;
///
/// let stream = Stream::simulator();
/// let mut buffer = stream.alloc_zeros::<u32>(4)?;
/// assert_eq!(buffer.len(), 4);
/// stream.memcpy_htod(&[7, 8], &mut buffer)?; // the first two elements
/// assert_eq!(stream.clone_dtoh(&buffer)?, [7, 8, 0, 0]);
/// assert!(buffer.sim().is_some() && buffer.cuda().is_none());
/// # Ok::<(), cudajit::Error>(())
/// ```
#[derive(Debug)]
pub struct Buffer<T>(BufferInner<T>);

#[derive(Debug)]
enum BufferInner<T> {
    Cuda(CudaSlice<T>),
    Sim(SimBuffer<T>),
}

impl<T: BufferElement> Buffer<T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match &self.0 {
            BufferInner::Cuda(slice) => slice.len(),
            BufferInner::Sim(buffer) => buffer.len(),
        }
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The GPU memory, on a GPU.
    pub fn cuda(&self) -> Option<&CudaSlice<T>> {
        match &self.0 {
            BufferInner::Cuda(slice) => Some(slice),
            BufferInner::Sim(_) => None,
        }
    }

    /// The simulator memory, on the simulator.
    pub fn sim(&self) -> Option<&SimBuffer<T>> {
        match &self.0 {
            BufferInner::Cuda(_) => None,
            BufferInner::Sim(buffer) => Some(buffer),
        }
    }

    /// The GPU memory, on a GPU, to write.
    pub fn cuda_mut(&mut self) -> Option<&mut CudaSlice<T>> {
        match &mut self.0 {
            BufferInner::Cuda(slice) => Some(slice),
            BufferInner::Sim(_) => None,
        }
    }

    /// The simulator memory, on the simulator, to write.
    pub fn sim_mut(&mut self) -> Option<&mut SimBuffer<T>> {
        match &mut self.0 {
            BufferInner::Cuda(_) => None,
            BufferInner::Sim(buffer) => Some(buffer),
        }
    }
}

impl<T: BufferElement> KernelSlice<T> for Buffer<T> {
    fn slice_len(&self) -> usize {
        self.len()
    }
    #[inline]
    fn cuda_ptr<'a>(
        &'a self,
        stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
        match &self.0 {
            BufferInner::Cuda(slice) => Ok(slice.device_ptr(stream)),
            BufferInner::Sim(_) => Err(wrong_backend("a simulator buffer", "a GPU")),
        }
    }
    fn sim_slice(&self) -> Result<SimArg<'_>, Error> {
        match &self.0 {
            BufferInner::Cuda(_) => Err(wrong_backend("GPU memory", "the CPU simulator")),
            BufferInner::Sim(buffer) => Ok(buffer.sim_arg()),
        }
    }
}

impl<T: BufferElement> KernelSliceMut<T> for Buffer<T> {
    fn slice_len(&self) -> usize {
        self.len()
    }
    #[inline]
    fn cuda_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> Result<(CUdeviceptr, SyncOnDrop<'a>), Error> {
        match &mut self.0 {
            BufferInner::Cuda(slice) => Ok(slice.device_ptr_mut(stream)),
            BufferInner::Sim(_) => Err(wrong_backend("a simulator buffer", "a GPU")),
        }
    }
    fn sim_slice_mut(&mut self) -> Result<SimArg<'_>, Error> {
        match &mut self.0 {
            BufferInner::Cuda(_) => Err(wrong_backend("GPU memory", "the CPU simulator")),
            BufferInner::Sim(buffer) => Ok(buffer.sim_arg_mut()),
        }
    }
}
