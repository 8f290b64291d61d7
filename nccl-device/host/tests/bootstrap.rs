//! The multi-process bootstrap without GPUs: environment parsing, the TCP exchange of
//! the unique id on loopback, a missing rank failing in bounded time, and the launcher.

use std::time::{Duration, Instant};

use cudajit_nccl::bootstrap::{exchange, free_port, BootstrapEnv, Launcher};
use cudajit_nccl::discover::SearchEnv;
use cudajit_nccl::{NcclError, UniqueId};

fn env_of(pairs: &[(&str, &str)]) -> SearchEnv {
    SearchEnv::isolated(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

#[test]
fn torchrun_variables_are_read_with_defaults() {
    let e = BootstrapEnv::from_env(&env_of(&[("RANK", "1"), ("WORLD_SIZE", "2")])).unwrap();
    assert_eq!((e.rank, e.world_size, e.local_rank), (1, 2, 1));
    assert_eq!(
        (e.master_addr.as_str(), e.master_port),
        ("127.0.0.1", 29500)
    );
    let e = BootstrapEnv::from_env(&env_of(&[
        ("RANK", "3"),
        ("WORLD_SIZE", "4"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "10.0.0.1"),
        ("MASTER_PORT", "1234"),
    ]))
    .unwrap();
    assert_eq!(
        (e.local_rank, e.master_addr.as_str(), e.master_port),
        (1, "10.0.0.1", 1234)
    );
    let missing = BootstrapEnv::from_env(&env_of(&[("RANK", "0")])).unwrap_err();
    assert!(
        missing.to_string().contains("WORLD_SIZE is not set"),
        "{missing}"
    );
    let bad = BootstrapEnv::from_env(&env_of(&[("RANK", "x"), ("WORLD_SIZE", "2")])).unwrap_err();
    assert!(bad.to_string().contains("RANK=`x` is not valid"), "{bad}");
    let out = BootstrapEnv::from_env(&env_of(&[("RANK", "2"), ("WORLD_SIZE", "2")])).unwrap_err();
    assert!(matches!(out, NcclError::Bootstrap(_)));
}

fn job(rank: usize, world: usize, port: u16) -> BootstrapEnv {
    BootstrapEnv::single_host(rank, world, port)
}

#[test]
fn every_rank_gets_rank_zeros_id_and_the_peer_table() {
    let port = free_port().unwrap();
    let id = UniqueId([7; 128]);
    let world = 3;
    let handles: Vec<_> = (0..world)
        .map(|rank| {
            std::thread::spawn(move || {
                // Ranks start in any order; rank 0 last here.
                std::thread::sleep(Duration::from_millis(50 * (world - rank) as u64));
                exchange(
                    &job(rank, world, port),
                    rank + 10,
                    || Ok(id),
                    Duration::from_secs(20),
                )
            })
        })
        .collect();
    for h in handles {
        let got = h.join().unwrap().unwrap();
        assert_eq!(got.unique_id, id);
        let devices: Vec<usize> = got.peers.iter().map(|p| p.device).collect();
        assert_eq!(devices, vec![10, 11, 12]);
    }
}

#[test]
fn a_missing_rank_fails_rank_zero_in_bounded_time() {
    let port = free_port().unwrap();
    let start = Instant::now();
    let err = exchange(
        &job(0, 2, port),
        0,
        || Ok(UniqueId([1; 128])),
        Duration::from_millis(500),
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(err.to_string().contains("waiting for ranks 1"), "{err}");
}

#[test]
fn a_rank_without_rank_zero_fails_in_bounded_time() {
    let port = free_port().unwrap();
    let start = Instant::now();
    let err = exchange(
        &job(1, 2, port),
        1,
        || unreachable!(),
        Duration::from_millis(500),
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(err.to_string().contains("rank 0"), "{err}");
}

#[test]
fn launcher_sets_the_variables_and_kills_survivors_after_a_failure() {
    let mut ok = Launcher::new(2, "sh");
    ok.args = vec![
        "-c".into(),
        "test \"$WORLD_SIZE\" = 2 && test \"$RANK\" = \"$LOCAL_RANK\" && test -n \"$MASTER_PORT\""
            .into(),
    ];
    let statuses = ok
        .spawn()
        .unwrap()
        .wait(Duration::from_secs(20), Duration::from_secs(5))
        .unwrap();
    assert!(statuses.iter().all(|s| s.success()), "{statuses:?}");

    let mut failing = Launcher::new(2, "sh");
    failing.args = vec![
        "-c".into(),
        "if [ \"$RANK\" = 1 ]; then exit 3; fi; sleep 30".into(),
    ];
    let start = Instant::now();
    let statuses = failing
        .spawn()
        .unwrap()
        .wait(Duration::from_secs(60), Duration::from_millis(300))
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "survivor not killed"
    );
    assert_eq!(statuses[1].code(), Some(3));
    assert!(!statuses[0].success());
}
