//! The launch checks of communicating kernels (kernels taking a `DevComm`), on the CPU:
//! the launch token a `DevComm` argument carries, the LSA barrier count against the grid,
//! the identity the ranks agree on, and the agreement logic itself (in-process
//! comparison of local ranks, comparison of all-gathered records). The NCCL exchange
//! itself needs GPUs: `DIVERGE=1` in examples/allreduce_lsa.rs.

#[path = "../examples/lsa/kernels.rs"]
#[allow(dead_code)]
mod kernels;

use cudajit::core::Scalar;
use cudajit::nccl::device::{self as nccl, check_lsa_barriers, DevComm, LaunchToken, Window};
use cudajit::nccl::safe::agreement::{
    agree_on_launch, compare_gathered, AgreeError, LaunchIdentity, LocalAgreement, RECORD_BYTES,
};
use cudajit::prelude::*;
use cudajit::Specialization;
use cudajit::{LaunchArgument, LaunchInfo, LaunchMemo};

/// A communicating kernel without barriers: it only reads the rank.
#[kernel]
fn rank_of(comm: DevComm, out: &mut [i32]) {
    if global_index() == 0 {
        out[0] = nccl::rank(&comm);
    }
}

fn spec(ty: Scalar) -> Specialization {
    Specialization {
        types: vec![("T".to_owned(), ty)],
        structs: Vec::new(),
        consts: Vec::new(),
    }
}

fn launch<'a>(
    captured: &'static cudajit::core::CapturedKernel,
    identity: &'a [u8; 32],
    grid: (u32, u32, u32),
    memo: &'a LaunchMemo,
) -> LaunchInfo<'a> {
    LaunchInfo {
        kernel: captured.name,
        captured,
        identity,
        description: "kernel<T=f32>",
        grid,
        block: (512, 1, 1),
        memo,
    }
}

#[test]
fn the_launch_token_round_trips_and_stays_out_of_the_nccl_struct() {
    let token = LaunchToken {
        serial: 42,
        local: 3,
        lsa_barriers: 132,
    };
    let word = token.encode().unwrap();
    assert_eq!(LaunchToken::decode(word), Some(token));
    // A zero word (from_bytes, no token) and other garbage are no token.
    assert_eq!(LaunchToken::decode(0), None);
    assert_eq!(LaunchToken::decode(word & !0xFF), None);
    // Counts clamp; serials and local indices that do not fit give no token.
    let big = LaunchToken {
        lsa_barriers: u32::MAX,
        ..token
    };
    assert_eq!(
        LaunchToken::decode(big.encode().unwrap())
            .unwrap()
            .lsa_barriers,
        LaunchToken::MAX_BARRIERS
    );
    for bad in [
        LaunchToken { serial: 0, ..token },
        LaunchToken {
            serial: 1 << 24,
            ..token
        },
        LaunchToken {
            local: 256,
            ..token
        },
    ] {
        assert_eq!(bad.encode(), None, "{bad:?}");
    }
    // The token lives in the last 8 bytes: a 248-byte ncclDevComm (2.32.3) keeps all of
    // its bytes.
    let nccl_bytes: Vec<u8> = (0..248).map(|i| (i % 251) as u8 + 1).collect();
    let comm = DevComm::from_bytes(&nccl_bytes).unwrap();
    assert_eq!(comm.token(), None);
    let comm = comm.with_token(token).unwrap();
    assert_eq!(comm.token(), Some(token));
    // SAFETY: DevComm is 256 bytes of plain data.
    let bytes: [u8; 256] = unsafe { std::mem::transmute(comm) };
    assert_eq!(&bytes[..248], &nccl_bytes[..]);
}

#[test]
fn a_grid_with_more_ctas_than_lsa_barriers_is_an_error_naming_the_fix() {
    let memo = LaunchMemo::new();
    let captured = kernels::all_reduce_one_shot::KERNEL.captured();
    let id = [1u8; 32];
    assert!(check_lsa_barriers(&launch(captured, &id, (132, 1, 1), &memo), 132).is_ok());
    assert!(check_lsa_barriers(&launch(captured, &id, (64, 2, 1), &memo), 132).is_ok());
    let err = check_lsa_barriers(&launch(captured, &id, (132, 2, 1), &memo), 132).unwrap_err();
    assert!(err.contains("264 CTAs (132x2x1)"), "{err}");
    assert!(err.contains("132 LSA barriers"), "{err}");
    assert!(
        err.contains("DevCommRequirements::lsa_barriers(264)"),
        "{err}"
    );
}

