//! TMA loads and stores of every rank (1 to 5): a box loaded from one tensor (partly
//! outside it: the fill is zeros) and stored into another (partly past its far edges: those
//! elements are not written), against the host's model of both — on the simulator and on a
//! Hopper GPU. Also the L2 prefetch of a box, which the simulator accepts as the hint it is.

mod common;

use cudajit::prelude::*;
use cudajit::tensor::mbarrier::{
    fence_barrier_init, mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_wait_parity,
};
use cudajit::tensor::tma::{
    tma_load_1d, tma_load_2d, tma_load_3d, tma_load_4d, tma_load_5d, tma_prefetch_2d, tma_store_1d,
    tma_store_2d, tma_store_3d, tma_store_4d, tma_store_5d, tma_store_commit, tma_store_wait,
};
use cudajit::tensor_map::{TensorMapElement, TensorMapLayout};
use cudajit::{LaunchConfig, Stream, TensorMap};

/// Thread 0 loads the box at `at[0..5]` of `src` (a `RANK`-d tensor) and stores it at
/// `at[5..10]` of `dst`.
#[kernel]
fn round_trip<const RANK: u32>(src: TensorMap, dst: TensorMap, at: &[i32], box_bytes: u32) {
    let tile = shared_array::<f32>(1024 + 32);
    let barrier = shared_array::<u64>(1);
    let t = thread_idx().x;
    let bar = shared_address(&barrier[0]);
    let skip = (((128 - shared_address(&tile[0]) % 128) % 128) / 4) as usize;
    let box_at = shared_address(&tile[skip]);
    if t == 0 {
        mbarrier_init(bar, 1);
        fence_barrier_init();
    }
    sync_threads();
    if t == 0 {
        let (s, d) = (tensor_map_address(&src), tensor_map_address(&dst));
        let l = [at[0], at[1], at[2], at[3], at[4]];
        let o = [at[5], at[6], at[7], at[8], at[9]];
        mbarrier_arrive_expect_tx(bar, box_bytes);
        if RANK == 1 {
            tma_load_1d(box_at, s, l[0], bar);
        } else if RANK == 2 {
            tma_prefetch_2d(s, l[0], l[1]);
            tma_load_2d(box_at, s, l[0], l[1], bar);
        } else if RANK == 3 {
            tma_load_3d(box_at, s, l[0], l[1], l[2], bar);
        } else if RANK == 4 {
            tma_load_4d(box_at, s, l[0], l[1], l[2], l[3], bar);
        } else {
            tma_load_5d(box_at, s, l, bar);
        }
        mbarrier_wait_parity(bar, 0);
        if RANK == 1 {
            tma_store_1d(d, o[0], box_at);
        } else if RANK == 2 {
            tma_store_2d(d, o[0], o[1], box_at);
        } else if RANK == 3 {
            tma_store_3d(d, o[0], o[1], o[2], box_at);
        } else if RANK == 4 {
            tma_store_4d(d, o[0], o[1], o[2], o[3], box_at);
        } else {
            tma_store_5d(d, o, box_at);
        }
        tma_store_commit();
        tma_store_wait();
    }
}

/// One case: the tensors' dimensions and the box's (innermost first), where it is loaded
/// and where stored.
struct Case {
    dims: &'static [u64],
    box_dims: &'static [u32],
    load: [i32; 5],
    store: [i32; 5],
}

const CASES: [Case; 5] = [
    Case {
        dims: &[64],
        box_dims: &[32],
        load: [-8, 0, 0, 0, 0],
        store: [48, 0, 0, 0, 0],
    },
    Case {
        dims: &[16, 6],
        box_dims: &[8, 4],
        load: [4, 3, 0, 0, 0],
        store: [12, 0, 0, 0, 0],
    },
    Case {
        dims: &[16, 6, 3],
        box_dims: &[8, 4, 2],
        load: [4, 3, 2, 0, 0],
        store: [8, 0, 1, 0, 0],
    },
    Case {
        dims: &[8, 3, 4, 2],
        box_dims: &[8, 2, 2, 2],
        load: [0, 2, 3, 1, 0],
        store: [0, 1, 0, 1, 0],
    },
    Case {
        dims: &[8, 2, 3, 2, 2],
        box_dims: &[8, 2, 2, 2, 1],
        load: [0, 1, 2, 1, 1],
        store: [0, 0, 1, 1, 1],
    },
];

