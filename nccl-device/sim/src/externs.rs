//! The extern host of a simulated world: the `cudajit_nccl_*` functions of NCCL's device
//! API (ranks and teams, LSA pointers into peers' windows, barrier sessions) run for the
//! simulator's threads, each at its id in [`SYMBOLS`].

use super::*;

/// The `cudajit_nccl_*` functions, for one run of a node's launches (every rank's, with
/// one node).
#[derive(Debug)]
pub(crate) struct WorldExterns {
    pub(crate) world: u32,
    /// Ranks in the world.
    pub(crate) nranks: usize,
    /// Ranks per node (the LSA team's size).
    pub(crate) lsa_size: usize,
    /// The node whose ranks launch (members `0..lsa_size`, world ranks
    /// `node * lsa_size ..`).
    pub(crate) node: usize,
    /// Every rank's windows, of every node: window `w` of rank `r` at `w * nranks + r`.
    /// The launch's regions are the node's only ([`WorldExterns::regions`]).
    pub(crate) windows: Vec<Arc<DeviceMemory>>,
    /// LSA barrier sessions started and not yet ended, over every thread of the run.
    pub(crate) live_sessions: std::sync::atomic::AtomicI64,
}

/// The functions the simulator implements, each at its id (the index here).
const SYMBOLS: [&str; FIRST_BARRIER as usize + 5 * COOPS.len()] = [
    "cudajit_nccl_rank",
    "cudajit_nccl_nranks",
    "cudajit_nccl_lsa_rank",
    "cudajit_nccl_lsa_size",
    "cudajit_nccl_lsa_rank_to_world",
    "cudajit_nccl_lsa_pointer",
    "cudajit_nccl_peer_pointer",
    "cudajit_nccl_local_pointer",
    "cudajit_nccl_lsa_barrier_init",
    "cudajit_nccl_lsa_barrier_arrive",
    "cudajit_nccl_lsa_barrier_wait",
    "cudajit_nccl_lsa_barrier_sync",
    "cudajit_nccl_lsa_barrier_destroy",
    "cudajit_nccl_lsa_barrier_init_warp",
    "cudajit_nccl_lsa_barrier_arrive_warp",
    "cudajit_nccl_lsa_barrier_wait_warp",
    "cudajit_nccl_lsa_barrier_sync_warp",
    "cudajit_nccl_lsa_barrier_destroy_warp",
    "cudajit_nccl_lsa_barrier_init_thread",
    "cudajit_nccl_lsa_barrier_arrive_thread",
    "cudajit_nccl_lsa_barrier_wait_thread",
    "cudajit_nccl_lsa_barrier_sync_thread",
    "cudajit_nccl_lsa_barrier_destroy_thread",
    "cudajit_nccl_lsa_barrier_init_lanes",
    "cudajit_nccl_lsa_barrier_arrive_lanes",
    "cudajit_nccl_lsa_barrier_wait_lanes",
    "cudajit_nccl_lsa_barrier_sync_lanes",
    "cudajit_nccl_lsa_barrier_destroy_lanes",
    "cudajit_nccl_lsa_barrier_init_warp_span",
    "cudajit_nccl_lsa_barrier_arrive_warp_span",
    "cudajit_nccl_lsa_barrier_wait_warp_span",
    "cudajit_nccl_lsa_barrier_sync_warp_span",
    "cudajit_nccl_lsa_barrier_destroy_warp_span",
];

/// The id of the first LSA barrier function: from there, five per cooperative group of
/// [`COOPS`] (init, arrive, wait, sync, destroy).
const FIRST_BARRIER: u32 = 8;

/// The cooperative group of an LSA barrier session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Coop {
    /// `ncclCoopCta` (`lsa_barrier_*`).
    Cta,
    /// `ncclCoopWarp` (`lsa_barrier_*_warp`).
    Warp,
    /// `ncclCoopThread` (`lsa_barrier_*_thread`).
    Thread,
    /// `ncclCoopLanes` (`lsa_barrier_*_lanes`).
    Lanes,
    /// `ncclCoopWarpSpan` (`lsa_barrier_*_warp_span`).
    WarpSpan,
}

