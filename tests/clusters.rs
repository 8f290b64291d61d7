//! Thread-block clusters (sm_90) on the CPU simulator, each kernel also on the GPU: the
//! cluster special registers of a 2 × 2 cluster, a ring of four blocks passing words through
//! distributed shared memory and arrivals on each other's mbarriers; and the reports of
//! misuse: a block that leaves without arriving at the cluster barrier, `mapa` to a rank
//! outside the cluster, a `.shared::cluster` access outside the block's shared memory.
//! And the integer `cvt`s that narrow a TMA multicast's 32-bit mask to its 16 bits.

mod common;

use cudajit::prelude::*;
use cudajit::tensor::cluster::{
    cluster_ctarank, cluster_nctarank, cluster_sync, dsmem_load_u32, dsmem_store_u32,
    map_shared_rank, mbarrier_arrive_cluster,
};
use cudajit::tensor::mbarrier::{fence_barrier_init, mbarrier_init, mbarrier_wait_parity};
use cudajit::{Error, LaunchConfig, SimError, SimStream};

/// Values per block of [`cluster_registers`].
const REGISTERS: usize = 10;

/// Thread 0 of each block writes its cluster special registers.
#[kernel]
fn cluster_registers(out: &mut [u32]) {
    if thread_idx().x == 0 {
        let block = (block_idx().x + grid_dim().x * (block_idx().y + grid_dim().y * block_idx().z))
            as usize;
        let values = [
            ptx!(u32: "mov.u32 $0, %cluster_ctarank;"),
            ptx!(u32: "mov.u32 $0, %cluster_nctarank;"),
            ptx!(u32: "mov.u32 $0, %clusterid.x;"),
            ptx!(u32: "mov.u32 $0, %clusterid.y;"),
            ptx!(u32: "mov.u32 $0, %cluster_ctaid.x;"),
            ptx!(u32: "mov.u32 $0, %cluster_ctaid.y;"),
            ptx!(u32: "mov.u32 $0, %cluster_nctaid.x;"),
            ptx!(u32: "mov.u32 $0, %cluster_nctaid.y;"),
            ptx!(u32: "mov.u32 $0, %nclusterid.x;"),
            ptx!(u32: "mov.u32 $0, %nclusterid.y;"),
        ];
        for i in 0..REGISTERS {
            out[block * REGISTERS + i] = values[i];
        }
    }
}

/// What [`cluster_registers`] writes for a (4, 2, 1) grid in (2, 2, 1) clusters.
fn expected_registers() -> Vec<u32> {
    let mut want = Vec::new();
    for y in 0..2u32 {
        for x in 0..4u32 {
            let (cx, cy) = (x % 2, y % 2);
            want.extend([cx + 2 * cy, 4, x / 2, y / 2, cx, cy, 2, 2, 2, 1]);
        }
    }
    want
}

/// Each block of a cluster writes a word into the next block's shared memory and arrives
/// on that block's mbarrier (with `pass` 0 none does); every thread waits on its own
/// block's barrier and reads the word its predecessor wrote.
#[kernel]
fn ring_pass(out: &mut [u32], pass: u32) {
    let bars = shared_array::<u64>(1);
    let word = shared_array::<u32>(1);
    let bar = shared_address(&bars[0]);
    let rank = cluster_ctarank();
    let t = thread_idx().x;
    if t == 0 {
        mbarrier_init(bar, 1);
        fence_barrier_init();
    }
    // Every block's barrier is initialised before another block arrives on it.
    cluster_sync();
    if t == 0 && pass != 0 {
        let next = (rank + 1) % cluster_nctarank();
        let theirs = map_shared_rank(shared_address(&word[0]), next);
        dsmem_store_u32(theirs, 100 * block_idx().x + rank);
        mbarrier_arrive_cluster(map_shared_rank(bar, next));
    }
    mbarrier_wait_parity(bar, 0);
    // The arrival released the store at cluster scope; acquire it at the same scope.
    ptx!("fence.acq_rel.cluster;");
    out[(block_idx().x * block_dim().x + t) as usize] = word[0];
    // No block leaves while its predecessor may still write to it.
    cluster_sync();
}

/// What [`ring_pass`] writes for `blocks` blocks of `threads` in clusters of 4.
fn expected_ring(blocks: u32, threads: u32) -> Vec<u32> {
    (0..blocks)
        .flat_map(|b| {
            let rank = b % 4;
            let previous_rank = (rank + 3) % 4;
            let previous = b - rank + previous_rank;
            std::iter::repeat_n(100 * previous + previous_rank, threads as usize)
        })
        .collect()
}

#[test]
fn cluster_special_registers_on_the_simulator() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(8 * REGISTERS).unwrap();
    let config = LaunchConfig::new((4, 2), 32).with_cluster((2, 2, 1));
    cluster_registers::launch(&stream, config, &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), expected_registers());
    // Without clusters each block is a cluster of one.
    cluster_registers::launch(&stream, LaunchConfig::new((4, 2), 32), &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for (block, values) in got.chunks(REGISTERS).enumerate() {
        let (x, y) = (block as u32 % 4, block as u32 / 4);
        assert_eq!(values, [0, 1, x, y, 0, 0, 1, 1, 4, 2], "block ({x}, {y})");
    }
}

