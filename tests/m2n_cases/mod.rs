//! The reshard cases and their host reference, shared by tests/m2n_sim.rs (simulated
//! ranks) and tests/m2n_gpu.rs (every GPU of the machine).

#![allow(dead_code)]

use cudajit::nccl::m2n::{
    plan, DType, DeviceMesh, DistributedTensor, Element, M2nConfig, M2nRanks, Placement, ReduceOp,
    ReshardHandle, TensorSpec,
};
use cudajit::{bf16, f16, BufferElement, Stream};

use Placement::{Partial, Replicate, Shard};

/// An element type of the tests: made from a small integer (exact in every type, and so
/// are the sums of up to 8 of them), and reduced in `f32` as the kernels do.
pub trait TestElement: Element + BufferElement + PartialEq + std::fmt::Debug {
    const DTYPE: DType;
    fn make(v: i32) -> Self;
    fn to_f32(self) -> f32;
    fn from_f32(x: f32) -> Self;
}

impl TestElement for f32 {
    const DTYPE: DType = DType::F32;
    fn make(v: i32) -> Self {
        v as f32
    }
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(x: f32) -> Self {
        x
    }
}

impl TestElement for bf16 {
    const DTYPE: DType = DType::Bf16;
    fn make(v: i32) -> Self {
        bf16::from_f32(v as f32)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
}

impl TestElement for f16 {
    const DTYPE: DType = DType::F16;
    fn make(v: i32) -> Self {
        f16::from_f32(v as f32)
    }
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
}

/// FP8 e4m3 bytes: any byte (they are copied, never reduced).
impl TestElement for u8 {
    const DTYPE: DType = DType::Fp8E4m3;
    fn make(v: i32) -> Self {
        v.rem_euclid(256) as u8
    }
    fn to_f32(self) -> f32 {
        unreachable!("FP8 is never reduced")
    }
    fn from_f32(_: f32) -> Self {
        unreachable!("FP8 is never reduced")
    }
}

/// One layout: mesh shape, mesh ranks, placements.
#[derive(Clone, Debug)]
pub struct Layout {
    pub mesh: Vec<usize>,
    pub ranks: Vec<usize>,
    pub placements: Vec<Placement>,
}

pub fn layout(mesh: &[usize], ranks: impl IntoIterator<Item = usize>, p: &[Placement]) -> Layout {
    Layout {
        mesh: mesh.to_vec(),
        ranks: ranks.into_iter().collect(),
        placements: p.to_vec(),
    }
}

impl Layout {
    pub fn spec(&self, shape: &[usize], dtype: DType) -> TensorSpec {
        let mesh = DeviceMesh::new(&self.mesh, self.ranks.clone()).unwrap();
        TensorSpec::new(shape, dtype, mesh, self.placements.clone()).unwrap()
    }

    /// The reference's own chunking: `rank`'s `(offset, len)` per tensor dimension and
    /// its partial index, `None` outside the mesh.
    pub fn shard(&self, shape: &[usize], rank: usize) -> Option<(Vec<usize>, Vec<usize>, usize)> {
        let place = self.ranks.iter().position(|&r| r == rank)?;
        // Row-major coordinates of `place` in the mesh.
        let mut coords = Vec::new();
        let mut rest = place;
        for m in (0..self.mesh.len()).rev() {
            coords.insert(0, rest % self.mesh[m]);
            rest /= self.mesh[m];
        }
        let mut lo: Vec<usize> = vec![0; shape.len()];
        let mut hi: Vec<usize> = shape.to_vec();
        let mut partial = 0;
        for (m, p) in self.placements.iter().enumerate() {
            match *p {
                Shard(d) => {
                    let len = hi[d] - lo[d];
                    let chunk = len.div_ceil(self.mesh[m]);
                    let start = lo[d] + (coords[m] * chunk).min(len);
                    let end = lo[d] + ((coords[m] + 1) * chunk).min(len);
                    lo[d] = start;
                    hi[d] = end;
                }
                Partial(_) => partial = partial * self.mesh[m] + coords[m],
                Replicate => {}
            }
        }
        let len = lo.iter().zip(&hi).map(|(l, h)| h - l).collect();
        Some((lo, len, partial))
    }

    pub fn partials(&self) -> usize {
        self.placements
            .iter()
            .zip(&self.mesh)
            .filter(|(p, _)| matches!(p, Partial(_)))
            .map(|(_, n)| n)
            .product()
    }

