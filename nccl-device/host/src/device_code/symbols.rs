//! Which symbol implements each device function, per generation of NCCL device library.
//!
//! The names move between releases (C++-mangled in the 2.31+ `.ltoir`, `cudajit_nccl_`
//! names in our 2.28 bridge, and NCCL's C wrapper names are being renamed again
//! upstream), so the mapping lives in one table per generation instead of in the
//! callers. The signatures differ too: the `.ltoir` takes NCCL's C++ objects (a
//! `ncclCoopAny` by value), the bridge only pointers and scalars.
//!
//! These tables are the one source of truth for the names. cudajit's own C ABI over NCCL
//! (the `cudajit_nccl_*` names of [`BRIDGE_2_28`] and [`SHIM_GIN`], listed together by
//! [`c_abi_symbols`]) is spelled again where it is defined or called: `shim_ltoir.ll`,
//! `bridge_2_28.cu`, the device API's `#[extern_device]` `link_name`s and the simulator's
//! table. Those are checked against the tables by tests (`symbol_spellings.rs` here, in
//! `cudajit-nccl-device` and in `cudajit-nccl-sim`, all through [`spelling_mismatch`])
//! rather than generated from them: the `.ll`
//! and the `.cu` are sources that libNVVM and nvcc read and people review, which
//! placeholders for every function name would make unreadable, and a `link_name` is a
//! literal the proc macro reads, which a build script would have to write. The `.ltoir`'s
//! mangled names, used only inside the shim, are generated: `shim_ltoir.ll` calls them
//! through `@{nccl:NAME}` placeholders that [`shim::source`](super::shim::source) fills
//! from these tables.

use std::collections::BTreeSet;
use std::fmt;

/// A function of NCCL's device API as cudajit names it (not to be confused with
/// `cudajit_core`'s `DeviceFunction`, the marker of a `#[device]` function).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiFunction {
    /// Pointer to `offset` in the window of LSA peer `peer`.
    LsaPointer,
    /// Pointer to `offset` in the window of world rank `peer`.
    PeerPointer,
    /// Pointer to `offset` in this rank's own window.
    LocalPointer,
    /// World rank of this process.
    Rank,
    /// Number of world ranks.
    NRanks,
    /// Rank within the LSA team.
    LsaRank,
    /// Size of the LSA team.
    LsaSize,
    /// World rank of an LSA-team rank.
    LsaRankToWorld,
    /// Starts an LSA barrier session in caller-provided storage.
    LsaBarrierInit,
    /// Signals arrival at the LSA barrier.
    LsaBarrierArrive,
    /// Waits for every LSA peer's arrival.
    LsaBarrierWait,
    /// Arrive then wait.
    LsaBarrierSync,
    /// Ends the session, persisting the barrier epoch for the next kernel.
    LsaBarrierDestroy,
    /// Fills a `ncclCoopAny` describing the whole CTA (libraries whose barrier takes one).
    CoopInitCta,
    /// The communicator's LSA barrier handle (libraries whose barrier takes one).
    LsaBarrierHandle,
    /// Fills a `ncclCoopAny` describing the calling warp (libraries whose barrier takes one).
    CoopInitWarp,
    /// Starts a warp's LSA barrier session (`ncclCoopWarp`): index per warp.
    LsaBarrierInitWarp,
    /// A warp's arrival.
    LsaBarrierArriveWarp,
    /// A warp's wait.
    LsaBarrierWaitWarp,
    /// A warp's arrive then wait.
    LsaBarrierSyncWarp,
    /// Ends a warp's session, persisting its barrier epoch.
    LsaBarrierDestroyWarp,
    /// Fills a `ncclCoopAny` describing some lanes of the calling warp (a lane mask).
    CoopInitLanes,
    /// Fills a `ncclCoopAny` describing consecutive warps of the CTA (warp0, nWarps, id).
    CoopInitWarpSpan,
    /// Starts a thread's LSA barrier session (`ncclCoopThread`): index per thread.
    LsaBarrierInitThread,
    /// A thread's arrival.
    LsaBarrierArriveThread,
    /// A thread's wait.
    LsaBarrierWaitThread,
    /// A thread's arrive then wait.
    LsaBarrierSyncThread,
    /// Ends a thread's session, persisting its barrier epoch.
    LsaBarrierDestroyThread,
    /// Starts some lanes' LSA barrier session (`ncclCoopLanes`): a lane mask; index per set of lanes.
    LsaBarrierInitLanes,
    /// Some lanes' arrival.
    LsaBarrierArriveLanes,
    /// Some lanes' wait.
    LsaBarrierWaitLanes,
    /// Some lanes' arrive then wait.
    LsaBarrierSyncLanes,
    /// Ends some lanes' session, persisting its barrier epoch.
    LsaBarrierDestroyLanes,
    /// Starts a warp span's LSA barrier session (`ncclCoopWarpSpan`): warp0, nWarps, id; index per span.
    LsaBarrierInitWarpSpan,
    /// A warp span's arrival.
    LsaBarrierArriveWarpSpan,
    /// A warp span's wait.
    LsaBarrierWaitWarpSpan,
    /// A warp span's arrive then wait.
    LsaBarrierSyncWarpSpan,
    /// Ends a warp span's session, persisting its barrier epoch.
    LsaBarrierDestroyWarpSpan,
    /// Fills a `ncclCoopAny` describing the calling thread alone (the GIN calls' coop).
    CoopInitThread,
    /// Builds a `ncclGin_C` (GIN context `context` of the communicator) in place.
    GinInit,
    /// GIN put: bytes of a local window to a peer's window, optionally bumping a signal.
    GinPut,
    /// GIN signal: bumps a peer's signal without data.
    GinSignal,
    /// Waits until a local GIN signal reaches a value.
    GinWaitSignal,
    /// Waits until this thread's GIN operations are locally complete.
    GinFlush,
    /// Reads a local GIN signal.
    GinReadSignal,
    /// Resets a local GIN signal to zero.
    GinResetSignal,
}