/// The linear index of `coords` in a tensor of `dims`, if inside it.
fn linear(dims: &[u64], coords: &[i64]) -> Option<usize> {
    let mut index = 0usize;
    for (&c, &d) in coords.iter().zip(dims).rev() {
        if c < 0 || c >= d as i64 {
            return None;
        }
        index = index * d as usize + c as usize;
    }
    Some(index)
}

/// The host's model: `dst` after storing the box loaded from `src`.
fn expected(case: &Case, src: &[f32], dst: &[f32]) -> Vec<f32> {
    let rank = case.dims.len();
    let mut out = dst.to_vec();
    let count: usize = case.box_dims.iter().map(|&b| b as usize).product();
    for element in 0..count {
        let mut rest = element;
        let mut offset = vec![0i64; rank];
        for (k, &b) in case.box_dims.iter().enumerate() {
            offset[k] = (rest % b as usize) as i64;
            rest /= b as usize;
        }
        let from: Vec<i64> = (0..rank).map(|k| case.load[k] as i64 + offset[k]).collect();
        let to: Vec<i64> = (0..rank)
            .map(|k| case.store[k] as i64 + offset[k])
            .collect();
        let value = linear(case.dims, &from).map_or(0.0, |i| src[i]);
        if let Some(i) = linear(case.dims, &to) {
            out[i] = value;
        }
    }
    out
}

fn check(stream: &Stream) {
    for case in &CASES {
        let len: usize = case.dims.iter().map(|&d| d as usize).product();
        let src: Vec<f32> = (0..len).map(|i| 1.0 + i as f32).collect();
        let dst0 = vec![-1.0f32; len];
        let dsrc = stream.clone_htod(&src).unwrap();
        let ddst = stream.clone_htod(&dst0).unwrap();
        let layout = TensorMapLayout::tiled(TensorMapElement::F32, case.dims, case.box_dims);
        let src_map = TensorMap::encode_buffer(&layout, &dsrc).unwrap();
        let dst_map = TensorMap::encode_buffer(&layout, &ddst).unwrap();
        let at: Vec<i32> = case.load.iter().chain(&case.store).copied().collect();
        let dat = stream.clone_htod(&at).unwrap();
        let bytes = layout.box_bytes() as u32;
        let config = LaunchConfig::new(1, 32);
        match case.dims.len() {
            1 => round_trip::launch::<1>(stream, config, src_map, dst_map, &dat, bytes),
            2 => round_trip::launch::<2>(stream, config, src_map, dst_map, &dat, bytes),
            3 => round_trip::launch::<3>(stream, config, src_map, dst_map, &dat, bytes),
            4 => round_trip::launch::<4>(stream, config, src_map, dst_map, &dat, bytes),
            _ => round_trip::launch::<5>(stream, config, src_map, dst_map, &dat, bytes),
        }
        .unwrap();
        let got = stream.clone_dtoh(&ddst).unwrap();
        let want = expected(case, &src, &dst0);
        assert!(want.contains(&0.0), "rank {}: no fill", case.dims.len());
        assert!(
            want.iter().any(|&v| v > 0.0),
            "rank {}: nothing copied",
            case.dims.len()
        );
        assert_eq!(got, want, "rank {}", case.dims.len());
    }
}

#[test]
fn boxes_of_every_rank_load_and_store_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn boxes_of_every_rank_load_and_store_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: TMA needs compute capability 9.0 or later");
        return;
    }
    check(&Stream::from_cuda(context.default_stream()));
}