#[test]
fn blocks_of_a_cluster_pass_words_through_shared_memory_and_mbarriers_on_the_simulator() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(8 * 64).unwrap();
    ring_pass::launch(
        &stream,
        LaunchConfig::new(8, 64).with_cluster((4, 1, 1)),
        &mut out,
        1,
    )
    .unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), expected_ring(8, 64));
}

#[test]
fn an_mbarrier_no_block_of_the_cluster_arrives_on_is_reported() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(8 * 64).unwrap();
    let config = LaunchConfig::new(8, 64).with_cluster((4, 1, 1));
    let error = ring_pass::launch(&stream, config, &mut out, 0).unwrap_err();
    let Error::Simulator(SimError::Ptx { site, detail }) = &error else {
        panic!("expected a wait that can never complete, got {error}");
    };
    eprintln!("reported: {error}");
    assert_eq!(site.block, [0, 0, 0]);
    assert!(
        detail.contains("can never complete")
            && detail.contains("expects 1 of 1 arrivals")
            && detail.contains(
                "nor can any thread of the cluster's other blocks (in block (1, 0, 0) (rank 1):"
            ),
        "{detail}"
    );
}

/// Rank 1 of each cluster leaves without `cluster_sync()`.
#[kernel]
fn rank_one_leaves(out: &mut [u32]) {
    if cluster_ctarank() != 1 {
        cluster_sync();
        out[block_idx().x as usize] = 1;
    }
}

#[test]
fn a_block_that_leaves_without_arriving_at_the_cluster_barrier_is_reported() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(4).unwrap();
    let config = LaunchConfig::new(4, 64).with_cluster((2, 1, 1));
    let error = rank_one_leaves::launch(&stream, config, &mut out).unwrap_err();
    let Error::Simulator(SimError::BarrierDivergence { site, detail }) = &error else {
        panic!("expected a cluster barrier that cannot complete, got {error}");
    };
    eprintln!("reported: {error}");
    assert_eq!(site.block, [0, 0, 0]);
    assert!(
        detail.contains("waits at this barrier.cluster.wait")
            && detail.contains("of block (1, 0, 0) (rank 1) exited without arriving"),
        "{detail}"
    );
}

/// Thread 0 of each block reads the word at byte `offset` of the variable `word` of block
/// `rank` of its cluster.
#[kernel]
fn read_rank(out: &mut [u32], rank: u32, offset: u32) {
    let word = shared_array::<u32>(2);
    if thread_idx().x == 0 {
        word[0] = 5 + block_idx().x;
        word[1] = 0;
    }
    cluster_sync();
    if thread_idx().x == 0 {
        let theirs = map_shared_rank(shared_address(&word[0]), rank);
        out[block_idx().x as usize] = dsmem_load_u32(theirs + offset);
    }
    cluster_sync();
}

#[test]
fn a_rank_or_offset_outside_the_cluster_is_reported() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(4).unwrap();
    let config = LaunchConfig::new(4, 32).with_cluster((2, 1, 1));
    read_rank::launch(&stream, config, &mut out, 1, 0).unwrap();
    // Blocks of rank 1 read their own word through its `.shared::cluster` address.
    assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![6, 6, 8, 8]);

    let error = read_rank::launch(&stream, config, &mut out, 2, 0).unwrap_err();
    let Error::Simulator(SimError::Ptx { detail, .. }) = &error else {
        panic!("expected a mapa outside the cluster, got {error}");
    };
    eprintln!("reported: {error}");
    assert!(
        detail.contains("`mapa` to block rank 2, but the cluster has 2 blocks"),
        "{detail}"
    );

    let error = read_rank::launch(&stream, config, &mut out, 1, 4096).unwrap_err();
    let Error::Simulator(SimError::Ptx { detail, .. }) = &error else {
        panic!("expected an access outside shared memory, got {error}");
    };
    eprintln!("reported: {error}");
    assert!(
        detail.contains(
            "`ld.shared::cluster` of 4 bytes at byte offset 4096 of block rank 1's shared memory ("
        ) && detail.ends_with("bytes), outside it"),
        "{detail}"
    );

    let uneven = LaunchConfig::new(3, 32).with_cluster((2, 1, 1));
    let error = read_rank::launch(&stream, uneven, &mut out, 1, 0).unwrap_err();
    assert!(
        matches!(
            error,
            Error::LaunchConfig {
                source: cudajit::LaunchConfigError::ClusterDoesNotDivideGrid { .. },
                ..
            }
        ),
        "{error}"
    );
}