impl ApiFunction {
    /// The name used in cudajit's device API and in error messages.
    pub fn name(self) -> &'static str {
        match self {
            ApiFunction::LsaPointer => "lsa_pointer",
            ApiFunction::PeerPointer => "peer_pointer",
            ApiFunction::LocalPointer => "local_pointer",
            ApiFunction::Rank => "rank",
            ApiFunction::NRanks => "nranks",
            ApiFunction::LsaRank => "lsa_rank",
            ApiFunction::LsaSize => "lsa_size",
            ApiFunction::LsaRankToWorld => "lsa_rank_to_world",
            ApiFunction::LsaBarrierInit => "lsa_barrier_init",
            ApiFunction::LsaBarrierArrive => "lsa_barrier_arrive",
            ApiFunction::LsaBarrierWait => "lsa_barrier_wait",
            ApiFunction::LsaBarrierSync => "lsa_barrier_sync",
            ApiFunction::LsaBarrierDestroy => "lsa_barrier_destroy",
            ApiFunction::CoopInitCta => "coop_init_cta",
            ApiFunction::LsaBarrierHandle => "lsa_barrier_handle",
            ApiFunction::CoopInitWarp => "coop_init_warp",
            ApiFunction::LsaBarrierInitWarp => "lsa_barrier_init_warp",
            ApiFunction::LsaBarrierArriveWarp => "lsa_barrier_arrive_warp",
            ApiFunction::LsaBarrierWaitWarp => "lsa_barrier_wait_warp",
            ApiFunction::LsaBarrierSyncWarp => "lsa_barrier_sync_warp",
            ApiFunction::LsaBarrierDestroyWarp => "lsa_barrier_destroy_warp",
            ApiFunction::CoopInitLanes => "coop_init_lanes",
            ApiFunction::CoopInitWarpSpan => "coop_init_warp_span",
            ApiFunction::LsaBarrierInitThread => "lsa_barrier_init_thread",
            ApiFunction::LsaBarrierArriveThread => "lsa_barrier_arrive_thread",
            ApiFunction::LsaBarrierWaitThread => "lsa_barrier_wait_thread",
            ApiFunction::LsaBarrierSyncThread => "lsa_barrier_sync_thread",
            ApiFunction::LsaBarrierDestroyThread => "lsa_barrier_destroy_thread",
            ApiFunction::LsaBarrierInitLanes => "lsa_barrier_init_lanes",
            ApiFunction::LsaBarrierArriveLanes => "lsa_barrier_arrive_lanes",
            ApiFunction::LsaBarrierWaitLanes => "lsa_barrier_wait_lanes",
            ApiFunction::LsaBarrierSyncLanes => "lsa_barrier_sync_lanes",
            ApiFunction::LsaBarrierDestroyLanes => "lsa_barrier_destroy_lanes",
            ApiFunction::LsaBarrierInitWarpSpan => "lsa_barrier_init_warp_span",
            ApiFunction::LsaBarrierArriveWarpSpan => "lsa_barrier_arrive_warp_span",
            ApiFunction::LsaBarrierWaitWarpSpan => "lsa_barrier_wait_warp_span",
            ApiFunction::LsaBarrierSyncWarpSpan => "lsa_barrier_sync_warp_span",
            ApiFunction::LsaBarrierDestroyWarpSpan => "lsa_barrier_destroy_warp_span",
            ApiFunction::CoopInitThread => "coop_init_thread",
            ApiFunction::GinInit => "gin_init",
            ApiFunction::GinPut => "gin_put",
            ApiFunction::GinSignal => "gin_signal",
            ApiFunction::GinWaitSignal => "gin_wait_signal",
            ApiFunction::GinFlush => "gin_flush",
            ApiFunction::GinReadSignal => "gin_read_signal",
            ApiFunction::GinResetSignal => "gin_reset_signal",
        }
    }

    /// Whether this is a GIN (GPU-initiated networking) function: only the 2.32+
    /// `.ltoir` (through cudajit's shim) provides those.
    pub fn is_gin(self) -> bool {
        matches!(
            self,
            ApiFunction::GinInit
                | ApiFunction::GinPut
                | ApiFunction::GinSignal
                | ApiFunction::GinWaitSignal
                | ApiFunction::GinFlush
                | ApiFunction::GinReadSignal
                | ApiFunction::GinResetSignal
        )
    }
}

