//! NCCL's device API on simulated nodes (`cudajit::nccl::sim::SimWorld::with_nodes`): what
//! a kernel sees with several nodes of several GPUs each — world ranks across nodes, the
//! node's ranks as the LSA team, the rail team across nodes — checked against NCCL's own
//! formulas (`nccl_device/impl/core__funcs.h`), the LSA examples' collectives within each
//! node, and load/store reaches of another node reported as errors. No GPU and no NCCL
//! library needed.

#[path = "../examples/lsa/kernels.rs"]
mod kernels;

use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
use cudajit::nccl::sim::{SimSymmetricBuffer, SimWorld};
use cudajit::prelude::*;
use cudajit::simulator::SimOptions;
use cudajit::BufferElement;

use kernels::{all_gather, all_reduce_one_shot, all_reduce_two_shot, peer_read};

/// (nodes, ranks per node) of the tests; (1, 4) is one NVLink domain, as `SimWorld::new(4)`.
const TOPOLOGIES: [(usize, usize); 4] = [(2, 2), (2, 4), (4, 2), (1, 4)];

fn world(nodes: usize, ranks_per_node: usize) -> SimWorld {
    SimWorld::with_nodes_and_options(
        nodes,
        ranks_per_node,
        SimOptions {
            workers: 2,
            ..SimOptions::default()
        },
    )
    .unwrap()
}

fn fill<T: BufferElement>(
    world: &SimWorld,
    buffer: &SimSymmetricBuffer<T>,
    count: usize,
    value: impl Fn(usize, usize) -> T,
) {
    for rank in 0..world.nranks() {
        let data: Vec<T> = (0..count).map(|k| value(rank, k)).collect();
        buffer.copy_from_host(rank, &data).unwrap();
    }
}

/// Slots of [`topology`]'s record.
const SLOTS: usize = 33;

/// What a kernel sees of the topology, recorded by one thread per rank: its ranks, the
/// world, LSA and rail teams, each LSA peer's world rank and input (through `lsa_address`
/// and through `peer_address` with the world rank), and each rail rank's world rank and
/// whether it is in this rank's LSA team.
#[kernel]
fn topology(comm: DevComm, window: Window, results: Window) {
    if global_index() == 0 {
        let out = unsafe { slice_at_mut::<i32>(nccl::local_address(results, 0), 33) };
        out[0] = nccl::rank(&comm);
        out[1] = nccl::nranks(&comm);
        out[2] = nccl::lsa_rank(&comm);
        out[3] = nccl::lsa_size(&comm);
        let lsa = nccl::team_lsa(&comm);
        let rail = nccl::team_rail(&comm);
        record_team(out, 4, nccl::team_world(&comm));
        record_team(out, 7, lsa);
        record_team(out, 10, rail);
        let mut p = 0;
        while p < lsa.nranks {
            let at = p as usize;
            out[13 + at] = nccl::lsa_rank_to_world(&comm, p);
            let input = unsafe { slice_at::<i32>(nccl::lsa_address(window, 0, p), 2) };
            out[17 + at] = input[0];
            let world_peer = nccl::team_rank_to_world(&comm, lsa, p);
            let second = unsafe { slice_at::<i32>(nccl::peer_address(window, 4, world_peer), 1) };
            out[21 + at] = second[0];
            p += 1;
        }
        let mut k = 0;
        while k < rail.nranks {
            let at = k as usize;
            out[25 + at] = nccl::team_rank_to_world(&comm, rail, k);
            out[29 + at] = nccl::team_rank_is_member(lsa, rail, k) as i32;
            k += 1;
        }
    }
}

#[device]
fn record_team(out: &mut [i32], at: usize, team: nccl::Team) {
    out[at] = team.nranks;
    out[at + 1] = team.rank;
    out[at + 2] = team.stride;
}

/// NCCL's `ncclTeam`: (nRanks, rank, stride).
type Team = (i32, i32, i32);

