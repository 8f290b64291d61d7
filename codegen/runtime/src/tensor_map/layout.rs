//! What a tiled tensor map describes, and the rules `cuTensorMapEncodeTiled` sets on it.
//!
//! The driver answers a violated rule with `CUDA_ERROR_INVALID_VALUE` and nothing else; the
//! rules (CUDA Driver API, "Tensor Map Object Management") are therefore checked here first,
//! each with its own error that names the value, the rule and the fix.

/// What the host needs of a tile type: the swizzle a tensor map must be encoded with to
/// fill it (`TensorMapLayout::with_swizzle_of`), its row width and its alignment.
/// (The tile types are the tensor-core layer's, `cudajit::tensor::layout`.)
pub trait TileSwizzle {
    const SWIZZLE: TensorMapSwizzle;
    /// The bytes of one row: the box's inner dimension in bytes.
    const ROW_BYTES: u32;
    /// The swizzle's repeat (8 rows): the tile's alignment in shared memory.
    const REPEAT_BYTES: u32;
}

/// The element type of a tensor map (`CUtensorMapDataType`, the types TMA copies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorMapElement {
    U8,
    U16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
    Bf16,
    /// f32 with denormals flushed to zero on the copy.
    F32Ftz,
    /// f32 rounded to tf32 on the copy.
    Tf32,
    /// tf32 with denormals flushed to zero.
    Tf32Ftz,
}

impl TensorMapElement {
    /// The element's size in bytes.
    pub const fn size(self) -> u64 {
        use TensorMapElement::*;
        match self {
            U8 => 1,
            U16 | F16 | Bf16 => 2,
            U32 | I32 | F32 | F32Ftz | Tf32 | Tf32Ftz => 4,
            U64 | I64 | F64 => 8,
        }
    }

    /// Whether the element is a floating-point type (NaN fill applies only to those).
    pub const fn is_float(self) -> bool {
        use TensorMapElement::*;
        matches!(self, F16 | F32 | F64 | Bf16 | F32Ftz | Tf32 | Tf32Ftz)
    }
}

/// How TMA swizzles the box in shared memory (`CUtensorMapSwizzle`): what wgmma's matrix
/// descriptors and `ldmatrix` patterns must match. The box's inner dimension may span at
/// most the swizzle's width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorMapSwizzle {
    /// Rows stored as they are.
    #[default]
    None,
    /// 16-byte chunks XOR-permuted within 32-byte rows.
    B32,
    /// Within 64-byte rows.
    B64,
    /// Within 128-byte rows (what wgmma GEMMs use).
    B128,
}

impl TensorMapSwizzle {
    /// The swizzle span in bytes (`None` for no swizzle).
    pub const fn bytes(self) -> Option<u64> {
        match self {
            TensorMapSwizzle::None => None,
            TensorMapSwizzle::B32 => Some(32),
            TensorMapSwizzle::B64 => Some(64),
            TensorMapSwizzle::B128 => Some(128),
        }
    }
}

/// How far the L2 cache fetches beyond what a copy reads (`CUtensorMapL2promotion`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum L2Promotion {
    #[default]
    None,
    B64,
    B128,
    B256,
}

/// What a load reads for the box's elements outside the tensor (`CUtensorMapFloatOOBfill`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutOfBoundsFill {
    /// Zeros.
    #[default]
    Zero,
    /// NaNs (`..._NAN_REQUEST_ZERO_FMA`): floating-point elements only.
    Nan,
}

/// The largest rank a tiled tensor map has.
pub const MAX_RANK: usize = 5;
/// The largest box extent in any dimension.
pub const MAX_BOX: u32 = 256;
/// The largest element stride (traversal step) in any dimension.
pub const MAX_ELEMENT_STRIDE: u32 = 8;
/// Global addresses and strides are multiples of this many bytes.
pub const GLOBAL_ALIGN: u64 = 16;
/// Strides are below 2^40 bytes.
pub const STRIDE_LIMIT: u64 = 1 << 40;
/// Dimensions are at most 2^32 elements.
pub const DIM_LIMIT: u64 = 1 << 32;

