//! The caller's device buffers of tokens (cudajit's [`Buffer`], cudarc's [`CudaSlice`],
//! the simulator's [`SimBuffer`]) and the copies between them and the group's windows
//! that the buffer-taking forms of dispatch and combine make: device to device, on the
//! rank's stream, as DeepEP and NCCL EP take their tensors.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::config::MoeError;
use super::ranks::SymmetricTensor;
use cudajit::{__runtime::SimCopy, SimBuffer};
use cudajit::{bf16, Buffer, Stream};

/// A caller's `bf16` tokens in device memory, read by [`MoeGroup::dispatch_from`]
/// and [`MoeGroup::combine_from`]: GPU memory for a group on GPUs, simulator memory for a
/// simulated one. Made from `&Buffer<bf16>`, `&CudaSlice<bf16>` or `&SimBuffer<bf16>`.
///
/// [`MoeGroup::dispatch_from`]: super::MoeGroup::dispatch_from
/// [`MoeGroup::combine_from`]: super::MoeGroup::combine_from
#[derive(Clone, Copy, Debug)]
pub enum TokenBuffer<'a> {
    Gpu(&'a CudaSlice<bf16>),
    Sim(&'a SimBuffer<bf16>),
}

/// A caller's device memory [`MoeGroup::combine_into`] writes the combined tokens into
/// (see [`TokenBuffer`]).
///
/// [`MoeGroup::combine_into`]: super::MoeGroup::combine_into
#[derive(Debug)]
pub enum TokenBufferMut<'a> {
    Gpu(&'a mut CudaSlice<bf16>),
    Sim(&'a mut SimBuffer<bf16>),
}

impl TokenBuffer<'_> {
    /// Elements.
    pub fn len(&self) -> usize {
        match self {
            TokenBuffer::Gpu(slice) => slice.len(),
            TokenBuffer::Sim(buffer) => buffer.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TokenBufferMut<'_> {
    /// Elements.
    pub fn len(&self) -> usize {
        match self {
            TokenBufferMut::Gpu(slice) => slice.len(),
            TokenBufferMut::Sim(buffer) => buffer.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> From<&'a CudaSlice<bf16>> for TokenBuffer<'a> {
    fn from(slice: &'a CudaSlice<bf16>) -> Self {
        TokenBuffer::Gpu(slice)
    }
}

impl<'a> From<&'a SimBuffer<bf16>> for TokenBuffer<'a> {
    fn from(buffer: &'a SimBuffer<bf16>) -> Self {
        TokenBuffer::Sim(buffer)
    }
}

impl<'a> From<&'a Buffer<bf16>> for TokenBuffer<'a> {
    fn from(buffer: &'a Buffer<bf16>) -> Self {
        match buffer.cuda() {
            Some(slice) => TokenBuffer::Gpu(slice),
            None => TokenBuffer::Sim(buffer.sim().expect("a buffer is GPU or simulator memory")),
        }
    }
}

impl<'a> From<&'a mut CudaSlice<bf16>> for TokenBufferMut<'a> {
    fn from(slice: &'a mut CudaSlice<bf16>) -> Self {
        TokenBufferMut::Gpu(slice)
    }
}

impl<'a> From<&'a mut SimBuffer<bf16>> for TokenBufferMut<'a> {
    fn from(buffer: &'a mut SimBuffer<bf16>) -> Self {
        TokenBufferMut::Sim(buffer)
    }
}

impl<'a> From<&'a mut Buffer<bf16>> for TokenBufferMut<'a> {
    fn from(buffer: &'a mut Buffer<bf16>) -> Self {
        // Asked first by a shared borrow: the borrow checker cannot end a mutable one
        // that is returned on one branch.
        if buffer.cuda().is_some() {
            TokenBufferMut::Gpu(buffer.cuda_mut().expect("a GPU buffer has GPU memory"))
        } else {
            TokenBufferMut::Sim(
                buffer
                    .sim_mut()
                    .expect("a buffer is GPU or simulator memory"),
            )
        }
    }
}

/// An error unless a caller's buffer of `len` elements holds the `needed` elements
/// (`rule`, e.g. `tokens × hidden (5 × 128)`) an operation copies.
pub(crate) fn check_holds(
    buffer: &'static str,
    len: usize,
    needed: usize,
    rule: &str,
) -> Result<(), MoeError> {
    if len < needed {
        return Err(MoeError::mismatch(
            buffer,
            len,
            format!("it must hold {rule} = {needed} elements"),
        ));
    }
    Ok(())
}

fn wrong_backend(buffer: &'static str) -> MoeError {
    MoeError::Launch(cudajit::Error::Backend(format!(
        "{buffer}: a group on GPUs copies GPU memory (a CudaSlice or a GPU Buffer), a \
         simulated group simulator memory (a simulator Buffer or SimBuffer)"
    )))
}

// The group's copies between a rank's part of a `bf16` symmetric tensor and a caller's
// token buffer (the tensor type is shared with the reshard; these are the group's).

/// Copies the first `count` elements of `source` to the start of local rank `i`'s part of
/// `tensor`, on `stream` (rank `i`'s): after the stream's earlier work, before its later.
pub(crate) fn copy_from_buffer(
    tensor: &SymmetricTensor<bf16>,
    i: usize,
    stream: &Stream,
    source: TokenBuffer<'_>,
    count: usize,
    buffer: &'static str,
) -> Result<(), MoeError> {
    check_copy(tensor, buffer, source.len(), count)?;
    let bytes = count * size_of::<bf16>();
    match (tensor, source, stream.cuda(), stream.sim()) {
        (SymmetricTensor::Gpu(window), TokenBuffer::Gpu(slice), Some(cuda), _) => {
            let to = window_ptr(window, i)?;
            cuda.context()
                .bind_to_thread()
                .map_err(cudajit::Error::from)?;
            // Recorded on the stream: a slice of another stream is waited for.
            let (from, _recorded) = slice.device_ptr(cuda);
            // SAFETY: both are device allocations of at least `bytes` bytes (checked
            // above and by the group's sizes), live until the copy is enqueued; the
            // slice's stream synchronisation is kept by `_recorded`.
            unsafe { cudarc::driver::result::memcpy_dtod_async(to, from, bytes, cuda.cu_stream()) }
                .map_err(cudajit::Error::from)?;
            Ok(())
        }
        (SymmetricTensor::Sim(window), TokenBuffer::Sim(buffer), _, Some(sim)) => {
            sim.copy_in_order(SimCopy {
                from: buffer.shared_memory(),
                to: window.rank_memory(i)?,
                bytes,
            })?;
            Ok(())
        }
        _ => Err(wrong_backend(buffer)),
    }
}

/// Copies the first `count` elements of local rank `i`'s part of `tensor` into
/// `destination`, on `stream` (rank `i`'s).
pub(crate) fn copy_into_buffer(
    tensor: &SymmetricTensor<bf16>,
    i: usize,
    stream: &Stream,
    destination: TokenBufferMut<'_>,
    count: usize,
    buffer: &'static str,
) -> Result<(), MoeError> {
    check_copy(tensor, buffer, destination.len(), count)?;
    let bytes = count * size_of::<bf16>();
    match (tensor, destination, stream.cuda(), stream.sim()) {
        (SymmetricTensor::Gpu(window), TokenBufferMut::Gpu(slice), Some(cuda), _) => {
            let from = window_ptr(window, i)?;
            cuda.context()
                .bind_to_thread()
                .map_err(cudajit::Error::from)?;
            let (to, _recorded) = slice.device_ptr_mut(cuda);
            // SAFETY: as in `copy_from_buffer`, in the other direction.
            unsafe { cudarc::driver::result::memcpy_dtod_async(to, from, bytes, cuda.cu_stream()) }
                .map_err(cudajit::Error::from)?;
            Ok(())
        }
        (SymmetricTensor::Sim(window), TokenBufferMut::Sim(buffer), _, Some(sim)) => {
            sim.copy_in_order(SimCopy {
                from: window.rank_memory(i)?,
                to: buffer.shared_memory(),
                bytes,
            })?;
            Ok(())
        }
        _ => Err(wrong_backend(buffer)),
    }
}

/// The device address of local rank `i`'s part of a symmetric buffer.
/// The caller's buffer holds `count` elements, and so does the window.
fn check_copy(
    tensor: &SymmetricTensor<bf16>,
    buffer: &'static str,
    len: usize,
    count: usize,
) -> Result<(), MoeError> {
    check_holds(buffer, len, count, "the elements copied")?;
    if count > tensor.len() {
        return Err(MoeError::mismatch(
            buffer,
            count,
            format!("the group's buffer holds {} per rank", tensor.len()),
        ));
    }
    Ok(())
}

fn window_ptr(window: &cudajit_nccl::SymmetricBuffer<bf16>, i: usize) -> Result<u64, MoeError> {
    window
        .device_ptr(i)
        .ok_or_else(|| MoeError::mismatch("local rank", i, "the buffer has no window there"))
}