/// `ncclTeamRankIsMember(a, b, brank)`, as NCCL writes it.
fn is_member(a: Team, b: Team, b_rank: i32) -> bool {
    let world_rank = (b_rank - b.1) * b.2;
    let a_delta = world_rank / a.2;
    let a_mod = world_rank % a.2;
    let a_rank = a.1 + a_delta;
    0 <= a_rank && a_rank < a.0 && a_mod == 0
}

/// Element 0 and 1 of world rank `rank`'s input.
fn input(rank: usize, k: usize) -> i32 {
    [rank as i32 * 7 + 3, rank as i32 * 11 + 5][k]
}

#[test]
fn ranks_and_teams_match_nccl_for_several_nodes() {
    for (nodes, per_node) in TOPOLOGIES {
        let world = world(nodes, per_node);
        assert_eq!(
            (world.nodes(), world.ranks_per_node(), world.nranks()),
            (nodes, per_node, nodes * per_node)
        );
        let buffer = world.alloc_symmetric::<i32>(2).unwrap();
        fill(&world, &buffer, 2, input);
        let results = world.alloc_symmetric::<i32>(SLOTS).unwrap();
        for rank in 0..world.nranks() {
            topology::launch(
                world.stream(rank),
                LaunchConfig::new(1, 32),
                world.dev_comm(rank),
                buffer.window(rank),
                results.window(rank),
            )
            .unwrap();
        }
        world.synchronize().unwrap();
        for rank in 0..world.nranks() {
            // The DevComm NCCL builds for this topology, and its inline team functions.
            let (n_ranks, r) = ((nodes * per_node) as i32, rank as i32);
            let (lsa_size, lsa_rank) = (per_node as i32, r % per_node as i32);
            let world_team: Team = (n_ranks, r, 1); // ncclTeamWorld
            let lsa: Team = (lsa_size, lsa_rank, 1); // ncclTeamLsa
            let rail: Team = (n_ranks / lsa_size, r / lsa_size, lsa_size); // ncclTeamRail
            let to_world = |team: Team, k: i32| r + (k - team.1) * team.2; // ncclTeamRankToWorld
            let mut want = vec![0; SLOTS];
            want[..4].copy_from_slice(&[r, n_ranks, lsa_rank, lsa_size]);
            want[4..7].copy_from_slice(&[world_team.0, world_team.1, world_team.2]);
            want[7..10].copy_from_slice(&[lsa.0, lsa.1, lsa.2]);
            want[10..13].copy_from_slice(&[rail.0, rail.1, rail.2]);
            for p in 0..lsa_size {
                let peer = to_world(lsa, p);
                want[13 + p as usize] = peer;
                want[17 + p as usize] = input(peer as usize, 0);
                want[21 + p as usize] = input(peer as usize, 1);
            }
            for k in 0..rail.0 {
                want[25 + k as usize] = to_world(rail, k);
                want[29 + k as usize] = i32::from(is_member(lsa, rail, k));
            }
            let got = results.to_vec(rank).unwrap();
            assert_eq!(got, want, "{nodes} x {per_node}, rank {rank}");

            // The same facts said plainly: the LSA team is the node, the rail team the
            // ranks of every node at this LSA rank, and only this rank is in both.
            let node = rank / per_node;
            assert_eq!(world.node_of(rank), node);
            let node_ranks: Vec<i32> = (0..per_node)
                .map(|p| (node * per_node + p) as i32)
                .collect();
            assert_eq!(got[13..13 + per_node], node_ranks[..]);
            let rail_ranks: Vec<i32> = (0..nodes)
                .map(|m| (m * per_node + rank % per_node) as i32)
                .collect();
            assert_eq!(got[25..25 + nodes], rail_ranks[..]);
            let in_lsa: Vec<i32> = (0..nodes).map(|m| i32::from(m == node)).collect();
            assert_eq!(got[29..29 + nodes], in_lsa[..]);
        }
    }
}

/// Output at the next 4096-byte boundary after `count` elements of `T`, as the examples
/// lay it out; (offset in bytes, elements per rank with `output` elements of output).
fn layout<T>(count: usize, output: usize) -> (usize, usize) {
    let size = std::mem::size_of::<T>();
    let out_offset = (count * size).div_ceil(4096) * 4096;
    (out_offset, out_offset / size + output)
}

