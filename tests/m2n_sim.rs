//! M-to-N resharding (`cudajit::nccl::m2n`) on 2, 4 and 8 simulated ranks: every
//! placement pair (Shard↔Shard on the same and other dimensions, Shard↔Replicate,
//! Replicate→Shard, Partial→Replicate, Partial→Shard), 1-, 2- and 3-dimensional tensors,
//! 2-D meshes, M ≠ N, disjoint and overlapping meshes, uneven and empty shards, sizes that
//! are not multiples of the 16-byte vector, runs long enough to be split, bf16, f16, f32
//! and FP8 bytes, both execution forms on one handle (planned once, run several times), from and into the
//! handle's windows, a caller's window and distributed tensors.
//! Every destination shard is compared element by element with a host reference that
//! builds the global tensor and slices it per rank with its own chunking, independent of
//! the planner; and every mismatch the API checks is an error naming its dimension. No
//! GPU and no NCCL library needed.

mod common;
mod m2n_cases;

use cudajit::nccl::m2n::{
    plan, DType, DeviceMesh, DistributedTensor, M2nConfig, M2nError, M2nRanks, Placement, ReduceOp,
    ReshardHandle, SymmetricTensor, TensorSpec,
};
use cudajit::nccl::sim::SimWorld;
use cudajit::{bf16, f16};

use common::sim::world;
use m2n_cases::{case, layout, Case, TestElement};

use Placement::{Partial, Replicate, Shard};

const SUM: Placement = Partial(ReduceOp::Sum);
const MAX: Placement = Partial(ReduceOp::Max);

/// [`m2n_cases::run`] on a simulated world of the case's ranks.
fn run<T: TestElement>(case: &Case) {
    let world = world(case.world);
    m2n_cases::run::<T>(M2nRanks::Sim(&world), case);
}

#[test]
fn shard_to_shard_on_other_and_same_dimensions() {
    for n in [2, 4, 8] {
        // Rows to columns on one mesh; odd sizes, uneven shards.
        let rows = layout(&[n], 0..n, &[Shard(0)]);
        let cols = layout(&[n], 0..n, &[Shard(1)]);
        run::<f32>(&case(n, &[11, 7], rows.clone(), cols.clone()));
        run::<bf16>(&case(n, &[11, 7], cols, rows));
        // The same dimension over another number of ranks (M ≠ N, overlapping).
        let fewer = layout(&[n - 1], 0..n - 1, &[Shard(0)]);
        let all = layout(&[n], 0..n, &[Shard(0)]);
        run::<f16>(&case(n, &[13, 5], all.clone(), fewer.clone()));
        run::<f32>(&case(n, &[13, 5], fewer, all));
    }
}

#[test]
fn shard_and_replicate_both_ways() {
    for n in [2, 4, 8] {
        let shard = layout(&[n], 0..n, &[Shard(1)]);
        let replicate = layout(&[n], 0..n, &[Replicate]);
        run::<bf16>(&case(n, &[5, 9], shard.clone(), replicate.clone()));
        run::<f16>(&case(n, &[5, 9], replicate.clone(), shard));
        // Replicated on half the ranks, to rows on all: the replicas share the sends.
        let half = layout(&[n / 2], 0..n / 2, &[Replicate]);
        let rows = layout(&[n], (0..n).rev(), &[Shard(0)]);
        run::<f32>(&case(n, &[9, 6], half, rows));
    }
}

#[test]
fn partial_to_replicate_and_to_shard() {
    for n in [2, 4, 8] {
        let sum = layout(&[n], 0..n, &[SUM]);
        let max = layout(&[n], 0..n, &[MAX]);
        let replicate = layout(&[n], 0..n, &[Replicate]);
        let rows = layout(&[n], 0..n, &[Shard(0)]);
        // All-reduce and reduce-scatter.
        run::<f32>(&case(n, &[7, 3], sum.clone(), replicate.clone()));
        run::<bf16>(&case(n, &[10, 3], sum.clone(), rows.clone()));
        run::<f16>(&case(n, &[10, 3], max.clone(), rows));
        run::<f32>(&case(n, &[6, 5], max, replicate));
        // To other ranks, fewer of them.
        let other = layout(&[1], [n - 1], &[Shard(1)]);
        run::<bf16>(&case(n, &[4, 9], sum, other));
    }
}

