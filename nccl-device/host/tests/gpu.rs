//! NCCL on real GPUs (2 or more): init-all and multi-process init, symmetric buffers,
//! host collectives on them (all-reduce, all-gather, reduce-scatter), device communicators,
//! teardown, a killed rank, and 100 create/destroy cycles without leaking GPU memory.
//! Skipped, with the reason printed, without 2 GPUs or NCCL.
//!
//! Run with `--test-threads=1` (each test uses every GPU). Multi-process tests start
//! children of this same binary (`child_entry`) through the launcher.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudajit_nccl::bootstrap::Launcher;
use cudajit_nccl::{
    Communicator, DevCommRequirements, DeviceApiStatus, LoadedNccl, NcclError, ReduceOp,
    SymmetricBuffer,
};
use cudarc::driver::CudaContext;

const CHILD_VAR: &str = "CUDAJIT_NCCL_TEST_CHILD";

fn gpu_count() -> Result<usize, String> {
    // SAFETY: only probes whether libcuda can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so.1)".into());
    }
    CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| format!("CUDA driver: {e}"))
}

/// NCCL and at least two GPUs, or `None` after printing why the test is skipped.
fn setup() -> Option<(Arc<LoadedNccl>, Vec<usize>)> {
    match gpu_count() {
        Ok(n) if n >= 2 => {}
        Ok(n) => {
            eprintln!("SKIPPED: {n} GPU(s); these tests need 2");
            return None;
        }
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return None;
        }
    }
    match LoadedNccl::global() {
        Ok(nccl) => {
            eprintln!("{}", nccl.report());
            let n = gpu_count().unwrap_or(0);
            Some((nccl, (0..n).collect()))
        }
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

fn free_memory(devices: &[usize]) -> Vec<usize> {
    devices
        .iter()
        .map(|&d| {
            let ctx = CudaContext::new(d).expect("context");
            ctx.mem_get_info().expect("cuMemGetInfo").0
        })
        .collect()
}

#[test]
fn init_all_over_every_gpu() {
    let Some((nccl, devices)) = setup() else {
        return;
    };
    let comm = Communicator::init_all(&nccl, &devices).unwrap();
    assert_eq!(comm.n_ranks() as usize, devices.len());
    for (i, r) in comm.local_ranks().iter().enumerate() {
        assert_eq!((r.rank as usize, r.device), (i, devices[i]));
    }
    assert_eq!(std::env::var("NCCL_NVLS_ENABLE").as_deref(), Ok("0"));
    comm.close().unwrap();
}

#[test]
fn symmetric_buffers_hold_data_on_every_rank() {
    let Some((nccl, devices)) = setup() else {
        return;
    };
    let comm = Communicator::init_all(&nccl, &devices).unwrap();
    let n = 1_000_003;
    let buf = comm.alloc_symmetric::<f32>(n).unwrap();
    assert_eq!(buf.allocated_bytes() % 4096, 0);
    assert!(buf.allocated_bytes() >= n * 4);
    for i in 0..devices.len() {
        assert!(!buf.window(i).unwrap().is_null());
        assert_eq!(buf.device_ptr(i).unwrap() % 4096, 0);
        let data: Vec<f32> = (0..n).map(|k| (k * (i + 1)) as f32).collect();
        buf.copy_from_host(i, &data).unwrap();
    }
    for i in 0..devices.len() {
        let mut back = vec![0f32; n];
        buf.copy_to_host(i, &mut back).unwrap();
        assert!(back
            .iter()
            .enumerate()
            .all(|(k, v)| *v == (k * (i + 1)) as f32));
    }
    buf.close().unwrap();
    comm.close().unwrap();
}

#[test]
fn dev_comm_reports_lsa_rank_and_size() {
    let Some((nccl, devices)) = setup() else {
        return;
    };
    let comm = Communicator::init_all(&nccl, &devices).unwrap();
    assert_eq!(comm.device_api_status().unwrap(), DeviceApiStatus::Usable);
    let buf = comm.alloc_symmetric::<u32>(1 << 20).unwrap();
    let dev = comm
        .create_dev_comm(&DevCommRequirements::lsa_barriers(64))
        .unwrap();
    let layout = dev.layout();
    for i in 0..devices.len() {
        assert_eq!(dev.as_bytes(i).unwrap().len(), layout.size);
        assert_eq!(dev.rank(i), Some(i as i32));
        assert_eq!(dev.n_ranks(i), Some(devices.len() as i32));
        assert_eq!(
            dev.lsa_size(i),
            Some(devices.len() as i32),
            "one NVLink domain"
        );
        assert_eq!(dev.lsa_rank(i), Some(i as i32));
    }
    if let Some(props) = comm.properties().unwrap() {
        assert!(props.iter().all(|p| p.device_api_support));
    }
    // Dropped out of NCCL's order on purpose: the window release waits for the dev comm.
    drop(buf);
    dev.close().unwrap();
    comm.close().unwrap();
}

#[test]
fn unsupported_requirements_fail_with_a_reason() {
    let Some((nccl, devices)) = setup() else {
        return;
    };
    let comm = Communicator::init_all(&nccl, &devices).unwrap();
    let reqs = DevCommRequirements {
        world_gin_barrier_count: 1,
        ..DevCommRequirements::lsa_barriers(1)
    };
    match comm.create_dev_comm(&reqs) {
        Err(NcclError::UnsupportedRequirement { field, .. }) => {
            assert_eq!(field, "worldGinBarrierCount")
        }
        Ok(_) => assert!(nccl.version() >= cudajit_nccl::NcclVersion::new(2, 30, 0)),
        Err(e) => eprintln!("NCCL {} refused GIN barriers: {e}", nccl.version()),
    }
}

#[test]
fn one_rank_cannot_use_the_device_api() {
    let Some((nccl, _)) = setup() else { return };
    let comm = Communicator::init_all(&nccl, &[0]).unwrap();
    if let DeviceApiStatus::Unusable(reason) = comm.device_api_status().unwrap() {
        eprintln!("single rank: {reason}");
        let err = comm
            .create_dev_comm(&DevCommRequirements::lsa_barriers(1))
            .unwrap_err();
        assert!(
            matches!(err, NcclError::DeviceApiUnavailable { .. }),
            "{err}"
        );
    }
}

#[test]
fn repeated_create_destroy_does_not_leak() {
    let Some((nccl, devices)) = setup() else {
        return;
    };
    let cycles: usize = std::env::var("CUDAJIT_NCCL_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let cycle = || {
        let comm = Communicator::init_all(&nccl, &devices).unwrap();
        let buf = comm.alloc_symmetric::<u8>(64 << 20).unwrap();
        let dev = comm
            .create_dev_comm(&DevCommRequirements::lsa_barriers(32))
            .unwrap();
        drop((dev, buf, comm));
    };
    cycle(); // warm-up: NCCL's one-time allocations
    let before = free_memory(&devices);
    let start = Instant::now();
    for _ in 0..cycles {
        cycle();
    }
    let after = free_memory(&devices);
    for (d, (b, a)) in before.iter().zip(&after).enumerate() {
        let lost = b.saturating_sub(*a);
        eprintln!(
            "GPU {d}: free {} MiB before, {} MiB after {cycles} cycles ({:?})",
            b >> 20,
            a >> 20,
            start.elapsed()
        );
        assert!(
            lost < 256 << 20,
            "GPU {d} lost {} MiB over {cycles} cycles",
            lost >> 20
        );
    }
}

/// A communicator over every GPU and a new stream on each, for the host collectives; `None`
/// after printing why the test is skipped.
fn every_gpu() -> Option<(Communicator, Vec<Arc<cudarc::driver::CudaStream>>)> {
    let (nccl, devices) = setup()?;
    let comm = Communicator::init_all(&nccl, &devices).unwrap();
    let streams = (0..devices.len())
        .map(|i| comm.context(i).unwrap().new_stream().unwrap())
        .collect();
    Some((comm, streams))
}

/// The first `len` elements of `buf` on each of the `n` local ranks `i`: `value(i, k)` at
/// `k`.
fn fill(buf: &SymmetricBuffer<i32>, n: usize, len: usize, value: impl Fn(usize, usize) -> i32) {
    for i in 0..n {
        let data: Vec<i32> = (0..len).map(|k| value(i, k)).collect();
        buf.copy_from_host(i, &data).unwrap();
    }
}

#[test]
fn all_reduce_and_all_gather_on_symmetric_buffers() {
    let Some((comm, streams)) = every_gpu() else {
        return;
    };
    let n = streams.len();
    let count = 1_000_003;
    // Input at 0, output after it; an all-gather output holds n * count.
    let buf = comm.alloc_symmetric::<i32>(count + n * count).unwrap();
    fill(&buf, n, count, |i, k| (k % 1000) as i32 * (i as i32 + 1));
    comm.all_reduce(buf.at(0), buf.at(count), count, ReduceOp::Sum, &streams)
        .unwrap();
    streams.iter().for_each(|s| s.synchronize().unwrap());
    let factor: i32 = (1..=n as i32).sum();
    for i in 0..n {
        let mut back = vec![0i32; 2 * count];
        buf.copy_to_host(i, &mut back).unwrap();
        assert!((0..count).all(|k| back[count + k] == (k % 1000) as i32 * factor));
    }
    comm.all_gather(buf.at(0), buf.at(count), count, &streams)
        .unwrap();
    streams.iter().for_each(|s| s.synchronize().unwrap());
    for i in 0..n {
        let mut back = vec![0i32; count + n * count];
        buf.copy_to_host(i, &mut back).unwrap();
        for r in 0..n {
            let block = &back[count + r * count..count + (r + 1) * count];
            assert!(block
                .iter()
                .enumerate()
                .all(|(k, v)| *v == (k % 1000) as i32 * (r as i32 + 1)));
        }
    }
    // Ranges past the buffer and a wrong number of streams are refused before NCCL.
    let err = comm
        .all_gather(buf.at(0), buf.at(count + 1), count, &streams)
        .unwrap_err();
    assert!(matches!(err, NcclError::InvalidArgument(_)), "{err}");
    let err = comm
        .all_reduce(
            buf.at(0),
            buf.at(count),
            count,
            ReduceOp::Sum,
            &streams[..1],
        )
        .unwrap_err();
    assert!(matches!(err, NcclError::InvalidArgument(_)), "{err}");
    drop(buf);
    comm.close().unwrap();
}

#[test]
fn reduce_scatter_on_symmetric_buffers() {
    let Some((comm, streams)) = every_gpu() else {
        return;
    };
    let n = streams.len();
    // Not a multiple of any vector width.
    let count = 100_003;
    // Input (n blocks of count) at 0, output after it.
    let buf = comm.alloc_symmetric::<i32>(n * count + count).unwrap();
    // Rank i's element k of block r: distinct per rank, block and element, so a block sent
    // to the wrong rank or summed over the wrong ranks shows.
    let value = |i: usize, r: usize, k: usize| ((k % 997) * (r + 1) + 10_000 * i) as i32;
    fill(&buf, n, n * count, |i, j| value(i, j / count, j % count));
    for (op, fold) in [
        (ReduceOp::Sum, (|a, b| a + b) as fn(i32, i32) -> i32),
        (ReduceOp::Max, |a: i32, b: i32| a.max(b)),
    ] {
        comm.reduce_scatter(buf.at(0), buf.at(n * count), count, op, &streams)
            .unwrap();
        streams.iter().for_each(|s| s.synchronize().unwrap());
        for r in 0..n {
            let mut back = vec![0i32; n * count + count];
            buf.copy_to_host(r, &mut back).unwrap();
            // The host reference: block r of every rank, folded over the ranks.
            for k in 0..count {
                let expected = (1..n).fold(value(0, r, k), |acc, i| fold(acc, value(i, r, k)));
                assert_eq!(
                    back[n * count + k],
                    expected,
                    "{op:?}: rank {r}, element {k}"
                );
            }
            // The input is left as it was.
            assert!((0..n * count).all(|j| back[j] == value(r, j / count, j % count)));
        }
    }
    // A send side shorter than n * count, and a wrong number of streams, are refused
    // before NCCL.
    let err = comm
        .reduce_scatter(
            buf.at(count + 1),
            buf.at(n * count),
            count,
            ReduceOp::Sum,
            &streams,
        )
        .unwrap_err();
    assert!(matches!(err, NcclError::InvalidArgument(_)), "{err}");
    let err = comm
        .reduce_scatter(
            buf.at(0),
            buf.at(n * count),
            count,
            ReduceOp::Sum,
            &streams[..1],
        )
        .unwrap_err();
    assert!(matches!(err, NcclError::InvalidArgument(_)), "{err}");
    drop(buf);
    comm.close().unwrap();
}

fn run_children(scenario: &str, timeout_s: u32) -> (Vec<std::process::ExitStatus>, Duration) {
    let exe = std::env::current_exe().unwrap();
    let mut launcher = Launcher::new(2, exe);
    launcher.args = ["--exact", "child_entry", "--nocapture", "--test-threads=1"]
        .map(Into::into)
        .to_vec();
    launcher.env = vec![
        (CHILD_VAR.into(), scenario.into()),
        ("CUDAJIT_NCCL_TIMEOUT_S".into(), timeout_s.to_string()),
    ];
    let start = Instant::now();
    let mut job = launcher.spawn().unwrap();
    let statuses = job
        .wait(Duration::from_secs(300), Duration::from_secs(120))
        .unwrap();
    (statuses, start.elapsed())
}

#[test]
fn multi_process_init_dev_comm_and_teardown() {
    if setup().is_none() {
        return;
    }
    let (statuses, took) = run_children("init", 60);
    eprintln!("two ranks finished in {took:?}: {statuses:?}");
    assert!(statuses.iter().all(|s| s.success()), "{statuses:?}");
}

#[test]
fn a_killed_rank_makes_the_survivor_fail_in_bounded_time() {
    if setup().is_none() {
        return;
    }
    let (statuses, took) = run_children("killed", 20);
    eprintln!("killed-rank job ended in {took:?}: {statuses:?}");
    assert!(
        statuses[0].success(),
        "rank 0 must report the failure and exit cleanly: {statuses:?}"
    );
    assert!(!statuses[1].success(), "rank 1 aborts itself");
    assert!(took < Duration::from_secs(120), "took {took:?}");
}

/// The body of the child processes (does nothing when run as a normal test).
#[test]
fn child_entry() {
    let Ok(scenario) = std::env::var(CHILD_VAR) else {
        return;
    };
    let code = match child(&scenario) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rank {:?}: {e}", std::env::var("RANK"));
            1
        }
    };
    std::process::exit(code);
}