impl fmt::Display for ApiFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One function's symbol in one library, with the C++ signature it was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolEntry {
    /// Our name for it.
    pub function: ApiFunction,
    /// The linker symbol.
    pub symbol: &'static str,
    /// The C/C++ declaration behind the symbol, for messages and binding authors.
    pub signature: &'static str,
}

/// The symbols of one generation of device library.
#[derive(Debug, PartialEq, Eq)]
pub struct SymbolTable {
    /// Which libraries the table describes, e.g. "NCCL 2.31+ libnccl_device.ltoir".
    pub generation: &'static str,
    /// Every function the library provides.
    pub entries: &'static [SymbolEntry],
}

impl SymbolTable {
    /// The entry of `function`, if this generation has it.
    pub fn get(&self, function: ApiFunction) -> Option<&'static SymbolEntry> {
        self.entries.iter().find(|e| e.function == function)
    }

    /// The entry whose linker symbol is `symbol`.
    pub fn by_symbol(&self, symbol: &str) -> Option<&'static SymbolEntry> {
        self.entries.iter().find(|e| e.symbol == symbol)
    }
}

const fn entry(
    function: ApiFunction,
    symbol: &'static str,
    signature: &'static str,
) -> SymbolEntry {
    SymbolEntry {
        function,
        symbol,
        signature,
    }
}

/// Every symbol of cudajit's C ABI over NCCL's device API: the 2.28 bridge's functions
/// ([`BRIDGE_2_28`]), which the shim over a `.ltoir` defines too, then the GIN functions
/// only the shim over a 2.32+ `.ltoir` defines ([`SHIM_GIN`]). Kernels call these names.
pub fn c_abi_symbols() -> impl Iterator<Item = &'static str> {
    BRIDGE_2_28
        .entries
        .iter()
        .chain(SHIM_GIN.entries)
        .map(|entry| entry.symbol)
}

/// Bytes (and alignment) a kernel reserves for an LSA barrier session of the 2.28 bridge;
/// `bridge_2_28.cu` asserts the real session fits.
pub const BRIDGE_LSA_BARRIER_SESSION_BYTES: usize = 64;
/// See [`BRIDGE_LSA_BARRIER_SESSION_BYTES`].
pub const BRIDGE_LSA_BARRIER_SESSION_ALIGN: usize = 16;

/// `libnccl_device.ltoir` as shipped in the 2.32 wheels: built without
/// `NCCL_IR_EXTERN_C`, so every name is C++-mangled. Mangled names taken from nvcc's
/// PTX for calls declared by the 2.32.3 `nccl_device_wrapper.h`, and link-tested in
/// `tests/device_code.rs`.
///
/// Since 2.32 the table also maps the GIN functions ([`LTOIR_GIN_ENTRIES`]), which the
/// shim wraps as the `cudajit_nccl_gin_*` functions of [`SHIM_GIN`].
pub static LTOIR_2_32: SymbolTable = SymbolTable {
    generation: "NCCL 2.32+ libnccl_device.ltoir (C++-mangled names)",
    entries: &LTOIR_2_32_ENTRIES,
};

