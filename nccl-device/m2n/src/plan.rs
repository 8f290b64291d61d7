//! Planning a reshard on the host: for every destination rank, the blocks it needs from
//! each distinct source shard, who sends each one when several ranks hold it (balancing
//! the bytes over the replicas), a check that every destination element comes exactly
//! once, and the contiguous runs of bytes the kernels move.

use std::collections::BTreeMap;

use super::error::M2nError;
use super::model::{Block, Placement, ReduceOp, TensorSpec};

/// One block a destination rank receives: the same block of every partial value (one
/// source rank each, in partial-index order; one source without `Partial`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The communicator rank receiving it.
    pub destination: usize,
    /// Where it lies in the global tensor.
    pub block: Block,
    /// The block of the global tensor its sources hold (their local shard).
    pub source_block: Block,
    /// The communicator ranks sending it: one per partial value, in partial-index order.
    pub sources: Vec<usize>,
}

/// A contiguous run of elements one destination receives, the same offset in each of
/// its sources' local shards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) destination: usize,
    /// Elements into the destination's local shard.
    pub(crate) destination_offset: usize,
    /// Elements into each source's local shard.
    pub(crate) source_offset: usize,
    pub(crate) len: usize,
    pub(crate) sources: Vec<usize>,
}

/// Runs longer than this many bytes are split, so that the warps of the grid share one
/// long run (16-byte multiples keep the pieces vector-aligned).
pub const RUN_BYTES: usize = 64 * 1024;

/// The transform from one layout to another, computed once ([`plan`]) and run any number
/// of times by a [`super::ReshardHandle`].
///
/// ```
/// use cudajit::nccl::m2n::{plan, DType, DeviceMesh, Placement, TensorSpec};
///
/// // [8 × 6] columns over ranks 0..4 → rows over ranks 4 and 5.
/// let src = TensorSpec::new(&[8, 6], DType::Bf16, DeviceMesh::line(vec![0, 1, 2, 3])?,
///     vec![Placement::Shard(1)])?;
/// let dst = TensorSpec::new(&[8, 6], DType::Bf16, DeviceMesh::line(vec![4, 5])?,
///     vec![Placement::Shard(0)])?;
/// let plan = plan(&src, &dst)?;
/// // Each destination gets a [4 × 2] block of rank 0, 1 and 2 (rank 3's shard is empty).
/// assert_eq!(plan.pieces().len(), 6);
/// assert_eq!(plan.bytes_sent_by(0), 2 * 4 * 2 * 2);
/// # Ok::<(), cudajit::nccl::m2n::M2nError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ReshardPlan {
    source: TensorSpec,
    destination: TensorSpec,
    op: Option<ReduceOp>,
    pieces: Vec<Piece>,
}