#[test]
fn only_dev_comm_has_a_launch_check() {
    assert!(<DevComm as LaunchArgument>::LAUNCH_CHECK.is_some());
    assert!(<Window as LaunchArgument>::LAUNCH_CHECK.is_none());
    assert!(<nccl::MemoryOrder as LaunchArgument>::LAUNCH_CHECK.is_none());
}

#[test]
fn the_dev_comm_check_runs_barriers_first_and_refuses_a_destroyed_communicator() {
    let check = <DevComm as LaunchArgument>::LAUNCH_CHECK.unwrap();
    // A serial no device communicator of this process has.
    let token = LaunchToken {
        serial: (1 << 24) - 1,
        local: 0,
        lsa_barriers: 4,
    };
    let comm = DevComm::from_bytes(&[0u8; 88]).unwrap();
    let with = comm.with_token(token).unwrap();
    let id = [7u8; 32];

    // A kernel with LSA barriers: 8 CTAs on 4 barriers is refused before anything else.
    let memo = LaunchMemo::new();
    let barriers = kernels::all_reduce_one_shot::KERNEL.captured();
    let err = check(&with, &launch(barriers, &id, (8, 1, 1), &memo)).unwrap_err();
    assert!(err.contains("8 CTAs"), "{err}");
    // Also with a session that ends at its scope's end (`lsa_barrier_session`).
    let scoped = kernels::all_gather::KERNEL.captured();
    let err = check(&with, &launch(scoped, &id, (8, 1, 1), &LaunchMemo::new())).unwrap_err();
    assert!(err.contains("8 CTAs"), "{err}");
    // Within the barriers, agreement needs the device communicator, which is gone.
    let err = check(&with, &launch(barriers, &id, (4, 1, 1), &memo)).unwrap_err();
    assert!(err.contains("destroyed"), "{err}");

    // A kernel without barriers is not held to the count.
    let memo = LaunchMemo::new();
    let err = check(
        &with,
        &launch(rank_of::KERNEL.captured(), &id, (8, 1, 1), &memo),
    )
    .unwrap_err();
    assert!(err.contains("destroyed"), "{err}");

    // Without a token (built from bytes) nothing is checked.
    assert!(check(&comm, &launch(barriers, &id, (1000, 1, 1), &memo)).is_ok());

    assert!(matches!(
        agree_on_launch(token.serial, 0, &LaunchIdentity::new(id, "k")),
        Err(AgreeError::Destroyed)
    ));
}

#[test]
fn the_identity_tells_specialisations_and_kernels_apart() {
    use cudajit::codegen::compile::launch_identity;
    let one_shot = kernels::all_reduce_one_shot::KERNEL.captured();
    let two_shot = kernels::all_reduce_two_shot::KERNEL.captured();
    let f32_one = launch_identity(one_shot, &spec(Scalar::F32));
    assert_eq!(f32_one, launch_identity(one_shot, &spec(Scalar::F32)));
    assert_ne!(f32_one, launch_identity(one_shot, &spec(Scalar::I32)));
    assert_ne!(f32_one, launch_identity(two_shot, &spec(Scalar::F32)));
}

fn identity(tag: u8, description: &str) -> LaunchIdentity {
    LaunchIdentity::new([tag; 32], description)
}

#[test]
fn records_round_trip_and_cut_long_descriptions_at_a_character() {
    let id = identity(3, "all_reduce_one_shot<T=f32>");
    let record = id.encode();
    assert_eq!(record.len(), RECORD_BYTES);
    assert_eq!(LaunchIdentity::decode(&record), Some(id));
    assert_eq!(LaunchIdentity::decode(&[0u8; RECORD_BYTES]), None);
    let long = identity(4, &"é".repeat(300));
    let back = LaunchIdentity::decode(&long.encode()).unwrap();
    assert_eq!(back.digest, long.digest);
    assert!(long.description.starts_with(&back.description));
    assert!(!back.description.is_empty());
}