/// The groups in the order of their functions in [`SYMBOLS`].
const COOPS: [Coop; 5] = [
    Coop::Cta,
    Coop::Warp,
    Coop::Thread,
    Coop::Lanes,
    Coop::WarpSpan,
];

/// What a barrier function does to its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Init,
    Arrive,
    Wait,
    Sync,
    Destroy,
}

impl Step {
    /// The function's name without the group's suffix, after `lsa_barrier_`.
    fn name(self) -> &'static str {
        match self {
            Step::Init => "init",
            Step::Arrive => "arrive",
            Step::Wait => "wait",
            Step::Sync => "sync",
            Step::Destroy => "destroy",
        }
    }
}

impl Coop {
    /// The suffix of its functions' names.
    fn suffix(self) -> &'static str {
        match self {
            Coop::Cta => "",
            Coop::Warp => "_warp",
            Coop::Thread => "_thread",
            Coop::Lanes => "_lanes",
            Coop::WarpSpan => "_warp_span",
        }
    }

    /// The group and step of barrier function `function` (an id of [`SYMBOLS`]).
    fn of(function: u32) -> Option<(Coop, Step)> {
        let k = function.checked_sub(FIRST_BARRIER)? as usize;
        let coop = *COOPS.get(k / 5)?;
        let step = [
            Step::Init,
            Step::Arrive,
            Step::Wait,
            Step::Sync,
            Step::Destroy,
        ][k % 5];
        Some((coop, step))
    }

    /// Session word 5: the group, as its index in [`COOPS`].
    fn word(self) -> u64 {
        COOPS.iter().position(|&c| c == self).unwrap_or(0) as u64
    }
}

thread_local! {
    static SYMBOL_IDS: HashMap<&'static str, u32> =
        SYMBOLS.iter().enumerate().map(|(i, s)| (*s, i as u32)).collect();
}

/// A simulated rank's `DevComm`, read through the kernel's `&comm`.
struct Comm {
    rank: usize,
    nranks: usize,
    lsa_size: usize,
}

impl Comm {
    fn lsa_rank(&self) -> usize {
        self.rank % self.lsa_size
    }
}

/// Session words: magic, barrier index, rank, arrived, barriers passed, cooperative group
/// ([`Coop::word`]).
const SESSION_WORDS: usize = 6;

impl WorldExterns {
    fn comm(&self, call: &mut ExternCall<'_, '_, '_>, pointer: u64) -> Result<Comm, String> {
        let words = call.load_words(pointer, 5)?;
        if words[0] != COMM_MAGIC {
            return Err(
                "the DevComm is not a simulated rank's (make it with SimWorld::dev_comm)".into(),
            );
        }
        if words[1] != u64::from(self.world)
            || words[3] as usize != self.nranks
            || words[4] as usize != self.lsa_size
        {
            return Err(format!(
                "the DevComm belongs to another simulated world (world {}, this one is {})",
                words[1], self.world
            ));
        }
        let comm = Comm {
            rank: words[2] as usize,
            nranks: words[3] as usize,
            lsa_size: words[4] as usize,
        };
        if comm.rank / self.lsa_size != self.node {
            return Err(format!(
                "the DevComm of rank {} (node {}) in a launch on node {}: a rank's launch takes its own DevComm",
                comm.rank,
                comm.rank / self.lsa_size,
                self.node
            ));
        }
        Ok(comm)
    }

    /// The rank that owns `window` (a handle of this world), which must be on this
    /// node, and the window's index.
    fn window_owner(&self, window: u64) -> Result<(usize, usize), String> {
        if window >> 56 != WINDOW_TAG || (window >> 40) & 0xffff != u64::from(self.world) {
            return Err(format!(
                "{window:#x} is not a window of this simulated world (make it with SimSymmetricBuffer::window)"
            ));
        }
        let owner = ((window >> 24) & 0xffff) as usize;
        if owner / self.lsa_size != self.node {
            return Err(format!(
                "the window of rank {owner} (node {}) in a launch on node {}: a rank's launch takes its own window handles",
                owner / self.lsa_size,
                self.node
            ));
        }
        Ok((owner, (window & 0xff_ffff) as usize))
    }