/// Plans moving a tensor laid out as `source` to the layout `destination`: the same
/// global shape and element type, the meshes any two sets of ranks (disjoint,
/// overlapping, of other sizes and shapes). `Partial` sources are reduced on the way
/// (their partial values summed or maximised into the destination); a destination has no
/// `Partial` placement.
pub fn plan(source: &TensorSpec, destination: &TensorSpec) -> Result<ReshardPlan, M2nError> {
    if source.shape().len() != destination.shape().len() {
        return Err(M2nError::mismatch(
            "tensor dimensions",
            destination.shape().len(),
            format!(
                "the destination must have the source's {} dimensions",
                source.shape().len()
            ),
        ));
    }
    for (d, (&s, &t)) in source.shape().iter().zip(destination.shape()).enumerate() {
        if s != t {
            return Err(M2nError::mismatch(
                "global shape",
                t,
                format!("the destination's dimension {d} must be the source's ({s})"),
            ));
        }
    }
    if source.dtype() != destination.dtype() {
        return Err(M2nError::mismatch(
            "dtype",
            destination.dtype().size(),
            format!(
                "the destination's element type ({:?}) must be the source's ({:?}): a reshard does not convert",
                destination.dtype(),
                source.dtype()
            ),
        ));
    }
    if let Some(m) = destination
        .placements()
        .iter()
        .position(|p| matches!(p, Placement::Partial(_)))
    {
        return Err(M2nError::mismatch(
            "destination placement",
            m,
            format!("mesh dimension {m} of the destination is Partial: a reshard reduces Partial sources, it does not make partial values (use Replicate or Shard)"),
        ));
    }
    let op = source.reduce_op()?;
    let partials = source.partials();

    // The distinct source shards: for each block, the ranks holding each partial value.
    let mut shards: BTreeMap<Block, Vec<Vec<usize>>> = BTreeMap::new();
    for &rank in source.mesh().ranks() {
        let (Some(block), Some(p)) = (source.local_block(rank), source.partial_index(rank)) else {
            continue;
        };
        if block.volume() == 0 {
            continue;
        }
        shards
            .entry(block)
            .or_insert_with(|| vec![Vec::new(); partials])[p]
            .push(rank);
    }

    // Bytes each source rank sends so far: a block held by several replicas goes to the
    // one that has sent least (the destination itself first: its copy stays local).
    let mut load: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pieces = Vec::new();
    for &rank in destination.mesh().ranks() {
        let Some(wanted) = destination.local_block(rank) else {
            continue;
        };
        if wanted.volume() == 0 {
            continue;
        }
        let first = pieces.len();
        for (held, replicas) in &shards {
            let Some(block) = wanted.intersect(held) else {
                continue;
            };
            let bytes = block.volume() * source.dtype().size();
            let mut sources = Vec::with_capacity(partials);
            for (p, candidates) in replicas.iter().enumerate() {
                let chosen = if candidates.contains(&rank) {
                    rank
                } else {
                    *candidates
                        .iter()
                        .min_by_key(|r| load.get(r).copied().unwrap_or(0))
                        .ok_or(M2nError::Coverage {
                            rank,
                            expected: wanted.volume(),
                            covered: 0,
                            how: if p == 0 {
                                "(a source shard has no rank)"
                            } else {
                                "(a partial value of a source shard has no rank)"
                            },
                        })?
                };
                *load.entry(chosen).or_insert(0) += bytes;
                sources.push(chosen);
            }
            pieces.push(Piece {
                destination: rank,
                block,
                source_block: held.clone(),
                sources,
            });
        }
        check_coverage(rank, &wanted, &pieces[first..], partials)?;
    }
    Ok(ReshardPlan {
        source: source.clone(),
        destination: destination.clone(),
        op,
        pieces,
    })
}

/// Every element of `wanted` in exactly one piece, each piece inside `wanted` with a
/// source per partial value.
fn check_coverage(
    rank: usize,
    wanted: &Block,
    pieces: &[Piece],
    partials: usize,
) -> Result<(), M2nError> {
    let covered: usize = pieces.iter().map(|p| p.block.volume()).sum();
    let coverage = |how| M2nError::Coverage {
        rank,
        expected: wanted.volume(),
        covered,
        how,
    };
    for (i, a) in pieces.iter().enumerate() {
        if wanted.intersect(&a.block).as_ref() != Some(&a.block) {
            return Err(coverage("(a piece lies outside the shard)"));
        }
        if a.sources.len() != partials {
            return Err(coverage("(a piece lacks a partial value)"));
        }
        if pieces[i + 1..]
            .iter()
            .any(|b| a.block.intersect(&b.block).is_some())
        {
            return Err(coverage("(two pieces overlap)"));
        }
    }
    if covered != wanted.volume() {
        return Err(coverage("(elements are missing)"));
    }
    Ok(())
}

impl ReshardPlan {
    pub fn source(&self) -> &TensorSpec {
        &self.source
    }

    pub fn destination(&self) -> &TensorSpec {
        &self.destination
    }

    /// Every block moved, by destination rank in mesh order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// How the partial values of a `Partial` source combine (`None`: no reduction).
    pub fn reduce_op(&self) -> Option<ReduceOp> {
        self.op
    }

    /// The bytes rank `rank` sends (its own destination's included).
    pub fn bytes_sent_by(&self, rank: usize) -> usize {
        let size = self.source.dtype().size();
        self.pieces
            .iter()
            .map(|p| p.sources.iter().filter(|&&s| s == rank).count() * p.block.volume() * size)
            .sum()
    }