/// 2 × 4 → 4 × 2 and other 2-D meshes, with placements on both mesh dimensions.
#[test]
fn two_dimensional_meshes() {
    let src = layout(&[2, 4], 0..8, &[Shard(0), Shard(1)]);
    let dst = layout(&[4, 2], 0..8, &[Shard(1), Replicate]);
    run::<f32>(&case(8, &[9, 10], src, dst));
    // Two mesh dimensions sharding one tensor dimension (nested chunks), to a 2 × 2 mesh
    // on other ranks.
    let nested = layout(&[2, 4], 0..8, &[Shard(0), Shard(0)]);
    let square = layout(&[2, 2], [7, 5, 3, 1], &[Replicate, Shard(0)]);
    run::<bf16>(&case(8, &[19, 3], nested, square));
    // A partial sum over mesh dimension 0 of a 2 × 2 mesh, sharded along its dimension 1,
    // to a 1-D mesh of other ranks (disjoint).
    let partial = layout(&[2, 2], 0..4, &[SUM, Shard(1)]);
    let rows = layout(&[4], 4..8, &[Shard(0)]);
    run::<f16>(&case(8, &[6, 7], partial.clone(), rows));
    let replicated = layout(&[2, 2], 0..4, &[Replicate, Replicate]);
    run::<f32>(&case(4, &[6, 7], partial, replicated));
    // Partial over both dimensions: 4 values per element.
    let both = layout(&[2, 2], 0..4, &[SUM, SUM]);
    let one = layout(&[1], [2], &[Replicate]);
    run::<bf16>(&case(4, &[5, 3], both, one));
}

/// Disjoint meshes of other sizes (the issue's example, smaller): a weight sharded
/// `Shard(1)` over 4 ranks, to `Shard(0)` over 2 with a replica each.
#[test]
fn disjoint_and_overlapping_meshes() {
    let src = layout(&[4], 0..4, &[Shard(1)]);
    let disjoint = layout(&[2, 2], 4..8, &[Shard(0), Replicate]);
    run::<bf16>(&case(8, &[16, 56], src.clone(), disjoint));
    let overlapping = layout(&[2, 2], [2, 3, 4, 5], &[Shard(0), Replicate]);
    run::<bf16>(&case(8, &[16, 56], src.clone(), overlapping));
    // Two meshes sharing only rank 0, 3-D tensor.
    let a = layout(&[3], [0, 1, 2], &[Shard(2)]);
    let b = layout(&[2], [3, 0], &[Shard(0)]);
    run::<f32>(&case(4, &[3, 4, 5], a, b));
}

/// Shards of no elements (5 rows over 4 ranks: 2, 2, 1, 0; 3 over 4: 1, 1, 1, 0) on
/// either side, and a destination that is entirely empty on some ranks.
#[test]
fn zero_sized_shards() {
    let rows = layout(&[4], 0..4, &[Shard(0)]);
    let cols = layout(&[4], 0..4, &[Shard(1)]);
    run::<f32>(&case(4, &[5, 3], rows.clone(), cols.clone()));
    run::<bf16>(&case(4, &[3, 5], cols, rows.clone()));
    run::<f16>(&case(4, &[3, 2], rows, layout(&[2], [3, 1], &[Shard(1)])));
}

/// FP8 bytes on odd sizes (1-byte words) and on rows of 16-byte multiples (vectors).
#[test]
fn fp8_bytes() {
    for n in [2, 4] {
        let rows = layout(&[n], 0..n, &[Shard(0)]);
        let cols = layout(&[n], 0..n, &[Shard(1)]);
        run::<u8>(&case(n, &[9, 13], rows.clone(), cols.clone()));
        run::<u8>(&case(n, &[8, 64], cols, layout(&[n], 0..n, &[Replicate])));
    }
}

/// Rows of 16-byte multiples move as vectors; a shard of more than `RUN_BYTES` in one run
/// is split among the warps.
#[test]
fn vector_rows_and_split_runs() {
    let rows = layout(&[2], 0..2, &[Shard(0)]);
    let cols = layout(&[2], 0..2, &[Shard(1)]);
    run::<bf16>(&case(2, &[16, 64], rows.clone(), cols));
    // 150 × 128 f32 per shard, 76.8 kB: more than one run.
    run::<f32>(&case(
        2,
        &[300, 128],
        rows,
        layout(&[2], [1, 0], &[Replicate]),
    ));
}