/// A tiled tensor map's description, dimension 0 innermost (contiguous), as
/// `cuTensorMapEncodeTiled` takes it. Build it with [`TensorMapLayout::tiled`] (a dense
/// tensor) and adjust with the other methods; [`TensorMapLayout::validate`] checks every
/// rule.
///
/// ```
/// use cudajit::tensor_map::{TensorMapElement, TensorMapError, TensorMapLayout, TensorMapSwizzle};
///
/// // A 4096 × 4096 bf16 matrix (row-major: 4096 columns innermost), copied in 64 × 128
/// // boxes of 64 columns (128 bytes, the 128-byte swizzle's span) by 128 rows.
/// let layout = TensorMapLayout::tiled(TensorMapElement::Bf16, &[4096, 4096], &[64, 128])
///     .with_swizzle(TensorMapSwizzle::B128);
/// assert_eq!(layout.global_strides, [8192]); // bytes per row
/// assert_eq!(layout.box_bytes(), 64 * 128 * 2); // what the mbarrier waits for
/// assert_eq!(layout.validate(0x7f00_0000_0000), Ok(()));
///
/// // A box row wider than the swizzle is refused before the driver sees it, with the fix.
/// let wide = TensorMapLayout::tiled(TensorMapElement::Bf16, &[4096, 4096], &[128, 64])
///     .with_swizzle(TensorMapSwizzle::B128);
/// let error = wide.validate(0x7f00_0000_0000).unwrap_err();
/// assert!(matches!(error, TensorMapError::SwizzleSpan { bytes: 256, .. }), "{error}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorMapLayout {
    pub element: TensorMapElement,
    /// Elements per dimension, innermost first.
    pub global_dims: Vec<u64>,
    /// Bytes between consecutive indices of dimensions 1.. (rank - 1 entries; dimension 0
    /// is contiguous).
    pub global_strides: Vec<u64>,
    /// The box one copy moves, in elements per dimension.
    pub box_dims: Vec<u32>,
    /// The traversal step per dimension (1 = every element).
    pub element_strides: Vec<u32>,
    pub swizzle: TensorMapSwizzle,
    pub l2_promotion: L2Promotion,
    pub oob_fill: OutOfBoundsFill,
}

impl TensorMapLayout {
    /// A dense tensor of `global_dims` (innermost first) copied in boxes of `box_dims`:
    /// strides from the dimensions, element strides 1, no swizzle, no L2 promotion, zero
    /// fill.
    pub fn tiled(element: TensorMapElement, global_dims: &[u64], box_dims: &[u32]) -> Self {
        let mut global_strides = Vec::with_capacity(global_dims.len().saturating_sub(1));
        let mut stride = element.size();
        for &dim in global_dims.iter().take(global_dims.len().saturating_sub(1)) {
            stride = stride.saturating_mul(dim);
            global_strides.push(stride);
        }
        TensorMapLayout {
            element,
            global_dims: global_dims.to_vec(),
            global_strides,
            box_dims: box_dims.to_vec(),
            element_strides: vec![1; global_dims.len()],
            swizzle: TensorMapSwizzle::None,
            l2_promotion: L2Promotion::None,
            oob_fill: OutOfBoundsFill::Zero,
        }
    }

    /// The same with the swizzle of the shared tile type `T` the boxes fill
    /// (`with_swizzle_of::<SharedTileSw128>()`), so the map and the tile's `wgmma`
    /// descriptors take their swizzle from one type. The box's inner dimension should be
    /// the tile's row, `T::ROW_BYTES` (wider is refused by [`Self::validate`]).
    pub fn with_swizzle_of<T: TileSwizzle>(self) -> Self {
        self.with_swizzle(T::SWIZZLE)
    }

    /// The same with the byte strides of dimensions 1.. given (a padded or strided view).
    pub fn with_strides(mut self, global_strides: &[u64]) -> Self {
        self.global_strides = global_strides.to_vec();
        self
    }