    /// The address of byte `offset` of LSA rank `lsa_peer`'s part of `window` (LSA ranks
    /// of the window owner's node).
    fn address(&self, window: u64, offset: u64, lsa_peer: i64) -> Result<u64, String> {
        let (_, index) = self.window_owner(window)?;
        if lsa_peer < 0 || lsa_peer as usize >= self.lsa_size {
            return Err(if self.nranks == self.lsa_size {
                format!(
                    "peer {lsa_peer} is not a rank of the LSA team (0..{})",
                    self.lsa_size
                )
            } else {
                format!(
                    "LSA peer {lsa_peer} is not a rank of node {}'s LSA team (0..{}): other nodes are not reachable by load/store",
                    self.node, self.lsa_size
                )
            });
        }
        let region = index * self.lsa_size + lsa_peer as usize;
        if index * self.nranks >= self.windows.len() {
            return Err(format!("window {index} does not exist"));
        }
        if offset >= 1 << 47 {
            return Err(format!("offset {offset} is past any window"));
        }
        Ok(extern_address(region, offset))
    }

    /// The address of byte `offset` of world rank `peer`'s part of `window`
    /// (`ncclGetPeerPointer`: LSA rank `lsaRank + (peer - worldRank)` of the owner's).
    fn peer_address(&self, window: u64, offset: u64, peer: i64) -> Result<u64, String> {
        let (owner, _) = self.window_owner(window)?;
        if peer < 0 || peer as usize >= self.nranks {
            return Err(format!(
                "peer {peer} is not a rank of the world (0..{})",
                self.nranks
            ));
        }
        let first = (owner - owner % self.lsa_size) as i64;
        if peer / self.lsa_size as i64 != self.node as i64 {
            return Err(format!(
                "rank {peer} is on node {}, not reachable by load/store from node {} (its LSA team is ranks {first}..{}): other nodes are GIN's",
                peer / self.lsa_size as i64,
                self.node,
                first + self.lsa_size as i64
            ));
        }
        self.address(window, offset, peer - first)
    }

    /// The session of a call of `coop`'s function `step`.
    fn session(
        &self,
        call: &mut ExternCall<'_, '_, '_>,
        coop: Coop,
        step: Step,
    ) -> Result<[u64; SESSION_WORDS], String> {
        let session = call.arg(0);
        let words = call.load_words(session, SESSION_WORDS)?;
        let s = coop.suffix();
        if words[0] != SESSION_MAGIC {
            return Err(format!(
                "the barrier session is not initialised (use it between lsa_barrier_init{s} and lsa_barrier_destroy{s})"
            ));
        }
        if words[5] != coop.word() {
            let started = COOPS.get(words[5] as usize).map_or("", |c| c.suffix());
            return Err(format!(
                "lsa_barrier_{}{s} on a session started by lsa_barrier_init{started}: a session's functions are those of the cooperative group it was started with",
                step.name()
            ));
        }
        Ok(words.try_into().expect("SESSION_WORDS words"))
    }

    /// Checks the group of `coop`'s init call against the calling thread; returns the
    /// barrier index.
    fn check_group(call: &ExternCall<'_, '_, '_>, coop: Coop) -> Result<u64, String> {
        let [tx, ty, tz] = call.thread_idx().map(u64::from);
        let [bx, by, bz] = call.block_dim().map(u64::from);
        let block = call.block_idx()[0];
        match coop {
            Coop::Cta => {
                let index = call.arg(2);
                if index != u64::from(block) {
                    return Err(format!(
                        "barrier index {index} in block {block}: the simulator pairs the CTAs of the ranks by block, so the LSA barrier index must be block_idx().x"
                    ));
                }
                Ok(index)
            }
            Coop::Warp | Coop::Thread => Ok(call.arg(2)),
            Coop::Lanes => {
                let mask = call.arg(2) as u32;
                let lane = (tx + bx * (ty + by * tz)) % 32;
                if mask & (1 << lane) == 0 {
                    return Err(format!(
                        "lane {lane} starts a lanes session with lane mask {mask:#010x}, which does not include it"
                    ));
                }
                Ok(call.arg(3))
            }
            Coop::WarpSpan => {
                let (warp0, nwarps, id) = (call.arg(2), call.arg(3), call.arg(4));
                if by != 1 || bz != 1 {
                    return Err(format!(
                        "a warp span numbers warps by thread_idx().x (ncclCoopWarpSpan): the block must be one-dimensional, not {bx}x{by}x{bz}"
                    ));
                }
                if id > 14 {
                    return Err(format!(
                        "warp span id {id}: the span synchronises on named barrier 1 + id, and there are 16 (0 is sync_threads()'s), so the id is at most 14"
                    ));
                }
                let warps = bx.div_ceil(32);
                if nwarps == 0 || warp0 + nwarps > warps {
                    return Err(format!(
                        "warp span of warps {warp0}..{} in a block of {warps} warps",
                        warp0 + nwarps
                    ));
                }
                let warp = tx / 32;
                if warp < warp0 || warp >= warp0 + nwarps {
                    return Err(format!(
                        "thread {tx} (warp {warp}) starts a session of the warp span {warp0}..{}, which does not include it",
                        warp0 + nwarps
                    ));
                }
                Ok(call.arg(5))
            }
        }
    }