fn setup(world: &SimWorld) -> (ReshardHandle<'_>, TensorSpec) {
    let mesh = DeviceMesh::line(vec![0, 1]).unwrap();
    let src = TensorSpec::new(&[4, 4], DType::F32, mesh.clone(), vec![Shard(0)]).unwrap();
    let dst = TensorSpec::new(&[4, 4], DType::F32, mesh, vec![Shard(1)]).unwrap();
    let config = M2nConfig {
        ctas: 1,
        threads: 32,
    };
    let handle = ReshardHandle::new(M2nRanks::Sim(world), plan(&src, &dst).unwrap(), config);
    (handle.unwrap(), src)
}

fn dimension<T: std::fmt::Debug>(r: Result<T, M2nError>) -> &'static str {
    let e = r.expect_err("an error");
    eprintln!("{e}");
    e.dimension()
        .unwrap_or_else(|| panic!("no dimension: {e:?}"))
}

#[test]
fn every_mismatch_is_an_error_naming_its_dimension() {
    let line = |r: Vec<usize>| DeviceMesh::line(r).unwrap();
    // Meshes.
    assert_eq!(dimension(DeviceMesh::new(&[], vec![])), "mesh dimensions");
    assert_eq!(
        dimension(DeviceMesh::new(&[2, 0], vec![])),
        "mesh dimension size"
    );
    assert_eq!(dimension(DeviceMesh::new(&[3], vec![0, 1])), "mesh ranks");
    assert_eq!(dimension(DeviceMesh::new(&[2], vec![1, 1])), "mesh rank");
    // Specs.
    let spec = |shape: &[usize], d, p| TensorSpec::new(shape, d, line(vec![0, 1]), p);
    assert_eq!(
        dimension(spec(&[], DType::F32, vec![Shard(0)])),
        "tensor dimensions"
    );
    assert_eq!(dimension(spec(&[4], DType::F32, vec![])), "placements");
    assert_eq!(
        dimension(spec(&[4], DType::F32, vec![Shard(1)])),
        "shard dimension"
    );
    assert_eq!(dimension(spec(&[4], DType::Fp8E5m2, vec![SUM])), "dtype");
    assert_eq!(
        dimension(spec(&[usize::MAX, 2], DType::F32, vec![Shard(0)])),
        "tensor shape"
    );
    let two = DeviceMesh::new(&[2, 2], (0..4).collect()).unwrap();
    let mixed = TensorSpec::new(&[4], DType::F32, two, vec![SUM, MAX]).unwrap();
    let rep = TensorSpec::new(&[4], DType::F32, line(vec![0]), vec![Replicate]).unwrap();
    assert_eq!(dimension(plan(&mixed, &rep)), "partial reduction");
    // Plans.
    let a = spec(&[4, 4], DType::F32, vec![Shard(0)]).unwrap();
    let b = spec(&[4, 5], DType::F32, vec![Shard(0)]).unwrap();
    let c = spec(&[4], DType::F32, vec![Shard(0)]).unwrap();
    let d = spec(&[4, 4], DType::Bf16, vec![Shard(0)]).unwrap();
    let e = spec(&[4, 4], DType::F32, vec![SUM]).unwrap();
    assert_eq!(dimension(plan(&a, &b)), "global shape");
    assert_eq!(dimension(plan(&a, &c)), "tensor dimensions");
    assert_eq!(dimension(plan(&a, &d)), "dtype");
    assert_eq!(dimension(plan(&a, &e)), "destination placement");

    // Handles and launches.
    let world = world(2);
    let ranks = M2nRanks::Sim(&world);
    let far = TensorSpec::new(&[4, 4], DType::F32, line(vec![0, 2]), vec![Shard(0)]).unwrap();
    let config = M2nConfig::default();
    assert_eq!(
        dimension(ReshardHandle::new(ranks, plan(&a, &far).unwrap(), config)),
        "destination mesh rank"
    );
    assert_eq!(
        dimension(ReshardHandle::new(ranks, plan(&far, &a).unwrap(), config)),
        "source mesh rank"
    );
    let odd = M2nConfig {
        ctas: 1,
        threads: 48,
    };
    assert_eq!(
        dimension(ReshardHandle::new(ranks, plan(&a, &a).unwrap(), odd)),
        "threads"
    );
    let none = M2nConfig {
        ctas: 0,
        threads: 32,
    };
    assert_eq!(
        dimension(ReshardHandle::new(ranks, plan(&a, &a).unwrap(), none)),
        "ctas"
    );
    let nodes = SimWorld::with_nodes(2, 1).unwrap();
    assert_eq!(
        dimension(ReshardHandle::new(
            M2nRanks::Sim(&nodes),
            plan(&a, &a).unwrap(),
            config
        )),
        "LSA team size"
    );

    let (handle, _) = setup(&world);
    assert_eq!(
        dimension(handle.write_source(0, &[bf16::ZERO; 8])),
        "element type"
    );
    assert_eq!(
        dimension(handle.write_source(0, &[0f32; 7])),
        "source shard elements"
    );
    assert_eq!(dimension(handle.write_source(2, &[0f32; 8])), "local rank");
    assert_eq!(dimension(handle.read_destination::<u8>(0)), "element type");
    let stream0 = handle.stream(0).unwrap();
    assert_eq!(dimension(handle.reshard(1, &stream0)), "stream");
    assert_eq!(dimension(handle.reshard(2, &stream0)), "local rank");
    let small = SymmetricTensor::Sim(world.alloc_symmetric::<f32>(7).unwrap());
    assert_eq!(
        dimension(handle.reshard_with_window(0, &stream0, &small)),
        "source window"
    );
    let halves = SymmetricTensor::Sim(world.alloc_symmetric::<f16>(8).unwrap());
    assert_eq!(
        dimension(handle.reshard_with_window(0, &stream0, &halves)),
        "element type"
    );
    // Distributed tensors.
    let rows = TensorSpec::new(&[4, 4], DType::F32, line(vec![0, 1]), vec![Shard(0)]).unwrap();
    let cols = TensorSpec::new(&[4, 4], DType::F32, line(vec![0, 1]), vec![Shard(1)]).unwrap();
    let wide = TensorSpec::new(&[4, 6], DType::F32, line(vec![0, 1]), vec![Shard(1)]).unwrap();
    assert_eq!(
        dimension(DistributedTensor::<bf16>::new(ranks, rows.clone())),
        "element type"
    );
    let x = DistributedTensor::<f32>::new(ranks, rows.clone()).unwrap();
    let y = DistributedTensor::<f32>::new(ranks, cols.clone()).unwrap();
    let z = DistributedTensor::<f32>::new(ranks, wide).unwrap();
    assert_eq!(
        dimension(x.write_local(0, &[0f32; 9])),
        "local shard elements"
    );
    assert_eq!(dimension(x.read_local(2)), "local rank");
    assert_eq!(
        dimension(handle.reshard_tensor(0, &stream0, &y, &y)),
        "source tensor"
    );
    assert_eq!(
        dimension(handle.reshard_tensor_with_window(0, &stream0, &x, &z)),
        "destination tensor"
    );
    let small = SymmetricTensor::Sim(world.alloc_symmetric::<f32>(7).unwrap());
    assert_eq!(
        dimension(DistributedTensor::from_window(ranks, rows, small)),
        "tensor window"
    );
    // Nothing was launched: the handle still runs.
    for rank in 0..2 {
        handle.write_source(rank, &[rank as f32; 8]).unwrap();
    }
    for rank in 0..2 {
        handle.reshard(rank, &handle.stream(rank).unwrap()).unwrap();
    }
    world.synchronize().unwrap();
    assert_eq!(
        handle.read_destination::<f32>(1).unwrap(),
        [0., 0., 0., 0., 1., 1., 1., 1.]
    );
}

