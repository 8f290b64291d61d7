//! The encoded tensor map: `cuTensorMapEncodeTiled` (the CUDA driver, loaded dynamically
//! through cudarc's sys layer) on a validated layout and a device buffer that covers it.

use std::marker::PhantomData;

use cudarc::driver::sys::{
    self, CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{CudaSlice, DevicePtr};

use super::layout::{
    L2Promotion, OutOfBoundsFill, TensorMapElement, TensorMapError, TensorMapLayout,
    TensorMapSwizzle,
};

/// A tensor map's size: what a kernel parameter of type `TensorMap` occupies.
pub const TENSOR_MAP_BYTES: usize = 128;
/// The alignment the PTX ISA requires of a tensor map in parameter (or any) memory.
pub const TENSOR_MAP_ALIGN: usize = 64;

/// An encoded TMA descriptor of a tensor in a device buffer, borrowed for `'buf` so that the
/// buffer outlives every use of the map. Kernels take it as a grid-constant parameter.
///
/// ```no_run
/// use cudajit::tensor_map::{TensorMap, TensorMapElement, TensorMapLayout};
///
/// let stream = cudajit::default_context()?.default_stream();
/// let matrix = stream.alloc_zeros::<f32>(1024 * 512)?; // 512 rows of 1024
/// let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[1024, 512], &[32, 32]);
/// let map = TensorMap::encode(&layout, &matrix)?; // borrows `matrix` while it lives
/// assert_eq!(map.as_bytes().len(), 128);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct TensorMap<'buf> {
    raw: CUtensorMap,
    buffer: PhantomData<&'buf ()>,
}

const _: () = assert!(std::mem::size_of::<CUtensorMap>() == TENSOR_MAP_BYTES);
const _: () = assert!(std::mem::align_of::<CUtensorMap>() >= TENSOR_MAP_ALIGN);
// The kernel parameter the NVVM writer declares holds exactly this value.
const _: () = assert!(cudajit_core::abi::TENSOR_MAP_BYTES as usize == TENSOR_MAP_BYTES);
const _: () = assert!(cudajit_core::abi::TENSOR_MAP_ALIGN as usize == TENSOR_MAP_ALIGN);
const _: () = assert!(std::mem::size_of::<TensorMap<'static>>() == TENSOR_MAP_BYTES);

impl<'buf> TensorMap<'buf> {
    /// Encodes `layout` over `buffer`, after checking every rule of the layout
    /// ([`TensorMapLayout::validate`]), that the buffer's element size is the map's and that
    /// the buffer holds the whole tensor.
    pub fn encode<T>(
        layout: &TensorMapLayout,
        buffer: &'buf CudaSlice<T>,
    ) -> Result<Self, TensorMapError> {
        let buffer_element = std::mem::size_of::<T>() as u64;
        if buffer_element != layout.element.size() {
            return Err(TensorMapError::ElementSize {
                element: layout.element,
                map_element: layout.element.size(),
                buffer_element,
            });
        }
        let buffer_bytes = buffer_element * buffer.len() as u64;
        let extent_bytes = layout.extent_bytes();
        if extent_bytes > buffer_bytes {
            return Err(TensorMapError::BufferTooSmall {
                buffer_bytes,
                extent_bytes,
            });
        }
        let stream = buffer.stream();
        let (address, _record) = buffer.device_ptr(stream);
        layout.validate(address)?;
        stream
            .context()
            .bind_to_thread()
            .map_err(TensorMapError::Driver)?;
        // SAFETY: the layout passed every documented rule; its vectors have the lengths
        // the rank says (checked by `validate`), and the driver only reads them; `raw` is a
        // 64-byte-aligned `CUtensorMap` it writes.
        let raw = unsafe { encode_tiled(layout, address) }?;
        Ok(TensorMap {
            raw,
            buffer: PhantomData,
        })
    }

    /// A map of these descriptor words (the simulator's encoding, `simulator.rs`).
    pub(super) fn from_opaque(opaque: [u64; 16]) -> Self {
        TensorMap {
            raw: CUtensorMap { opaque },
            buffer: PhantomData,
        }
    }

    /// The 128 descriptor bytes, as the kernel parameter carries them.
    pub fn as_bytes(&self) -> &[u8; TENSOR_MAP_BYTES] {
        // SAFETY: `CUtensorMap` is 16 `u64`s, 128 plain bytes (asserted above).
        unsafe { &*(&self.raw as *const CUtensorMap).cast::<[u8; TENSOR_MAP_BYTES]>() }
    }

    /// The driver's descriptor.
    pub fn raw(&self) -> &CUtensorMap {
        &self.raw
    }
}

/// `cuTensorMapEncodeTiled` on a validated layout.
///
/// # Safety
/// `layout` passed [`TensorMapLayout::validate`] for `address`, and a context is current.
unsafe fn encode_tiled(
    layout: &TensorMapLayout,
    address: u64,
) -> Result<CUtensorMap, TensorMapError> {
    let mut raw = CUtensorMap { opaque: [0; 16] };
    let box_dims: Vec<u32> = layout.box_dims.clone();
    let result = sys::cuTensorMapEncodeTiled(
        &mut raw,
        data_type(layout.element),
        layout.rank() as u32,
        address as *mut std::ffi::c_void,
        layout.global_dims.as_ptr(),
        layout.global_strides.as_ptr(),
        box_dims.as_ptr(),
        layout.element_strides.as_ptr(),
        CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
        swizzle(layout.swizzle),
        l2_promotion(layout.l2_promotion),
        oob_fill(layout.oob_fill),
    );
    result.result().map_err(TensorMapError::Driver)?;
    Ok(raw)
}

fn data_type(element: TensorMapElement) -> CUtensorMapDataType {
    use CUtensorMapDataType::*;
    use TensorMapElement::*;
    match element {
        U8 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
        U16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
        U32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
        I32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
        U64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
        I64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
        F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        F32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        F64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        Bf16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        F32Ftz => CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
        Tf32 => CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
        Tf32Ftz => CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
    }
}

fn swizzle(swizzle: TensorMapSwizzle) -> CUtensorMapSwizzle {
    use CUtensorMapSwizzle::*;
    match swizzle {
        TensorMapSwizzle::None => CU_TENSOR_MAP_SWIZZLE_NONE,
        TensorMapSwizzle::B32 => CU_TENSOR_MAP_SWIZZLE_32B,
        TensorMapSwizzle::B64 => CU_TENSOR_MAP_SWIZZLE_64B,
        TensorMapSwizzle::B128 => CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

fn l2_promotion(promotion: L2Promotion) -> CUtensorMapL2promotion {
    use CUtensorMapL2promotion::*;
    match promotion {
        L2Promotion::None => CU_TENSOR_MAP_L2_PROMOTION_NONE,
        L2Promotion::B64 => CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        L2Promotion::B128 => CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        L2Promotion::B256 => CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
    }
}

fn oob_fill(fill: OutOfBoundsFill) -> CUtensorMapFloatOOBfill {
    use CUtensorMapFloatOOBfill::*;
    match fill {
        OutOfBoundsFill::Zero => CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        OutOfBoundsFill::Nan => CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
    }
}