/// Integer conversions: `x` to 16 bits (unsigned), its low 16 bits sign-extended to 64,
/// and its low 16 bits as signed widened to an unsigned 32-bit register.
#[kernel]
fn convert_integers(x: &[u32], out: &mut [u64]) {
    let t = thread_idx().x as usize;
    out[3 * t] = ptx!(u64:
        "{\n\t.reg .b16 h;\n\t.reg .b32 w;\n\tcvt.u16.u32 h, $1;\n\tcvt.u32.u16 w, h;\n\tcvt.u64.u32 $0, w;\n}",
        x[t]
    );
    out[3 * t + 1] = ptx!(u64:
        "{\n\t.reg .b16 h;\n\tcvt.u16.u32 h, $1;\n\tcvt.s64.s16 $0, h;\n}",
        x[t]
    );
    let widened = ptx!(u32:
        "{\n\t.reg .b16 h;\n\tcvt.u16.u32 h, $1;\n\tcvt.u32.s16 $0, h;\n}",
        x[t]
    );
    out[3 * t + 2] = widened as u64;
}

/// What [`convert_integers`] writes for `x`.
fn expected_conversions(x: &[u32]) -> Vec<u64> {
    x.iter()
        .flat_map(|&v| {
            let low = v as u16;
            [
                u64::from(low),
                i64::from(low as i16) as u64,
                u64::from(i32::from(low as i16) as u32),
            ]
        })
        .collect()
}

const CONVERTED: [u32; 4] = [0x0001_0003, 0xffff_8001, 0x1234_7fff, 0x0000_ffff];

#[test]
fn integer_conversions_narrow_and_extend_on_the_simulator() {
    let stream = SimStream::new();
    let x = stream.clone_htod(&CONVERTED).unwrap();
    let mut out = stream.alloc_zeros::<u64>(3 * CONVERTED.len()).unwrap();
    convert_integers::launch(&stream, LaunchConfig::new(1, 4), &x, &mut out).unwrap();
    assert_eq!(
        stream.clone_dtoh(&out).unwrap(),
        expected_conversions(&CONVERTED)
    );
}

#[test]
fn gpu_integer_conversions_narrow_and_extend() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let x = stream.clone_htod(&CONVERTED).unwrap();
    let mut out = stream.alloc_zeros::<u64>(3 * CONVERTED.len()).unwrap();
    convert_integers::launch(&stream, LaunchConfig::new(1, 4), &x, &mut out).unwrap();
    assert_eq!(
        stream.clone_dtoh(&out).unwrap(),
        expected_conversions(&CONVERTED)
    );
}

#[test]
fn cluster_kernels_compile_to_cluster_instructions_without_local_memory() {
    use cudajit::codegen::compile::linked_ptx;
    use cudajit::Arch;
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let kernels = [
        (
            ring_pass::KERNEL.captured(),
            &[
                "barrier.cluster.arrive.release.aligned",
                "barrier.cluster.wait.acquire.aligned",
                "mapa.shared::cluster.u32",
                "st.shared::cluster.u32",
                "mbarrier.arrive.release.cluster.shared::cluster.b64",
                "fence.acq_rel.cluster",
            ][..],
        ),
        (
            cluster_registers::KERNEL.captured(),
            &[
                "%cluster_ctarank",
                "%clusterid.y",
                "%cluster_nctaid.x",
                "%nclusterid.y",
            ][..],
        ),
        (convert_integers::KERNEL.captured(), &["cvt.s64.s16"][..]),
    ];
    for (kernel, expected) in kernels {
        let ptx = linked_ptx(
            kernel,
            &Default::default(),
            Arch::SM_90,
            &Default::default(),
        )
        .unwrap();
        for instruction in expected {
            assert!(ptx.contains(instruction), "no `{instruction}` in\n{ptx}");
        }
        assert!(!ptx.contains(".local"), "local memory in\n{ptx}");
        assert!(!ptx.contains("call."), "a call in\n{ptx}");
    }
    // And through nvJitLink to sm_90 cubins.
    ring_pass::KERNEL.compile_for_arch(Arch::SM_90).unwrap();
    cluster_registers::KERNEL
        .compile_for_arch(Arch::SM_90)
        .unwrap();
    convert_integers::KERNEL
        .compile_for_arch(Arch::SM_90)
        .unwrap();
}

/// A GPU of compute capability 9.0 or later, or `None` (the test is skipped).
fn hopper_or_skip() -> Option<std::sync::Arc<cudajit::CudaContext>> {
    let context = common::gpu_or_skip()?;
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: clusters need compute capability 9.0 or later");
        return None;
    }
    Some(context)
}

#[test]
fn gpu_cluster_special_registers() {
    let Some(context) = hopper_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let mut out = stream.alloc_zeros::<u32>(8 * REGISTERS).unwrap();
    let config = LaunchConfig::new((4, 2), 32).with_cluster((2, 2, 1));
    cluster_registers::launch(&stream, config, &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), expected_registers());
}

#[test]
fn gpu_blocks_of_a_cluster_pass_words_through_shared_memory_and_mbarriers() {
    let Some(context) = hopper_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let mut out = stream.alloc_zeros::<u32>(8 * 64).unwrap();
    ring_pass::launch(
        &stream,
        LaunchConfig::new(8, 64).with_cluster((4, 1, 1)),
        &mut out,
        1,
    )
    .unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), expected_ring(8, 64));
}