/// The issue's weight at full size, planned on the host: `[4096 × 14336]` bf16 `Shard(1)`
/// over 4 ranks to `Shard(0)` over 2 with a replica each, on 4 other ranks. Every
/// destination receives its 2048 rows, and the 4 sources share the sends equally.
#[test]
fn the_issues_weight_is_planned_with_balanced_sources() {
    let src = layout(&[4], 0..4, &[Shard(1)]).spec(&[4096, 14336], DType::Bf16);
    let dst = layout(&[2, 2], 4..8, &[Shard(0), Replicate]).spec(&[4096, 14336], DType::Bf16);
    let p = plan(&src, &dst).unwrap();
    // 4 destinations × 4 source shards.
    assert_eq!(p.pieces().len(), 16);
    let shard_bytes = 2048 * 14336 * 2;
    for rank in 4..8 {
        assert_eq!(p.bytes_received_from_peers(rank), shard_bytes);
    }
    for rank in 0..4 {
        assert_eq!(p.bytes_sent_by(rank), 4 * shard_bytes / 4);
    }
    // Overlapping: destinations 0..4 themselves, each reading its own columns locally.
    let dst = layout(&[2, 2], 0..4, &[Shard(0), Replicate]).spec(&[4096, 14336], DType::Bf16);
    let p = plan(&src, &dst).unwrap();
    for rank in 0..4 {
        assert_eq!(p.bytes_received_from_peers(rank), shard_bytes * 3 / 4);
    }
}