    /// The same with traversal steps per dimension.
    pub fn with_element_strides(mut self, element_strides: &[u32]) -> Self {
        self.element_strides = element_strides.to_vec();
        self
    }

    /// The same with a shared-memory swizzle.
    pub fn with_swizzle(mut self, swizzle: TensorMapSwizzle) -> Self {
        self.swizzle = swizzle;
        self
    }

    /// The same with an L2 promotion.
    pub fn with_l2_promotion(mut self, l2_promotion: L2Promotion) -> Self {
        self.l2_promotion = l2_promotion;
        self
    }

    /// The same with an out-of-bounds fill.
    pub fn with_oob_fill(mut self, oob_fill: OutOfBoundsFill) -> Self {
        self.oob_fill = oob_fill;
        self
    }

    /// The rank (number of dimensions).
    pub fn rank(&self) -> usize {
        self.global_dims.len()
    }

    /// The bytes one box occupies in shared memory (what `mbarrier.expect_tx` waits for).
    pub fn box_bytes(&self) -> u64 {
        self.box_dims
            .iter()
            .map(|&b| u64::from(b))
            .product::<u64>()
            .saturating_mul(self.element.size())
    }

    /// The bytes of global memory the tensor spans from its first element: what the
    /// buffer behind the map must hold.
    pub fn extent_bytes(&self) -> u64 {
        let element = self.element.size();
        let inner = self.global_dims.first().copied().unwrap_or(0);
        let mut last = inner.saturating_sub(1).saturating_mul(element);
        for (dim, stride) in self.global_dims.iter().skip(1).zip(&self.global_strides) {
            last = last.saturating_add(dim.saturating_sub(1).saturating_mul(*stride));
        }
        last.saturating_add(element)
    }

    /// Checks every rule of `cuTensorMapEncodeTiled` for a tensor at `address`; the first
    /// one violated is the error.
    pub fn validate(&self, address: u64) -> Result<(), TensorMapError> {
        use TensorMapError as E;
        let rank = self.rank();
        if !(1..=MAX_RANK).contains(&rank) {
            return Err(E::Rank { rank });
        }
        let lengths = [
            ("global_strides", self.global_strides.len(), rank - 1),
            ("box_dims", self.box_dims.len(), rank),
            ("element_strides", self.element_strides.len(), rank),
        ];
        for (field, len, expected) in lengths {
            if len != expected {
                return Err(E::Length {
                    field,
                    len,
                    expected,
                    rank,
                });
            }
        }
        if !address.is_multiple_of(GLOBAL_ALIGN) {
            return Err(E::AddressAlignment { address });
        }
        for (dim, &size) in self.global_dims.iter().enumerate() {
            if size == 0 || size > DIM_LIMIT {
                return Err(E::GlobalDim { dim, size });
            }
        }
        let element = self.element.size();
        let mut below = self.global_dims[0] * element;
        for (index, (&stride, &size)) in self
            .global_strides
            .iter()
            .zip(&self.global_dims[1..])
            .enumerate()
        {
            let dim = index + 1;
            if !stride.is_multiple_of(GLOBAL_ALIGN) || stride >= STRIDE_LIMIT {
                return Err(E::StrideAlignment { dim, stride });
            }
            if stride < below {
                return Err(E::StrideOverlap { dim, stride, below });
            }
            below = stride.saturating_mul(size);
        }
        for (dim, &size) in self.box_dims.iter().enumerate() {
            if size == 0 || size > MAX_BOX {
                return Err(E::BoxDim { dim, size });
            }
        }
        let inner_bytes = u64::from(self.box_dims[0]) * element;
        if !inner_bytes.is_multiple_of(GLOBAL_ALIGN) {
            return Err(E::BoxInnerBytes {
                elements: self.box_dims[0],
                bytes: inner_bytes,
            });
        }
        if let Some(span) = self.swizzle.bytes() {
            if inner_bytes > span {
                return Err(E::SwizzleSpan {
                    swizzle: span,
                    elements: self.box_dims[0],
                    bytes: inner_bytes,
                });
            }
        }
        for (dim, &step) in self.element_strides.iter().enumerate() {
            if step == 0 || step > MAX_ELEMENT_STRIDE {
                return Err(E::ElementStride { dim, step });
            }
        }
        if self.oob_fill == OutOfBoundsFill::Nan && !self.element.is_float() {
            return Err(E::NanFill {
                element: self.element,
            });
        }
        Ok(())
    }
}