    pub fn op(&self) -> Option<ReduceOp> {
        self.placements.iter().find_map(|p| match p {
            Partial(op) => Some(*op),
            _ => None,
        })
    }
}

/// The elements of the block `(offset, len)` of a row-major global tensor of `shape`,
/// row-major, by `value(global linear index)`.
pub fn slice<T>(
    shape: &[usize],
    offset: &[usize],
    len: &[usize],
    value: impl Fn(usize) -> T,
) -> Vec<T> {
    let count: usize = len.iter().product();
    let mut out = Vec::with_capacity(count);
    let mut index = vec![0usize; len.len()];
    for _ in 0..count {
        let mut linear = 0;
        for d in 0..shape.len() {
            linear = linear * shape[d] + offset[d] + index[d];
        }
        out.push(value(linear));
        for d in (0..len.len()).rev() {
            index[d] += 1;
            if index[d] < len[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// The value of partial `p` of the global tensor at linear index `i`, in round `round`.
pub fn value(i: usize, p: usize, round: usize) -> i32 {
    ((i * 7 + p * 13 + round * 5) % 61) as i32 - 30
}

/// A reshard case.
#[derive(Clone, Debug)]
pub struct Case {
    pub world: usize,
    pub shape: Vec<usize>,
    pub src: Layout,
    pub dst: Layout,
}

pub fn case(world: usize, shape: &[usize], src: Layout, dst: Layout) -> Case {
    Case {
        world,
        shape: shape.to_vec(),
        src,
        dst,
    }
}

/// How a round of [`run`] reshards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Form {
    /// `reshard`: the handle's source and destination windows, through staging.
    Staged,
    /// `reshard_with_window`: from a caller's window into the handle's destination.
    Window,
    /// `reshard_tensor`: distributed tensor to distributed tensor, through staging.
    Tensors,
    /// `reshard_tensor_with_window`: distributed tensor to distributed tensor, straight.
    TensorsDirect,
}

/// Runs `case` with elements `T` in every form, one after the other on one handle, each
/// round with other values; every rank's destination compared with the reference.
pub fn run<T: TestElement>(ranks: M2nRanks<'_>, case: &Case) {
    eprintln!("{:?}: {case:?}", T::DTYPE);
    assert_eq!(ranks.nranks(), case.world, "the case's world");
    let src = case.src.spec(&case.shape, T::DTYPE);
    let dst = case.dst.spec(&case.shape, T::DTYPE);
    let config = M2nConfig {
        ctas: 3,
        threads: 64,
    };
    let handle = ReshardHandle::new(ranks, plan(&src, &dst).unwrap(), config)
        .unwrap_or_else(|e| panic!("{e}"));
    let streams: Vec<Stream> = (0..case.world).map(|r| handle.stream(r).unwrap()).collect();
    let most = (0..case.world)
        .filter_map(|r| case.src.shard(&case.shape, r))
        .map(|(_, len, _)| len.iter().product::<usize>())
        .max()
        .unwrap_or(0);
    let window = ranks.alloc::<T>(most.max(1)).unwrap();
    let x = DistributedTensor::<T>::new(ranks, src.clone()).unwrap();
    let y = DistributedTensor::<T>::new(ranks, dst.clone()).unwrap();
    let forms = [
        Form::Staged,
        Form::Window,
        Form::Tensors,
        Form::TensorsDirect,
        Form::Staged,
    ];
    for (round, form) in forms.into_iter().enumerate() {
        for rank in 0..case.world {
            let shard = match case.src.shard(&case.shape, rank) {
                Some((offset, len, p)) => {
                    slice(&case.shape, &offset, &len, |i| T::make(value(i, p, round)))
                }
                None => Vec::new(),
            };
            match form {
                Form::Staged => handle.write_source(rank, &shard).unwrap(),
                Form::Window if !shard.is_empty() => window.copy_from_host(rank, &shard).unwrap(),
                Form::Window => {}
                Form::Tensors | Form::TensorsDirect => x.write_local(rank, &shard).unwrap(),
            }
        }
        for (rank, stream) in streams.iter().enumerate() {
            match form {
                Form::Staged => handle.reshard(rank, stream),
                Form::Window => handle.reshard_with_window(rank, stream, &window),
                Form::Tensors => handle.reshard_tensor(rank, stream, &x, &y),
                Form::TensorsDirect => handle.reshard_tensor_with_window(rank, stream, &x, &y),
            }
            .unwrap();
        }
        match ranks {
            M2nRanks::Sim(world) => world.synchronize().unwrap_or_else(|e| panic!("{e}")),
            _ => streams.iter().for_each(|s| s.synchronize().unwrap()),
        }
        let partials = case.src.partials();
        let op = case.src.op();
        for rank in 0..case.world {
            let got = match form {
                Form::Staged | Form::Window => handle.read_destination::<T>(rank).unwrap(),
                Form::Tensors | Form::TensorsDirect => y.read_local(rank).unwrap(),
            };
            let expected = match case.dst.shard(&case.shape, rank) {
                Some((offset, len, _)) => slice(&case.shape, &offset, &len, |i| match op {
                    None => T::make(value(i, 0, round)),
                    Some(op) => {
                        let mut acc = T::make(value(i, 0, round)).to_f32();
                        for p in 1..partials {
                            let x = T::make(value(i, p, round)).to_f32();
                            acc = match op {
                                ReduceOp::Sum => acc + x,
                                _ => acc.max(x),
                            };
                        }
                        T::from_f32(acc)
                    }
                }),
                None => Vec::new(),
            };
            assert_eq!(got.len(), expected.len(), "rank {rank}, round {round}");
            for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(g, e, "rank {rank}, round {round} ({form:?}), element {k}");
            }
        }
    }
}
