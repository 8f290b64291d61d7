//! Host-side declarations of the device intrinsics.
//!
//! Kernel bodies are ordinary Rust that rustc type-checks, so every intrinsic a kernel may
//! call exists here with its real signature. The `#[kernel]` macro recognises the calls and
//! turns them into device code; these host functions are never called by generated code.
//! Called on the host outside a kernel, they panic with a message saying so.

/// A three-dimensional index or extent, as CUDA's `dim3`/`uint3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[cold]
fn device_only(name: &str) -> ! {
    panic!(
        "`{name}()` is a device intrinsic: it only has a meaning inside a `#[kernel]` function \
         launched on the GPU"
    )
}

/// The index of the calling thread within its block (CUDA `threadIdx`).
///
/// ```
/// use cudajit_core::device::*;
/// fn body(out: &mut [u32]) {
///     out[thread_idx().x as usize] = 1;
/// }
/// ```
pub fn thread_idx() -> Dim3 {
    device_only("thread_idx")
}

/// The index of the calling thread's block within the grid (CUDA `blockIdx`).
pub fn block_idx() -> Dim3 {
    device_only("block_idx")
}

/// The number of threads per block (CUDA `blockDim`).
pub fn block_dim() -> Dim3 {
    device_only("block_dim")
}

/// The number of blocks in the grid (CUDA `gridDim`).
pub fn grid_dim() -> Dim3 {
    device_only("grid_dim")
}

/// The global index of the calling thread along x:
/// `block_idx().x * block_dim().x + thread_idx().x`, computed in 64 bits.
pub fn global_index() -> usize {
    device_only("global_index")
}

/// The number of threads in the grid along x: `grid_dim().x * block_dim().x`, in 64 bits.
/// The step of a grid-stride loop.
pub fn grid_stride() -> usize {
    device_only("grid_stride")
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3 { x, y, z }
    }
}