    fn store_session(
        call: &mut ExternCall<'_, '_, '_>,
        words: &[u64; SESSION_WORDS],
    ) -> Result<(), String> {
        let session = call.arg(0);
        for (k, &word) in words.iter().enumerate() {
            call.store(session + 8 * k as u64, 8, word)?;
        }
        Ok(())
    }
}

impl WorldExterns {
    /// Step `step` of an LSA barrier session of `coop`. Every group's wait is a group
    /// barrier of the whole block on every rank (see the module's documentation).
    fn barrier(
        &self,
        call: &mut ExternCall<'_, '_, '_>,
        coop: Coop,
        step: Step,
    ) -> Result<ExternOutcome, String> {
        let s = coop.suffix();
        match step {
            Step::Init => {
                let second = call.arg(1);
                let comm = self.comm(call, second)?;
                let member = self.node * self.lsa_size + call.member();
                if comm.rank != member {
                    return Err(format!(
                        "rank {member}'s launch passes the DevComm of rank {}",
                        comm.rank
                    ));
                }
                let index = Self::check_group(call, coop)?;
                Self::store_session(
                    call,
                    &[SESSION_MAGIC, index, comm.rank as u64, 0, 0, coop.word()],
                )?;
                self.live_sessions.fetch_add(1, Ordering::Relaxed);
                Ok(ExternOutcome::Return(0))
            }
            Step::Arrive => {
                let mut session = self.session(call, coop, step)?;
                if session[3] != 0 {
                    return Err(format!(
                        "lsa_barrier_arrive{s} twice without lsa_barrier_wait{s}"
                    ));
                }
                session[3] = 1;
                Self::store_session(call, &session)?;
                Ok(ExternOutcome::Return(0))
            }
            Step::Wait | Step::Sync => {
                let mut session = self.session(call, coop, step)?;
                let arrived = session[3] != 0;
                if step == Step::Wait && !arrived {
                    return Err(format!("lsa_barrier_wait{s} without lsa_barrier_arrive{s}"));
                }
                if step == Step::Sync && arrived {
                    return Err(format!(
                        "lsa_barrier_sync{s} after lsa_barrier_arrive{s} without wait"
                    ));
                }
                session[3] = 0;
                session[4] += 1;
                Self::store_session(call, &session)?;
                Ok(ExternOutcome::GroupBarrier)
            }
            Step::Destroy => {
                let mut session = self.session(call, coop, step)?;
                if session[3] != 0 {
                    return Err(format!(
                        "lsa_barrier_destroy{s} after lsa_barrier_arrive{s} without wait"
                    ));
                }
                session[0] = 0;
                Self::store_session(call, &session)?;
                self.live_sessions.fetch_sub(1, Ordering::Relaxed);
                Ok(ExternOutcome::Return(0))
            }
        }
    }
}

impl SimExterns for WorldExterns {
    fn resolve(&self, symbol: &str) -> Option<u32> {
        SYMBOL_IDS.with(|ids| ids.get(symbol).copied())
    }

