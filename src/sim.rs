//! The CPU simulator as a launch target: [`SimStream`] and its buffers.
//!
//! A `SimStream` stands where a `CudaStream` would: the generated `launch` functions take
//! either, and [`SimBuffer`]s where they take device slices. A launch on a `SimStream`
//! runs the kernel to completion on the host before it returns (there is nothing to
//! synchronise), and reports what the kernel did wrong as [`crate::Error::Simulator`].
//! Most programs use the portable [`crate::Stream`] instead, which is one or the other.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use cudajit_core::sim::{DeviceMemory, RegisterValue, SimArg, SimOptions, SimReport};

use crate::Error;

/// A scalar type buffers can hold: every scalar of the kernel language.
pub trait BufferElement:
    RegisterValue + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Default
{
}

impl<T> BufferElement for T where
    T: RegisterValue + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Default
{
}

/// Memory of the simulator holding `len` values of type `T`: what `alloc_zeros` and
/// `clone_htod` of a [`SimStream`] return, passed to kernels as `&[T]` / `&mut [T]`.
pub struct SimBuffer<T> {
    memory: DeviceMemory,
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
            memory: DeviceMemory::zeroed(len * T::SCALAR.size_bytes() as usize),
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
        self.memory.read_values(0, self.len)
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
        self.memory.write_values(0, data);
        Ok(())
    }

    /// The buffer as a `&[T]` kernel argument.
    pub fn sim_arg(&self) -> SimArg<'_> {
        SimArg::Slice {
            memory: &self.memory,
            elem: T::SCALAR,
            first: 0,
            len: self.len,
            mutable: false,
        }
    }

    /// The buffer as a `&mut [T]` kernel argument.
    pub fn sim_arg_mut(&mut self) -> SimArg<'_> {
        SimArg::Slice {
            memory: &self.memory,
            elem: T::SCALAR,
            first: 0,
            len: self.len,
            mutable: true,
        }
    }
}

/// A stream of the CPU simulator: allocates [`SimBuffer`]s and runs kernels launched on
/// it. Clones share their options and last report.
#[derive(Clone, Debug, Default)]
pub struct SimStream {
    options: SimOptions,
    last: Arc<Mutex<Option<SimReport>>>,
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
        }
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
        buffer.memory.write_values(0, data);
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

    /// Launches run to completion, so there is nothing to wait for.
    pub fn synchronize(&self) -> Result<(), Error> {
        Ok(())
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
