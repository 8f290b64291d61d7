//! What a distributed tensor is: a device mesh (a grid of a communicator's ranks), a
//! placement per mesh dimension (DTensor's `Shard(dim)`, `Replicate`, `Partial`), a global
//! shape and an element type; and, computed on the host, the block of the global tensor
//! each rank holds.

use super::error::M2nError;

/// The element types a reshard moves. FP8 moves as bytes (it is copied, never reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    Bf16,
    F16,
    F32,
    /// FP8 e4m3 bytes.
    Fp8E4m3,
    /// FP8 e5m2 bytes.
    Fp8E5m2,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::Bf16 | DType::F16 => 2,
            DType::F32 => 4,
            DType::Fp8E4m3 | DType::Fp8E5m2 => 1,
        }
    }

    /// Whether a `Partial` tensor of this type can be reduced (FP8 cannot: its bytes are
    /// moved as they are).
    pub fn reducible(self) -> bool {
        matches!(self, DType::Bf16 | DType::F16 | DType::F32)
    }

    /// The code the kernels take as a compile-time constant.
    pub(crate) fn code(self) -> u32 {
        match self {
            DType::Bf16 => 0,
            DType::F16 => 1,
            DType::F32 => 2,
            DType::Fp8E4m3 => 3,
            DType::Fp8E5m2 => 4,
        }
    }
}

/// How the partial values of a [`Placement::Partial`] tensor combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReduceOp {
    Sum,
    Max,
}

impl ReduceOp {
    pub(crate) fn code(self) -> u32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Max => 1,
        }
    }
}

/// How a tensor lies along one dimension of its mesh, as DTensor's placements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Split along tensor dimension `dim` into as many chunks as the mesh dimension has
    /// ranks, `torch.chunk`'s way: chunks of `ceil(len / ranks)`, the last ones shorter
    /// (possibly empty). Several mesh dimensions sharding one tensor dimension split it
    /// in mesh-dimension order (the second splits each chunk of the first).
    Shard(usize),
    /// Every rank along the mesh dimension holds the same values.
    Replicate,
    /// Every rank along the mesh dimension holds a partial value of the same block; the
    /// tensor is their sum or maximum. Only a source placement: resharding reduces it.
    Partial(ReduceOp),
}

/// An N-dimensional grid of a communicator's ranks: `ranks[i]` sits at the row-major
/// coordinates of `i` in `shape`.
///
/// ```
/// use cudajit::nccl::m2n::DeviceMesh;
///
/// let mesh = DeviceMesh::new(&[2, 4], (0..8).collect())?;
/// assert_eq!(mesh.coordinates_of(6), Some(vec![1, 2]));
/// assert!(DeviceMesh::new(&[2, 2], vec![0, 1, 2]).is_err()); // 4 places, 3 ranks
/// # Ok::<(), cudajit::nccl::m2n::M2nError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceMesh {
    shape: Vec<usize>,
    ranks: Vec<usize>,
}