    fn call(
        &self,
        function: u32,
        call: &mut ExternCall<'_, '_, '_>,
    ) -> Result<ExternOutcome, String> {
        let value = |v: u64| Ok(ExternOutcome::Return(v));
        let first = call.arg(0);
        match function {
            // rank, nranks, lsa_rank, lsa_size: the node's ranks are the LSA team.
            0 => value(self.comm(call, first)?.rank as u64),
            1 => value(self.comm(call, first)?.nranks as u64),
            2 => value(self.comm(call, first)?.lsa_rank() as u64),
            3 => value(self.comm(call, first)?.lsa_size as u64),
            4 => {
                let comm = self.comm(call, first)?;
                let lsa_rank = call.arg(1) as u32 as i32;
                if lsa_rank < 0 || lsa_rank as usize >= comm.lsa_size {
                    return Err(format!(
                        "LSA rank {lsa_rank} is not in the team (0..{})",
                        comm.lsa_size
                    ));
                }
                value((comm.rank - comm.lsa_rank() + lsa_rank as usize) as u64)
            }
            // lsa_pointer(window, offset, lsa peer), peer_pointer(window, offset, world rank).
            5 => value(self.address(
                call.arg(0),
                call.arg(1),
                i64::from(call.arg(2) as u32 as i32),
            )?),
            6 => value(self.peer_address(
                call.arg(0),
                call.arg(1),
                i64::from(call.arg(2) as u32 as i32),
            )?),
            7 => {
                let window = call.arg(0);
                let (owner, _) = self.window_owner(window)?;
                value(self.address(window, call.arg(1), (owner % self.lsa_size) as i64)?)
            }
            _ => {
                let Some((coop, step)) = Coop::of(function) else {
                    return Err(format!("no function {function}"));
                };
                self.barrier(call, coop, step)
            }
        }
    }

    /// The node's parts of every window: region `w * lsa_size + p` is LSA rank `p`'s part
    /// of window `w` (other nodes' memory is not in the launch at all).
    fn regions(&self) -> Vec<GlobalRegion<'_>> {
        let first = self.node * self.lsa_size;
        self.windows
            .chunks(self.nranks)
            .flat_map(|ranks| &ranks[first..first + self.lsa_size])
            .map(|memory| GlobalRegion {
                memory,
                writable: true,
            })
            .collect()
    }

    fn region_name(&self, region: usize) -> String {
        format!(
            "rank {}'s part of window {}",
            self.node * self.lsa_size + region % self.lsa_size,
            region / self.lsa_size
        )
    }

    /// Every LSA barrier session a thread started must have ended: on GPUs the end stores
    /// the barrier's epoch, and without it the next kernel's barrier stops synchronising.
    fn finish(&self) -> Result<(), String> {
        match self.live_sessions.load(Ordering::Relaxed) {
            0 => Ok(()),
            live => Err(format!(
                "{live} LSA barrier session(s) were started (lsa_barrier_init or \
                 lsa_barrier_session) and never ended (lsa_barrier_destroy, or the end of a \
                 LsaBarrierSession's scope): on GPUs the next kernel's barrier would not \
                 synchronise"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudajit_nccl::device_code::symbols::{spelling_mismatch as mismatch, BRIDGE_2_28};

    /// The simulator's table holds exactly the bridge's functions (the simulator has no
    /// GIN); why a check and not generation: see `symbols.rs`.
    #[test]
    fn the_simulator_implements_exactly_the_bridge() {
        let table = BRIDGE_2_28.entries.iter().map(|e| e.symbol);
        if let Some(message) = mismatch("nccl-device/sim/src/externs.rs's SYMBOLS", SYMBOLS, table)
        {
            panic!("{message}");
        }
    }

    #[test]
    fn every_barrier_symbol_is_its_group_and_step() {
        for (id, symbol) in SYMBOLS.iter().enumerate() {
            match Coop::of(id as u32) {
                None => assert!(id < FIRST_BARRIER as usize, "{symbol}"),
                Some((coop, step)) => assert_eq!(
                    *symbol,
                    format!("cudajit_nccl_lsa_barrier_{}{}", step.name(), coop.suffix())
                ),
            }
        }
        assert!(Coop::of(SYMBOLS.len() as u32).is_none());
    }
}