const LTOIR_2_32_ENTRIES: [SymbolEntry; LTOIR_ENTRIES.len() + LTOIR_GIN_ENTRIES.len()] =
    concat(LTOIR_ENTRIES, LTOIR_GIN_ENTRIES);

/// `a` then `b`, as an array of `N = a.len() + b.len()` entries (for the static tables).
const fn concat<const N: usize>(a: &[SymbolEntry], b: &[SymbolEntry]) -> [SymbolEntry; N] {
    assert!(a.len() + b.len() == N);
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// The 2.31 `.ltoir`: as 2.32's but without `ncclLsaBarrierSessionDestroy`, so a session
/// cannot persist its barrier epoch for the next kernel (link-tested against 2.31.2).
pub static LTOIR_2_31: SymbolTable = SymbolTable {
    generation: "NCCL 2.31 libnccl_device.ltoir (C++-mangled names, no session destroy)",
    entries: LTOIR_ENTRIES.split_at(LTOIR_ENTRIES.len() - 1).0,
};

/// Every `.ltoir` entry; the last, the session destroy, arrived in 2.32. The coop
/// initialisers (CTA, warp, thread, lanes, warp span) are declared by the wrapper header
/// of 2.31.2 and 2.32.3 alike (`nccl_device_wrapper.h`).
const LTOIR_ENTRIES: &[SymbolEntry] = &[
        entry(
            ApiFunction::LsaPointer,
            "_Z17ncclGetLsaPointerP17ncclWindow_vidmemmi",
            "void* ncclGetLsaPointer(ncclWindow_t, size_t offset, int peer)",
        ),
        entry(
            ApiFunction::PeerPointer,
            "_Z18ncclGetPeerPointerP17ncclWindow_vidmemmi",
            "void* ncclGetPeerPointer(ncclWindow_t, size_t offset, int peer)",
        ),
        entry(
            ApiFunction::LocalPointer,
            "_Z19ncclGetLocalPointerP17ncclWindow_vidmemm",
            "void* ncclGetLocalPointer(ncclWindow_t, size_t offset)",
        ),
        entry(
            ApiFunction::Rank,
            "_Z16ncclDevComm_RankPK11ncclDevComm",
            "int ncclDevComm_Rank(ncclDevComm const*)",
        ),
        entry(
            ApiFunction::NRanks,
            "_Z18ncclDevComm_NRanksPK11ncclDevComm",
            "int ncclDevComm_NRanks(ncclDevComm const*)",
        ),
        entry(
            ApiFunction::LsaRank,
            "_Z19ncclDevComm_LsaRankPK11ncclDevComm",
            "int ncclDevComm_LsaRank(ncclDevComm const*)",
        ),
        entry(
            ApiFunction::LsaSize,
            "_Z19ncclDevComm_LsaSizePK11ncclDevComm",
            "int ncclDevComm_LsaSize(ncclDevComm const*)",
        ),
        entry(
            ApiFunction::LsaRankToWorld,
            "_Z19ncclTeamRankToWorldRK11ncclDevComm8ncclTeami",
            "int ncclTeamRankToWorld(ncclDevComm const&, ncclTeam, int rank)",
        ),
        entry(
            ApiFunction::CoopInitCta,
            "_Z18ncclCoopAnyInitCtaP11ncclCoopAny",
            "void ncclCoopAnyInitCta(ncclCoopAny*)",
        ),
        entry(
            ApiFunction::LsaBarrierHandle,
            "_Z22ncclDevComm_LsaBarrierPK11ncclDevComm",
            "ncclLsaBarrierHandle ncclDevComm_LsaBarrier(ncclDevComm const*)",
        ),
        entry(
            ApiFunction::LsaBarrierInit,
            "_Z25ncclLsaBarrierSessionInitP23ncclLsaBarrierSession_C11ncclCoopAnyRK11ncclDevComm8ncclTeam20ncclLsaBarrierHandlejb18ncclMultimemHandle",
            "void ncclLsaBarrierSessionInit(ncclLsaBarrierSession_C*, ncclCoopAny, ncclDevComm const&, ncclTeam, ncclLsaBarrierHandle, uint32_t index, bool multimem, ncclMultimemHandle)",
        ),
        entry(
            ApiFunction::LsaBarrierArrive,
            "_Z27ncclLsaBarrierSessionArriveP23ncclLsaBarrierSession_C11ncclCoopAnyN4cuda3std3__412memory_orderE",
            "void ncclLsaBarrierSessionArrive(ncclLsaBarrierSession_C*, ncclCoopAny, cuda::memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierWait,
            "_Z25ncclLsaBarrierSessionWaitP23ncclLsaBarrierSession_C11ncclCoopAnyN4cuda3std3__412memory_orderE",
            "void ncclLsaBarrierSessionWait(ncclLsaBarrierSession_C*, ncclCoopAny, cuda::memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierSync,
            "_Z25ncclLsaBarrierSessionSyncP23ncclLsaBarrierSession_C11ncclCoopAnyN4cuda3std3__412memory_orderE",
            "void ncclLsaBarrierSessionSync(ncclLsaBarrierSession_C*, ncclCoopAny, cuda::memory_order)",
        ),
        entry(
            ApiFunction::CoopInitWarp,
            "_Z19ncclCoopAnyInitWarpP11ncclCoopAny",
            "void ncclCoopAnyInitWarp(ncclCoopAny*)",
        ),
        entry(
            ApiFunction::CoopInitThread,
            "_Z21ncclCoopAnyInitThreadP11ncclCoopAny",
            "void ncclCoopAnyInitThread(ncclCoopAny*)",
        ),
        entry(
            ApiFunction::CoopInitLanes,
            "_Z20ncclCoopAnyInitLanesP11ncclCoopAnyj",
            "void ncclCoopAnyInitLanes(ncclCoopAny*, uint32_t lane_mask)",
        ),
        entry(
            ApiFunction::CoopInitWarpSpan,
            "_Z23ncclCoopAnyInitWarpSpanP11ncclCoopAnyiii",
            "void ncclCoopAnyInitWarpSpan(ncclCoopAny*, int warp0, int nWarps, int id)",
        ),
        entry(
            ApiFunction::LsaBarrierDestroy,
            "_Z28ncclLsaBarrierSessionDestroyP23ncclLsaBarrierSession_C",
            "void ncclLsaBarrierSessionDestroy(ncclLsaBarrierSession_C*)",
        ),
];

/// The GIN functions of the 2.32 `.ltoir` the shim calls (`gin.h` of 2.32.3, the C API
/// over `ncclGin`). Mangled names taken from nvcc's PTX for calls declared by the 2.32.3
/// `nccl_device_wrapper.h` (with `-D__NCCL_DEVICE_LTOIR_LIB__`), and link-tested through
/// the shim in `tests/nccl_device_2_32.rs` and `tests/device_code.rs`. The 2.31 table
/// and the 2.28 bridge have none: a kernel calling GIN fails to link there, naming the
/// `cudajit_nccl_gin_*` function ([`SHIM_GIN`]).
///
/// `ncclGin_C` is `{ ncclDevComm const& comm; uint32_t nConnections:8, connectionId:8,
/// _ginBackend:8; uint32_t contextId; ncclGinResourceSharingMode; void* _ginHandle;
/// uint64_t* _signalShadows; unsigned backendMask }`: 48 bytes, align 8 (checked by
/// nvcc `static_assert` against the 2.32.3 headers).
pub const LTOIR_GIN_ENTRIES: &[SymbolEntry] = &[
    entry(
        ApiFunction::GinInit,
        "_Z14ncclGin_C_initP9ncclGin_CjRK11ncclDevCommi",
        "void ncclGin_C_init(ncclGin_C*, unsigned backendMask, ncclDevComm const&, int contextIndex)",
    ),
    entry(
        ApiFunction::GinPut,
        "_Z10ncclGinPutP9ncclGin_C8ncclTeamiP17ncclWindow_vidmemmS3_mmbj17ncclGinSignalOp_tmbj11ncclCoopAnybP21ncclGinDescriptorSmemN4cuda3std3__412thread_scopeESB_",
        "void ncclGinPut(ncclGin_C*, ncclTeam, int peer, ncclWindow_t dstWin, size_t dstOffset, \
         ncclWindow_t srcWin, size_t srcOffset, size_t bytes, bool isSignal, ncclGinSignal_t signalId, \
         ncclGinSignalOp_t signalOp, uint64_t signalOpArg, bool isCounter, ncclGinCounter_t counterId, \
         ncclCoopAny coop, bool isDescriptor, ncclGinDescriptorSmem* descriptor, \
         cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease)",
    ),
    entry(
        ApiFunction::GinSignal,
        "_Z13ncclGinSignalP9ncclGin_C8ncclTeamibj17ncclGinSignalOp_tm11ncclCoopAnybP21ncclGinDescriptorSmemN4cuda3std3__412thread_scopeES9_",
        "void ncclGinSignal(ncclGin_C*, ncclTeam, int peer, bool isSignal, ncclGinSignal_t signalId, \
         ncclGinSignalOp_t signalOp, uint64_t signalOpArg, ncclCoopAny coop, bool isDescriptor, \
         ncclGinDescriptorSmem* descriptor, cuda::thread_scope givenRelease, \
         cuda::thread_scope requiredRelease)",
    ),
    entry(
        ApiFunction::GinWaitSignal,
        "_Z17ncclGinWaitSignalP9ncclGin_C11ncclCoopAnyjmiN4cuda3std3__412memory_orderE",
        "void ncclGinWaitSignal(ncclGin_C*, ncclCoopAny coop, ncclGinSignal_t signal, uint64_t least, \
         int bits, cuda::memory_order)",
    ),
    entry(
        ApiFunction::GinFlush,
        "_Z12ncclGinFlushP9ncclGin_C11ncclCoopAnyN4cuda3std3__412memory_orderE",
        "void ncclGinFlush(ncclGin_C*, ncclCoopAny coop, cuda::memory_order)",
    ),
    entry(
        ApiFunction::GinReadSignal,
        "_Z17ncclGinReadSignalP9ncclGin_CjiN4cuda3std3__412memory_orderE",
        "uint64_t ncclGinReadSignal(ncclGin_C*, ncclGinSignal_t signal, int bits, cuda::memory_order)",
    ),
    entry(
        ApiFunction::GinResetSignal,
        "_Z18ncclGinResetSignalP9ncclGin_Cj",
        "void ncclGinResetSignal(ncclGin_C*, ncclGinSignal_t signal)",
    ),
];

/// `signal` of `cudajit_nccl_gin_put` meaning "no signal": a put that bumps nothing
/// (signal ids are below the communicator's `ginSignalCount`, so never this).
pub const GIN_NO_SIGNAL: u32 = u32::MAX;

/// The GIN functions of cudajit's C ABI, which only the shim over a 2.32+ `.ltoir`
/// defines (the 2.28 bridge and the 2.31 shim do not). Windows are `ncclWindow_t` as
/// integers, the communicator a pointer, everything else a scalar; `context` is the GIN
/// context index (`0 <= context < ginContextCount`), `peer` a world rank (the world
/// team), `signal` a GIN signal id (`< ginSignalCount`). Every call is one thread's
/// (NCCL's `ncclCoopThread`); signals are bumped with `ncclGinSignalInc` (by one, with
/// the communicator's `ginStrongLegacySignals` strength), which NCCL forbids mixing with
/// other signal operators on one signal between resets. Waits and flushes acquire.
pub static SHIM_GIN: SymbolTable = SymbolTable {
    generation: "cudajit's C-ABI shim GIN functions (NCCL 2.32+ libnccl_device.ltoir only)",
    entries: &[
        entry(
            ApiFunction::GinPut,
            "cudajit_nccl_gin_put",
            "void cudajit_nccl_gin_put(const ncclDevComm*, int context, int peer, \
             uintptr_t dst_window, size_t dst_offset, uintptr_t src_window, size_t src_offset, \
             size_t bytes, uint32_t signal /* GIN_NO_SIGNAL: none */)",
        ),
        entry(
            ApiFunction::GinSignal,
            "cudajit_nccl_gin_signal",
            "void cudajit_nccl_gin_signal(const ncclDevComm*, int context, int peer, uint32_t signal)",
        ),
        entry(
            ApiFunction::GinWaitSignal,
            "cudajit_nccl_gin_wait_signal",
            "void cudajit_nccl_gin_wait_signal(const ncclDevComm*, int context, uint32_t signal, \
             uint64_t least)",
        ),
        entry(
            ApiFunction::GinFlush,
            "cudajit_nccl_gin_flush",
            "void cudajit_nccl_gin_flush(const ncclDevComm*, int context)",
        ),
        entry(
            ApiFunction::GinReadSignal,
            "cudajit_nccl_gin_read_signal",
            "uint64_t cudajit_nccl_gin_read_signal(const ncclDevComm*, int context, uint32_t signal)",
        ),
        entry(
            ApiFunction::GinResetSignal,
            "cudajit_nccl_gin_reset_signal",
            "void cudajit_nccl_gin_reset_signal(const ncclDevComm*, int context, uint32_t signal)",
        ),
    ],
};

/// Our `extern "C"` bridge over NCCL 2.28's headers (`bridge_2_28.cu`). Barrier sessions
/// live in [`BRIDGE_LSA_BARRIER_SESSION_BYTES`] bytes the kernel provides; the
/// cooperative group is the CTA (`lsa_barrier_*`), a warp (`_warp`), a thread (`_thread`),
/// some lanes of a warp (`_lanes`) or a span of warps (`_warp_span`); memory orders are
/// `cuda::memory_order` values.
pub static BRIDGE_2_28: SymbolTable = SymbolTable {
    generation: "cudajit bridge over NCCL 2.28 nccl_device.h (cudajit_nccl_* names)",
    entries: &[
        entry(
            ApiFunction::LsaPointer,
            "cudajit_nccl_lsa_pointer",
            "uintptr_t cudajit_nccl_lsa_pointer(uintptr_t window, size_t offset, int lsa_peer)",
        ),
        entry(
            ApiFunction::PeerPointer,
            "cudajit_nccl_peer_pointer",
            "uintptr_t cudajit_nccl_peer_pointer(uintptr_t window, size_t offset, int peer)",
        ),
        entry(
            ApiFunction::LocalPointer,
            "cudajit_nccl_local_pointer",
            "uintptr_t cudajit_nccl_local_pointer(uintptr_t window, size_t offset)",
        ),
        entry(
            ApiFunction::Rank,
            "cudajit_nccl_rank",
            "int cudajit_nccl_rank(const ncclDevComm*)",
        ),
        entry(
            ApiFunction::NRanks,
            "cudajit_nccl_nranks",
            "int cudajit_nccl_nranks(const ncclDevComm*)",
        ),
        entry(
            ApiFunction::LsaRank,
            "cudajit_nccl_lsa_rank",
            "int cudajit_nccl_lsa_rank(const ncclDevComm*)",
        ),
        entry(
            ApiFunction::LsaSize,
            "cudajit_nccl_lsa_size",
            "int cudajit_nccl_lsa_size(const ncclDevComm*)",
        ),
        entry(
            ApiFunction::LsaRankToWorld,
            "cudajit_nccl_lsa_rank_to_world",
            "int cudajit_nccl_lsa_rank_to_world(const ncclDevComm*, int lsa_rank)",
        ),
        entry(
            ApiFunction::LsaBarrierInit,
            "cudajit_nccl_lsa_barrier_init",
            "void cudajit_nccl_lsa_barrier_init(void* session, const ncclDevComm*, unsigned index)",
        ),
        entry(
            ApiFunction::LsaBarrierArrive,
            "cudajit_nccl_lsa_barrier_arrive",
            "void cudajit_nccl_lsa_barrier_arrive(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierWait,
            "cudajit_nccl_lsa_barrier_wait",
            "void cudajit_nccl_lsa_barrier_wait(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierSync,
            "cudajit_nccl_lsa_barrier_sync",
            "void cudajit_nccl_lsa_barrier_sync(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierDestroy,
            "cudajit_nccl_lsa_barrier_destroy",
            "void cudajit_nccl_lsa_barrier_destroy(void* session)",
        ),
        entry(
            ApiFunction::LsaBarrierInitWarp,
            "cudajit_nccl_lsa_barrier_init_warp",
            "void cudajit_nccl_lsa_barrier_init_warp(void* session, const ncclDevComm*, unsigned index)",
        ),
        entry(
            ApiFunction::LsaBarrierArriveWarp,
            "cudajit_nccl_lsa_barrier_arrive_warp",
            "void cudajit_nccl_lsa_barrier_arrive_warp(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierWaitWarp,
            "cudajit_nccl_lsa_barrier_wait_warp",
            "void cudajit_nccl_lsa_barrier_wait_warp(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierSyncWarp,
            "cudajit_nccl_lsa_barrier_sync_warp",
            "void cudajit_nccl_lsa_barrier_sync_warp(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierDestroyWarp,
            "cudajit_nccl_lsa_barrier_destroy_warp",
            "void cudajit_nccl_lsa_barrier_destroy_warp(void* session)",
        ),
        entry(
            ApiFunction::LsaBarrierInitThread,
            "cudajit_nccl_lsa_barrier_init_thread",
            "void cudajit_nccl_lsa_barrier_init_thread(void* session, const ncclDevComm*, unsigned index)",
        ),
        entry(
            ApiFunction::LsaBarrierArriveThread,
            "cudajit_nccl_lsa_barrier_arrive_thread",
            "void cudajit_nccl_lsa_barrier_arrive_thread(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierWaitThread,
            "cudajit_nccl_lsa_barrier_wait_thread",
            "void cudajit_nccl_lsa_barrier_wait_thread(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierSyncThread,
            "cudajit_nccl_lsa_barrier_sync_thread",
            "void cudajit_nccl_lsa_barrier_sync_thread(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierDestroyThread,
            "cudajit_nccl_lsa_barrier_destroy_thread",
            "void cudajit_nccl_lsa_barrier_destroy_thread(void* session)",
        ),
        entry(
            ApiFunction::LsaBarrierInitLanes,
            "cudajit_nccl_lsa_barrier_init_lanes",
            "void cudajit_nccl_lsa_barrier_init_lanes(void* session, const ncclDevComm*, unsigned lane_mask, unsigned index)",
        ),
        entry(
            ApiFunction::LsaBarrierArriveLanes,
            "cudajit_nccl_lsa_barrier_arrive_lanes",
            "void cudajit_nccl_lsa_barrier_arrive_lanes(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierWaitLanes,
            "cudajit_nccl_lsa_barrier_wait_lanes",
            "void cudajit_nccl_lsa_barrier_wait_lanes(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierSyncLanes,
            "cudajit_nccl_lsa_barrier_sync_lanes",
            "void cudajit_nccl_lsa_barrier_sync_lanes(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierDestroyLanes,
            "cudajit_nccl_lsa_barrier_destroy_lanes",
            "void cudajit_nccl_lsa_barrier_destroy_lanes(void* session)",
        ),
        entry(
            ApiFunction::LsaBarrierInitWarpSpan,
            "cudajit_nccl_lsa_barrier_init_warp_span",
            "void cudajit_nccl_lsa_barrier_init_warp_span(void* session, const ncclDevComm*, unsigned warp0, unsigned nwarps, unsigned id, unsigned index)",
        ),
        entry(
            ApiFunction::LsaBarrierArriveWarpSpan,
            "cudajit_nccl_lsa_barrier_arrive_warp_span",
            "void cudajit_nccl_lsa_barrier_arrive_warp_span(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierWaitWarpSpan,
            "cudajit_nccl_lsa_barrier_wait_warp_span",
            "void cudajit_nccl_lsa_barrier_wait_warp_span(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierSyncWarpSpan,
            "cudajit_nccl_lsa_barrier_sync_warp_span",
            "void cudajit_nccl_lsa_barrier_sync_warp_span(void* session, int memory_order)",
        ),
        entry(
            ApiFunction::LsaBarrierDestroyWarpSpan,
            "cudajit_nccl_lsa_barrier_destroy_warp_span",
            "void cudajit_nccl_lsa_barrier_destroy_warp_span(void* session)",
        ),
    ],
};

/// The check of the tests that hold a spelling of the names to these tables (here, in
/// NCCL's device API and in its simulation): `None` when `found` (the names spelled in
/// `file`) is exactly `table`, else a message naming what `file` lacks and what it has that
/// the table does not.
pub fn spelling_mismatch<'a>(
    file: &str,
    found: impl IntoIterator<Item = &'a str>,
    table: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let found: BTreeSet<&str> = found.into_iter().collect();
    let table: BTreeSet<&str> = table.into_iter().collect();
    let missing: Vec<&str> = table.difference(&found).copied().collect();
    let extra: Vec<&str> = found.difference(&table).copied().collect();
    (!missing.is_empty() || !extra.is_empty()).then(|| {
        format!(
            "{file} disagrees with nccl-device/host/src/device_code/symbols.rs: missing \
             {missing:?}, not in the table {extra:?}"
        )
    })
}