/// A tensor-map rule the layout or its buffer violates; each names the rule and the fix.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum TensorMapError {
    #[error("a tiled tensor map has rank 1 to 5; this layout has {rank} dimensions")]
    Rank { rank: usize },
    #[error(
        "`{field}` has {len} entries; a rank-{rank} tensor map needs {expected} \
         (global_strides: one per dimension after the innermost)"
    )]
    Length {
        field: &'static str,
        len: usize,
        expected: usize,
        rank: usize,
    },
    #[error(
        "the tensor's global address {address:#x} is not 16-byte aligned, which TMA \
         requires: start the map at a 16-byte-aligned element (allocations are 256-byte \
         aligned)"
    )]
    AddressAlignment { address: u64 },
    #[error("global dimension {dim} is {size}: each must be 1 to 2^32 elements")]
    GlobalDim { dim: usize, size: u64 },
    #[error(
        "the stride of dimension {dim} is {stride} bytes: TMA strides are multiples of 16 \
         bytes below 2^40; pad the rows so each starts 16-byte aligned"
    )]
    StrideAlignment { dim: usize, stride: u64 },
    #[error(
        "the stride of dimension {dim} is {stride} bytes, less than the {below} bytes the \
         dimensions inside it span: rows would overlap; give strides of at least \
         globalDim[i - 1] × stride[i - 1]"
    )]
    StrideOverlap { dim: usize, stride: u64, below: u64 },
    #[error("box dimension {dim} is {size}: each must be 1 to 256 elements")]
    BoxDim { dim: usize, size: u32 },
    #[error(
        "the box's inner dimension is {elements} elements = {bytes} bytes: without \
         interleave it must be a multiple of 16 bytes"
    )]
    BoxInnerBytes { elements: u32, bytes: u64 },
    #[error(
        "the box's inner dimension is {elements} elements = {bytes} bytes, wider than the \
         {swizzle}-byte swizzle span: use a box of at most {swizzle} bytes in dimension 0 (or \
         a wider swizzle)"
    )]
    SwizzleSpan {
        swizzle: u64,
        elements: u32,
        bytes: u64,
    },
    #[error("the element stride of dimension {dim} is {step}: each must be 1 to 8")]
    ElementStride { dim: usize, step: u32 },
    #[error("NaN out-of-bounds fill needs a floating-point element type, not {element:?}: use `OutOfBoundsFill::Zero`")]
    NanFill { element: TensorMapElement },
    #[error(
        "the buffer holds {buffer_bytes} bytes but the tensor spans {extent_bytes}: a \
         tensor map may only describe memory its buffer owns"
    )]
    BufferTooSmall {
        buffer_bytes: u64,
        extent_bytes: u64,
    },
    #[error(
        "the buffer's elements are {buffer_element} bytes but the map's {element:?} \
         elements are {map_element}: use a buffer of the map's element type (or one of its \
         size, such as u16 for bf16)"
    )]
    ElementSize {
        element: TensorMapElement,
        map_element: u64,
        buffer_element: u64,
    },
    #[error(
        "cuTensorMapEncodeTiled refused the map ({0}) although it passed cudajit's checks: \
         the driver may be older than CUDA 12 or the GPU older than Hopper"
    )]
    Driver(cudarc::driver::DriverError),
    /// A map over a simulator buffer with a layout the simulator does not run.
    #[error("the CPU simulator's tensor maps do not support {what}")]
    NotSimulated { what: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use TensorMapElement::*;

    fn tile() -> TensorMapLayout {
        // A 1024 × 512 row-major f16 matrix in 64 × 128 boxes.
        TensorMapLayout::tiled(F16, &[1024, 512], &[64, 128])
    }

    #[test]
    fn a_dense_layout_is_valid_and_sized() {
        let layout = tile();
        assert_eq!(layout.global_strides, vec![2048]);
        assert_eq!(layout.validate(0x7f00_0000_0000), Ok(()));
        assert_eq!(layout.box_bytes(), 64 * 128 * 2);
        assert_eq!(layout.extent_bytes(), 1024 * 512 * 2);
        let strided = tile().with_strides(&[4096]);
        assert_eq!(strided.extent_bytes(), 511 * 4096 + 1024 * 2);
        let five = TensorMapLayout::tiled(F32, &[8, 2, 3, 4, 5], &[4, 1, 1, 1, 1]);
        assert_eq!(five.global_strides, vec![32, 64, 192, 768]);
        assert_eq!(five.validate(0), Ok(()));
    }

    #[test]
    fn each_rule_is_named() {
        use TensorMapError as E;
        let cases: Vec<(TensorMapLayout, u64, TensorMapError)> = vec![
            (
                TensorMapLayout::tiled(F32, &[], &[]),
                0,
                E::Rank { rank: 0 },
            ),
            (
                TensorMapLayout::tiled(F32, &[4; 6], &[4; 6]),
                0,
                E::Rank { rank: 6 },
            ),
            (
                tile().with_strides(&[]),
                0,
                E::Length {
                    field: "global_strides",
                    len: 0,
                    expected: 1,
                    rank: 2,
                },
            ),
            (tile(), 8, E::AddressAlignment { address: 8 }),
            (
                TensorMapLayout::tiled(F16, &[1024, 0], &[64, 1]),
                0,
                E::GlobalDim { dim: 1, size: 0 },
            ),
            (
                tile().with_strides(&[2056]),
                0,
                E::StrideAlignment {
                    dim: 1,
                    stride: 2056,
                },
            ),
            (
                tile().with_strides(&[1 << 40]),
                0,
                E::StrideAlignment {
                    dim: 1,
                    stride: 1 << 40,
                },
            ),
            (
                tile().with_strides(&[1024]),
                0,
                E::StrideOverlap {
                    dim: 1,
                    stride: 1024,
                    below: 2048,
                },
            ),
            (
                TensorMapLayout::tiled(F16, &[1024, 512], &[64, 257]),
                0,
                E::BoxDim { dim: 1, size: 257 },
            ),
            (
                TensorMapLayout::tiled(F16, &[1024, 512], &[4, 8]),
                0,
                E::BoxInnerBytes {
                    elements: 4,
                    bytes: 8,
                },
            ),
            (
                tile().with_swizzle(TensorMapSwizzle::B64),
                0,
                E::SwizzleSpan {
                    swizzle: 64,
                    elements: 64,
                    bytes: 128,
                },
            ),
            (
                tile().with_element_strides(&[1, 9]),
                0,
                E::ElementStride { dim: 1, step: 9 },
            ),
            (
                TensorMapLayout::tiled(U8, &[64, 64], &[64, 64])
                    .with_oob_fill(OutOfBoundsFill::Nan),
                0,
                E::NanFill { element: U8 },
            ),
        ];
        for (layout, address, expected) in cases {
            assert_eq!(
                layout.validate(address),
                Err(expected.clone()),
                "{layout:?}"
            );
            // Every message says what the rule is.
            assert!(expected.to_string().len() > 40, "{expected}");
        }
        // The 128-byte swizzle takes the 128-byte inner box; NaN fill takes floats.
        let swizzled = tile()
            .with_swizzle(TensorMapSwizzle::B128)
            .with_oob_fill(OutOfBoundsFill::Nan)
            .with_l2_promotion(L2Promotion::B256);
        assert_eq!(swizzled.validate(0), Ok(()));
    }
}