fn value(rank: usize, k: usize) -> i32 {
    (k as i32).wrapping_mul(31) + rank as i32 * 1_000_003
}

const CTAS: u32 = 3;
const THREADS: u32 = 64;
const COUNT: usize = 4 * 3 * 64 + 3;

/// Which of the examples' kernels [`collective`] runs.
#[derive(Clone, Copy, Debug)]
enum Collective {
    PeerRead,
    OneShot,
    TwoShot,
    AllGather,
}

/// Runs `which` on every rank of every node and checks each rank's output against its
/// node's inputs: the collectives of the LSA examples reduce, gather or read within the
/// node's LSA team.
fn collective(nodes: usize, per_node: usize, which: Collective) {
    let world = world(nodes, per_node);
    let output = match which {
        Collective::AllGather => COUNT * per_node,
        _ => COUNT,
    };
    let (out_offset, elems) = layout::<i32>(COUNT, output);
    let buffer = world.alloc_symmetric::<i32>(elems).unwrap();
    fill(&world, &buffer, COUNT, value);
    let config = LaunchConfig::new(CTAS, THREADS);
    for rank in 0..world.nranks() {
        let (stream, comm, window) = (
            world.stream(rank),
            world.dev_comm(rank),
            buffer.window(rank),
        );
        match which {
            Collective::PeerRead => {
                peer_read::launch(stream, config, comm, window, COUNT, out_offset)
            }
            Collective::OneShot => {
                all_reduce_one_shot::launch::<i32>(stream, config, comm, window, COUNT, out_offset)
            }
            Collective::TwoShot => {
                all_reduce_two_shot::launch::<i32>(stream, config, comm, window, COUNT, out_offset)
            }
            Collective::AllGather => all_gather::launch::<i32>(
                stream,
                config,
                comm,
                window,
                COUNT,
                COUNT * 4,
                out_offset,
            ),
        }
        .unwrap();
    }
    world.synchronize().unwrap();
    let report = world.last_report().unwrap();
    assert_eq!(report.blocks, u64::from(CTAS) * world.nranks() as u64);
    for rank in 0..world.nranks() {
        let first = rank / per_node * per_node;
        let want: Vec<i32> = match which {
            Collective::PeerRead => {
                let peer = first + (rank % per_node + 1) % per_node;
                (0..COUNT).map(|k| value(peer, k)).collect()
            }
            Collective::OneShot | Collective::TwoShot => (0..COUNT)
                .map(|k| (first..first + per_node).map(|r| value(r, k)).sum())
                .collect(),
            Collective::AllGather => (first..first + per_node)
                .flat_map(|r| (0..COUNT).map(move |k| value(r, k)))
                .collect(),
        };
        let all = buffer.to_vec(rank).unwrap();
        assert_eq!(
            all[out_offset / 4..],
            want[..],
            "{which:?}, {nodes} x {per_node}, rank {rank}"
        );
    }
}

#[test]
fn the_lsa_examples_collectives_run_within_each_node() {
    for (nodes, per_node) in [(2, 2), (2, 4)] {
        for which in [
            Collective::PeerRead,
            Collective::OneShot,
            Collective::TwoShot,
            Collective::AllGather,
        ] {
            collective(nodes, per_node, which);
        }
    }
}

/// Node 0's ranks pass `rounds_0` LSA barriers, node 1's `rounds_1`: on GPUs each node's
/// barrier spans its own ranks only, so the nodes need not agree.
#[kernel]
fn rounds_per_node(comm: DevComm, rounds_0: u32, rounds_1: u32) {
    let node = nccl::rank(&comm) / nccl::lsa_size(&comm);
    let rounds = if node == 0 { rounds_0 } else { rounds_1 };
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    let mut round = 0;
    while round < rounds {
        nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::AcqRel);
        round += 1;
    }
    nccl::lsa_barrier_destroy(&mut barrier);
}