impl DeviceMesh {
    /// A mesh of `shape` (every dimension at least 1) over `ranks` (distinct
    /// communicator ranks, as many as the shape has places).
    pub fn new(shape: &[usize], ranks: Vec<usize>) -> Result<Self, M2nError> {
        if shape.is_empty() {
            return Err(M2nError::mismatch(
                "mesh dimensions",
                0,
                "a mesh has at least one dimension",
            ));
        }
        if let Some(d) = shape.iter().position(|&n| n == 0) {
            return Err(M2nError::mismatch(
                "mesh dimension size",
                0,
                format!("mesh dimension {d} must hold at least 1 rank"),
            ));
        }
        let places = shape
            .iter()
            .try_fold(1usize, |p, &n| p.checked_mul(n))
            .unwrap_or(usize::MAX);
        if places != ranks.len() {
            return Err(M2nError::mismatch(
                "mesh ranks",
                ranks.len(),
                format!("a mesh of shape {shape:?} has {places} places, one rank each"),
            ));
        }
        let mut sorted = ranks.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(M2nError::mismatch(
                "mesh rank",
                w[0],
                "a rank appears once in a mesh",
            ));
        }
        Ok(DeviceMesh {
            shape: shape.to_vec(),
            ranks,
        })
    }

    /// A one-dimensional mesh over `ranks`.
    pub fn line(ranks: Vec<usize>) -> Result<Self, M2nError> {
        let n = ranks.len();
        DeviceMesh::new(&[n], ranks)
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn ranks(&self) -> &[usize] {
        &self.ranks
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The coordinates of communicator rank `rank`, if it is in the mesh.
    pub fn coordinates_of(&self, rank: usize) -> Option<Vec<usize>> {
        let mut index = self.ranks.iter().position(|&r| r == rank)?;
        let mut coordinates = vec![0; self.shape.len()];
        for d in (0..self.shape.len()).rev() {
            coordinates[d] = index % self.shape[d];
            index /= self.shape[d];
        }
        Some(coordinates)
    }

    /// The largest rank of the mesh.
    pub(crate) fn max_rank(&self) -> usize {
        self.ranks.iter().copied().max().unwrap_or(0)
    }
}

/// A block of the global tensor: per dimension, the first index and the length.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block {
    pub offset: Vec<usize>,
    pub len: Vec<usize>,
}

impl Block {
    /// Elements.
    pub fn volume(&self) -> usize {
        self.len.iter().product()
    }

    /// The common part of two blocks, if any element is in both.
    pub fn intersect(&self, other: &Block) -> Option<Block> {
        let mut offset = Vec::with_capacity(self.len.len());
        let mut len = Vec::with_capacity(self.len.len());
        for d in 0..self.len.len() {
            let lo = self.offset[d].max(other.offset[d]);
            let hi = (self.offset[d] + self.len[d]).min(other.offset[d] + other.len[d]);
            if hi <= lo {
                return None;
            }
            offset.push(lo);
            len.push(hi - lo);
        }
        Some(Block { offset, len })
    }
}

/// A distributed tensor's description: global shape, element type, mesh and a placement
/// per mesh dimension. Each rank of the mesh holds its [`TensorSpec::local_block`],
/// row-major and contiguous.
///
/// ```
/// use cudajit::nccl::m2n::{DType, DeviceMesh, Placement, TensorSpec};
///
/// // A [10 × 6] tensor split along dimension 0 over 4 ranks: rows 0..3, 3..6, 6..9, 9..10.
/// let mesh = DeviceMesh::line(vec![0, 1, 2, 3])?;
/// let spec = TensorSpec::new(&[10, 6], DType::F32, mesh, vec![Placement::Shard(0)])?;
/// let block = spec.local_block(3).unwrap();
/// assert_eq!((block.offset, block.len), (vec![9, 0], vec![1, 6]));
/// # Ok::<(), cudajit::nccl::m2n::M2nError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorSpec {
    shape: Vec<usize>,
    dtype: DType,
    mesh: DeviceMesh,
    placements: Vec<Placement>,
}