#[test]
fn local_ranks_agree_in_order_and_a_divergence_names_both_specialisations() {
    let f32_k = identity(1, "all_reduce_one_shot<T=f32>");
    let i32_k = identity(2, "all_reduce_one_shot<T=i32>");
    let other = identity(3, "peer_read");

    // Rank 0 launches f32 then i32 (as in the example, one rank after the other).
    let mut local = LocalAgreement::new(2);
    local.agree(0, 0, &f32_k).unwrap();
    local.agree(1, 1, &f32_k).unwrap();
    local.agree(0, 0, &i32_k).unwrap();
    local.agree(1, 1, &i32_k).unwrap();
    // Agreed identities stay agreed, in any order.
    local.agree(1, 1, &f32_k).unwrap();
    local.agree(0, 0, &i32_k).unwrap();
    // A new identity must be the next of the first rank to get there.
    local.agree(1, 1, &other).unwrap();
    local.agree(0, 0, &other).unwrap();

    // Rank 1 launches i32 where rank 0 launched f32.
    let mut local = LocalAgreement::new(2);
    local.agree(0, 0, &f32_k).unwrap();
    let err = local.agree(1, 1, &i32_k).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("rank 1 launches `all_reduce_one_shot<T=i32>`"),
        "{text}"
    );
    assert!(
        text.contains("rank 0 launches `all_reduce_one_shot<T=f32>`"),
        "{text}"
    );
    assert!(!local.is_agreed(1, &i32_k.digest));
    // Interleaved launches of the same sequence agree whichever rank goes first.
    let mut local = LocalAgreement::new(3);
    local.agree(2, 2, &f32_k).unwrap();
    local.agree(2, 2, &i32_k).unwrap();
    local.agree(0, 0, &f32_k).unwrap();
    local.agree(1, 1, &f32_k).unwrap();
    local.agree(1, 1, &i32_k).unwrap();
    assert!(local.agree(0, 0, &other).is_err());
}

#[test]
fn gathered_records_are_compared_rank_by_rank() {
    let ours = identity(1, "all_reduce_one_shot<T=f32>");
    let theirs = identity(2, "all_reduce_one_shot<T=i32>");
    let gathered = |records: &[Option<&LaunchIdentity>]| -> Vec<u8> {
        records
            .iter()
            .flat_map(|r| r.map_or([0u8; RECORD_BYTES], |r| r.encode()))
            .collect()
    };
    assert!(compare_gathered(0, &ours, &gathered(&[Some(&ours), Some(&ours)])).is_ok());

    let err = compare_gathered(0, &ours, &gathered(&[Some(&ours), Some(&theirs)])).unwrap_err();
    assert_eq!(err.other_rank, 1);
    assert!(!err.in_process);
    let text = err.to_string();
    assert!(
        text.contains("rank 0 launches `all_reduce_one_shot<T=f32>` but rank 1 launches `all_reduce_one_shot<T=i32>`"),
        "{text}"
    );

    // The same name and specialisation with other code: different builds.
    let rebuilt = identity(9, "all_reduce_one_shot<T=f32>");
    let text = compare_gathered(1, &ours, &gathered(&[Some(&rebuilt), Some(&ours)]))
        .unwrap_err()
        .to_string();
    assert!(text.contains("different builds"), "{text}");

    // A rank in another collective contributed no record.
    let text = compare_gathered(0, &ours, &gathered(&[Some(&ours), None]))
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("rank 1 was in another NCCL collective"),
        "{text}"
    );
}

#[test]
fn the_launch_memo_holds_a_few_keys_without_a_lock() {
    let memo = LaunchMemo::new();
    assert!(!memo.contains(5));
    assert!(memo.insert(5));
    assert!(memo.insert(5));
    assert!(memo.contains(5));
    assert!(!memo.insert(0));
    for k in 6..13 {
        assert!(memo.insert(k));
    }
    assert!(!memo.insert(100), "full");
    assert!(!memo.contains(100));
    assert!(memo.contains(12));
}

#[test]
fn requirements_follow_the_launch_configuration() {
    use cudajit::nccl::device::requirements_for;
    use cudajit::nccl::DevCommRequirements;
    let config = LaunchConfig::new(132, 512);
    assert_eq!(
        requirements_for(&config),
        DevCommRequirements::lsa_barriers(132)
    );
    let memo = LaunchMemo::new();
    let captured = kernels::all_reduce_one_shot::KERNEL.captured();
    let info = launch(captured, &[0; 32], (132, 1, 1), &memo);
    assert!(check_lsa_barriers(&info, requirements_for(&config).lsa_barrier_count).is_ok());
}