fn child(scenario: &str) -> Result<i32, NcclError> {
    let nccl = LoadedNccl::global()?;
    let comm = Communicator::from_env(&nccl)?;
    let rank = comm.local_ranks()[0].rank;
    match scenario {
        "init" => {
            let buf = comm.alloc_symmetric::<f32>(1 << 20)?;
            let dev = comm.create_dev_comm(&DevCommRequirements::lsa_barriers(16))?;
            println!(
                "rank {rank}: LSA rank {:?} of {:?}, ncclDevComm {} bytes",
                dev.lsa_rank(0),
                dev.lsa_size(0),
                dev.layout().size
            );
            let ok = dev.lsa_size(0) == Some(2) && dev.lsa_rank(0) == Some(rank);
            dev.close()?;
            buf.close()?;
            comm.close()?;
            Ok(if ok { 0 } else { 3 })
        }
        "killed" => {
            if rank == 1 {
                eprintln!("rank 1: initialised; dying now");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_secs(2));
            let start = Instant::now();
            let result = comm.alloc_symmetric::<f32>(1 << 20).and_then(|b| {
                comm.create_dev_comm(&DevCommRequirements::lsa_barriers(1))
                    .map(|d| (b, d))
            });
            match result {
                Ok(_) => {
                    eprintln!("rank 0: setup succeeded with a dead peer");
                    Ok(4)
                }
                Err(e) => {
                    eprintln!(
                        "rank 0: failed after {:?} as expected: {e}",
                        start.elapsed()
                    );
                    Ok(0)
                }
            }
        }
        other => panic!("unknown scenario {other}"),
    }
}