    /// The bytes rank `rank` receives from other ranks (its local copies left out).
    pub fn bytes_received_from_peers(&self, rank: usize) -> usize {
        let size = self.source.dtype().size();
        self.pieces
            .iter()
            .filter(|p| p.destination == rank)
            .map(|p| p.sources.iter().filter(|&&s| s != rank).count() * p.block.volume() * size)
            .sum()
    }

    /// The contiguous runs the kernels move, at most [`RUN_BYTES`] each.
    pub(crate) fn runs(&self) -> Vec<Run> {
        let size = self.source.dtype().size();
        let most = (RUN_BYTES / size).max(1);
        let mut runs = Vec::new();
        for piece in &self.pieces {
            let Some(wanted) = self.destination.local_block(piece.destination) else {
                continue;
            };
            for (source_offset, destination_offset, len) in
                segments(&piece.block, &piece.source_block, &wanted)
            {
                let mut done = 0;
                while done < len {
                    let n = most.min(len - done);
                    runs.push(Run {
                        destination: piece.destination,
                        destination_offset: destination_offset + done,
                        source_offset: source_offset + done,
                        len: n,
                        sources: piece.sources.clone(),
                    });
                    done += n;
                }
            }
        }
        runs
    }
}

/// The contiguous runs of `piece` in the row-major layouts of the shards `source` and
/// `destination` hold: `(source offset, destination offset, elements)`. Trailing
/// dimensions the piece spans whole in both shards merge into one run.
pub(crate) fn segments(
    piece: &Block,
    source: &Block,
    destination: &Block,
) -> Vec<(usize, usize, usize)> {
    let n = piece.len.len();
    let mut k = n - 1;
    while k > 0 && piece.len[k] == source.len[k] && piece.len[k] == destination.len[k] {
        k -= 1;
    }
    let run: usize = piece.len[k..].iter().product();
    let strides = |shape: &[usize]| {
        let mut s = vec![1usize; n];
        for d in (0..n - 1).rev() {
            s[d] = s[d + 1] * shape[d + 1];
        }
        s
    };
    let (source_strides, destination_strides) = (strides(&source.len), strides(&destination.len));
    let outer: usize = piece.len[..k].iter().product();
    let mut out = Vec::with_capacity(outer);
    let mut index = vec![0usize; k];
    for _ in 0..outer {
        let (mut s, mut t) = (0, 0);
        for d in 0..n {
            let g = piece.offset[d] + if d < k { index[d] } else { 0 };
            s += (g - source.offset[d]) * source_strides[d];
            t += (g - destination.offset[d]) * destination_strides[d];
        }
        out.push((s, t, run));
        // The next index of the outer dimensions, row-major.
        for d in (0..k).rev() {
            index[d] += 1;
            if index[d] < piece.len[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DType, DeviceMesh};

    fn spec(shape: &[usize], mesh: &[usize], ranks: Vec<usize>, p: Vec<Placement>) -> TensorSpec {
        TensorSpec::new(shape, DType::F32, DeviceMesh::new(mesh, ranks).unwrap(), p).unwrap()
    }

    #[test]
    fn segments_merge_whole_trailing_dimensions() {
        let whole = Block {
            offset: vec![0, 0, 0],
            len: vec![4, 3, 5],
        };
        // Rows 1..3 of a [4 × 3 × 5] tensor: one run of 2 × 15.
        let rows = Block {
            offset: vec![1, 0, 0],
            len: vec![2, 3, 5],
        };
        assert_eq!(segments(&rows, &whole, &rows), vec![(15, 0, 30)]);
        // Columns 1..3 of dimension 2: 12 runs of 2.
        let cols = Block {
            offset: vec![0, 0, 1],
            len: vec![4, 3, 2],
        };
        let s = segments(&cols, &whole, &cols);
        assert_eq!(s.len(), 12);
        assert_eq!(s[0], (1, 0, 2));
        assert_eq!(s[1], (6, 2, 2));
        assert_eq!(s[11], (3 * 15 + 2 * 5 + 1, 22, 2));
    }

    #[test]
    fn uneven_shards_and_empty_ones() {
        let s = spec(&[5, 2], &[4], vec![0, 1, 2, 3], vec![Placement::Shard(0)]);
        let lens: Vec<usize> = (0..4).map(|r| s.local_block(r).unwrap().len[0]).collect();
        assert_eq!(lens, [2, 2, 1, 0]);
        // Two mesh dimensions on one tensor dimension: nested chunks.
        let s = spec(
            &[10],
            &[2, 2],
            vec![0, 1, 2, 3],
            vec![Placement::Shard(0), Placement::Shard(0)],
        );
        let blocks: Vec<(usize, usize)> = (0..4)
            .map(|r| {
                let b = s.local_block(r).unwrap();
                (b.offset[0], b.len[0])
            })
            .collect();
        assert_eq!(blocks, [(0, 3), (3, 2), (5, 3), (8, 2)]);
    }

    #[test]
    fn replicas_share_the_load_and_a_destination_reads_its_own_copy() {
        // A [8 × 4] tensor replicated on ranks 0..4, to rows over ranks 0..4 and 4..8.
        let src = spec(&[8, 4], &[4], vec![0, 1, 2, 3], vec![Placement::Replicate]);
        let dst = spec(&[8, 4], &[8], (0..8).collect(), vec![Placement::Shard(0)]);
        let p = plan(&src, &dst).unwrap();
        for piece in &p.pieces()[..4] {
            assert_eq!(piece.sources, [piece.destination]);
        }
        let sent: Vec<usize> = (0..4).map(|r| p.bytes_sent_by(r)).collect();
        assert_eq!(sent, [32, 32, 32, 32]);
    }

    #[test]
    fn partial_pieces_name_one_source_per_partial_value() {
        let src = spec(
            &[6],
            &[2, 2],
            vec![0, 1, 2, 3],
            vec![Placement::Partial(ReduceOp::Sum), Placement::Shard(0)],
        );
        let dst = spec(&[6], &[1], vec![5], vec![Placement::Replicate]);
        let p = plan(&src, &dst).unwrap();
        let sources: Vec<Vec<usize>> = p.pieces().iter().map(|x| x.sources.clone()).collect();
        assert_eq!(sources, [vec![0, 2], vec![1, 3]]);
    }

    #[test]
    fn mismatches_name_their_dimension() {
        let a = spec(&[8, 4], &[2], vec![0, 1], vec![Placement::Shard(0)]);
        let b = spec(&[8, 5], &[2], vec![0, 1], vec![Placement::Shard(0)]);
        assert_eq!(plan(&a, &b).unwrap_err().dimension(), Some("global shape"));
        let partial = spec(
            &[8, 4],
            &[2],
            vec![0, 1],
            vec![Placement::Partial(ReduceOp::Max)],
        );
        assert_eq!(
            plan(&a, &partial).unwrap_err().dimension(),
            Some("destination placement")
        );
        let fp8 = DeviceMesh::line(vec![0, 1]).unwrap();
        let err = TensorSpec::new(
            &[4],
            DType::Fp8E4m3,
            fp8,
            vec![Placement::Partial(ReduceOp::Sum)],
        )
        .unwrap_err();
        assert_eq!(err.dimension(), Some("dtype"));
    }

    #[test]
    fn coverage_catches_overlaps_and_holes() {
        let wanted = Block {
            offset: vec![0],
            len: vec![4],
        };
        let piece = |o, l| Piece {
            destination: 0,
            block: Block {
                offset: vec![o],
                len: vec![l],
            },
            source_block: wanted.clone(),
            sources: vec![1],
        };
        assert!(check_coverage(0, &wanted, &[piece(0, 2), piece(2, 2)], 1).is_ok());
        assert!(check_coverage(0, &wanted, &[piece(0, 3), piece(2, 2)], 1).is_err());
        assert!(check_coverage(0, &wanted, &[piece(0, 2), piece(3, 1)], 1).is_err());
        assert!(check_coverage(0, &wanted, &[piece(0, 4)], 2).is_err());
    }
}