#[test]
fn lsa_barriers_pair_the_ranks_of_one_node() {
    let world = world(2, 2);
    for rank in 0..4 {
        rounds_per_node::launch(
            world.stream(rank),
            LaunchConfig::new(2, 32),
            world.dev_comm(rank),
            1,
            3,
        )
        .unwrap();
    }
    world.synchronize().unwrap();
    // 2 blocks on each of the 4 ranks; node 0 passed 1 barrier, node 1 three.
    assert_eq!(world.last_report().unwrap().blocks, 8);

    // A node runs once its own ranks have launched; another node's missing launch is
    // reported by synchronize, naming the rank and its node.
    for rank in 0..3 {
        rounds_per_node::launch(
            world.stream(rank),
            LaunchConfig::new(1, 32),
            world.dev_comm(rank),
            2,
            2,
        )
        .unwrap();
    }
    let error = world.synchronize().unwrap_err().to_string();
    assert!(error.contains("waits for rank 3 (node 1)"), "{error}");
}

/// Reads through `lsa_address` (`how` 0, LSA rank `target`) or `peer_address` (`how` 1,
/// world rank `target`) from every rank.
#[kernel]
fn reach(comm: DevComm, window: Window, how: u32, target: i32) {
    // Reading the rank checks the DevComm.
    if global_index() == 0 && nccl::rank(&comm) >= 0 {
        let address = if how == 0 {
            nccl::lsa_address(window, 0, target)
        } else {
            nccl::peer_address(window, 0, target)
        };
        let v = unsafe { slice_at::<i32>(address, 1) };
        let mine = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 4), 1) };
        mine[0] = v[0];
    }
}

fn reach_error(
    world: &SimWorld,
    how: u32,
    target: i32,
    comm_of: impl Fn(usize) -> usize,
) -> String {
    let buffer = world.alloc_symmetric::<i32>(2).unwrap();
    let mut result = Ok(());
    for rank in 0..world.nranks() {
        result = result.and(reach::launch(
            world.stream(rank),
            LaunchConfig::new(1, 32),
            world.dev_comm(comm_of(rank)),
            buffer.window(rank),
            how,
            target,
        ));
    }
    result.unwrap_err().to_string()
}

#[test]
fn reaching_another_node_by_load_store_is_reported() {
    let world = world(2, 2);
    // LSA rank 2 of a 2-rank node: the next node's first rank by numbering, unreachable.
    let error = reach_error(&world, 0, 2, |r| r);
    assert!(
        error.contains("LSA peer 2 is not a rank of node 0's LSA team (0..2)"),
        "{error}"
    );
    // World rank 3 from node 0 through peer_address.
    let error = reach_error(&world, 1, 3, |r| r);
    assert!(
        error.contains("rank 3 is on node 1, not reachable by load/store from node 0"),
        "{error}"
    );
    // Within the node both work: rank r reads its node's rank 1 (world rank 1 or 3).
    let buffer = world.alloc_symmetric::<i32>(2).unwrap();
    fill(&world, &buffer, 1, |rank, _| rank as i32 + 40);
    for rank in 0..4 {
        reach::launch(
            world.stream(rank),
            LaunchConfig::new(1, 32),
            world.dev_comm(rank),
            buffer.window(rank),
            0,
            1,
        )
        .unwrap();
    }
    for rank in 0..4 {
        let got = buffer.to_vec(rank).unwrap();
        assert_eq!(got[1], (rank / 2 * 2 + 1) as i32 + 40, "rank {rank}");
    }
    // A DevComm of a rank of the other node.
    let error = reach_error(&world, 0, 0, |r| (r + 2) % 4);
    assert!(
        error.contains("the DevComm of rank 2 (node 1) in a launch on node 0"),
        "{error}"
    );
}

#[test]
fn topologies_beyond_the_limits_are_refused() {
    for (nodes, per_node) in [(0, 2), (2, 0), (9, 8)] {
        let error = SimWorld::with_nodes(nodes, per_node)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("1 to 64 ranks"),
            "{nodes} x {per_node}: {error}"
        );
    }
    assert_eq!(SimWorld::new(4).unwrap().nodes(), 1);
}