impl TensorSpec {
    /// Checked: a placement per mesh dimension, every `Shard(dim)` naming a dimension of
    /// the tensor, a reducible element type under `Partial`, and a size in bytes that fits
    /// the address space.
    pub fn new(
        shape: &[usize],
        dtype: DType,
        mesh: DeviceMesh,
        placements: Vec<Placement>,
    ) -> Result<Self, M2nError> {
        if shape.is_empty() {
            return Err(M2nError::mismatch(
                "tensor dimensions",
                0,
                "a tensor has at least one dimension",
            ));
        }
        if placements.len() != mesh.ndim() {
            return Err(M2nError::mismatch(
                "placements",
                placements.len(),
                format!("one placement per mesh dimension ({})", mesh.ndim()),
            ));
        }
        for (m, placement) in placements.iter().enumerate() {
            match *placement {
                Placement::Shard(dim) if dim >= shape.len() => {
                    return Err(M2nError::mismatch(
                        "shard dimension",
                        dim,
                        format!(
                            "Shard on mesh dimension {m} must name a tensor dimension (the tensor has {})",
                            shape.len()
                        ),
                    ));
                }
                Placement::Partial(_) if !dtype.reducible() => {
                    return Err(M2nError::mismatch(
                        "dtype",
                        dtype.size(),
                        format!("Partial on mesh dimension {m} needs a reducible element type (bf16, f16, f32), not {dtype:?}"),
                    ));
                }
                _ => {}
            }
        }
        let bytes = shape
            .iter()
            .try_fold(dtype.size(), |p, &n| p.checked_mul(n));
        if bytes.is_none() {
            return Err(M2nError::mismatch(
                "tensor shape",
                shape.len(),
                "its size in bytes overflows the address space",
            ));
        }
        Ok(TensorSpec {
            shape: shape.to_vec(),
            dtype,
            mesh,
            placements,
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn mesh(&self) -> &DeviceMesh {
        &self.mesh
    }

    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    /// The block of the global tensor communicator rank `rank` holds, or `None` when it
    /// is not in the mesh.
    pub fn local_block(&self, rank: usize) -> Option<Block> {
        let coordinates = self.mesh.coordinates_of(rank)?;
        let mut offset = vec![0; self.shape.len()];
        let mut len = self.shape.clone();
        for (m, placement) in self.placements.iter().enumerate() {
            if let Placement::Shard(dim) = *placement {
                let parts = self.mesh.shape[m];
                let chunk = len[dim].div_ceil(parts);
                let start = (coordinates[m] * chunk).min(len[dim]);
                let end = ((coordinates[m] + 1) * chunk).min(len[dim]);
                offset[dim] += start;
                len[dim] = end - start;
            }
        }
        Some(Block { offset, len })
    }

    /// The shape of `rank`'s local shard (`None` outside the mesh).
    pub fn local_shape(&self, rank: usize) -> Option<Vec<usize>> {
        self.local_block(rank).map(|b| b.len)
    }

    /// Elements of `rank`'s local shard (0 outside the mesh).
    pub fn local_elements(&self, rank: usize) -> usize {
        self.local_block(rank).map_or(0, |b| b.volume())
    }

    /// Which partial value `rank` holds: its coordinates along the `Partial` mesh
    /// dimensions, row-major (0 when there are none); `None` outside the mesh.
    pub fn partial_index(&self, rank: usize) -> Option<usize> {
        let coordinates = self.mesh.coordinates_of(rank)?;
        let mut index = 0;
        for (m, placement) in self.placements.iter().enumerate() {
            if matches!(placement, Placement::Partial(_)) {
                index = index * self.mesh.shape[m] + coordinates[m];
            }
        }
        Some(index)
    }

    /// How many partial values the tensor is the reduction of (1 without `Partial`).
    pub fn partials(&self) -> usize {
        self.placements
            .iter()
            .zip(&self.mesh.shape)
            .filter(|(p, _)| matches!(p, Placement::Partial(_)))
            .map(|(_, &n)| n)
            .product()
    }

    /// The reduction of the `Partial` placements (they must all agree).
    pub(crate) fn reduce_op(&self) -> Result<Option<ReduceOp>, M2nError> {
        let mut op = None;
        for (m, placement) in self.placements.iter().enumerate() {
            if let Placement::Partial(o) = *placement {
                match op {
                    Some(previous) if previous != o => {
                        return Err(M2nError::mismatch(
                            "partial reduction",
                            m,
                            format!("Partial on mesh dimension {m} is {o:?}, another is {previous:?}: one reduction per tensor"),
                        ));
                    }
                    _ => op = Some(o),
                }
            }
        }
        Ok(op)
    }
}
