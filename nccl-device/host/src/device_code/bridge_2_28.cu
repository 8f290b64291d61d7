// cudajit's device-library bridge for NCCL releases that ship no device library (2.28).
//
// NCCL 2.28's device API is header-only C++ templates; NVVM IR cannot call templates,
// so this file instantiates the pieces cudajit kernels need as `extern "C"` functions
// with `cudajit_nccl_` names and only pointer and scalar parameters (no C++ objects
// cross the boundary, so the kernel's NVVM IR needs no knowledge of C++ ABI rules).
// nvcc compiles it with `-dlto -rdc=true -fatbin`, and nvJitLink's LTO inlines every
// function into the calling kernel. Compiled against the installed `nccl_device.h`, so
// struct layouts are those of the release being linked.
//
// The cooperative group of the `cudajit_nccl_lsa_barrier_*` sessions is the whole CTA
// (ncclCoopCta), barrier index `blockIdx.x`, one barrier per CTA; the `_warp`, `_thread`,
// `_lanes` and `_warp_span` sessions use ncclCoopWarp, ncclCoopThread, ncclCoopLanes and
// ncclCoopWarpSpan, with indices the kernel chooses.
#include <nccl.h>
#include <nccl_device.h>
#include <new>

// Bytes a kernel reserves (align 16) for an LSA barrier session: checked here at compile
// time and mirrored in device_code/symbols.rs.
#define CUDAJIT_LSA_BARRIER_SESSION_BYTES 64
#define CUDAJIT_LSA_BARRIER_SESSION_ALIGN 16

typedef ncclLsaBarrierSession<ncclCoopCta> cudajit_lsa_session;
typedef ncclLsaBarrierSession<ncclCoopWarp> cudajit_lsa_session_warp;
typedef ncclLsaBarrierSession<ncclCoopThread> cudajit_lsa_session_thread;
typedef ncclLsaBarrierSession<ncclCoopLanes> cudajit_lsa_session_lanes;
typedef ncclLsaBarrierSession<ncclCoopWarpSpan> cudajit_lsa_session_warp_span;
static_assert(sizeof(cudajit_lsa_session) <= CUDAJIT_LSA_BARRIER_SESSION_BYTES &&
                  sizeof(cudajit_lsa_session_warp) <= CUDAJIT_LSA_BARRIER_SESSION_BYTES,
              "ncclLsaBarrierSession outgrew CUDAJIT_LSA_BARRIER_SESSION_BYTES");
static_assert(alignof(cudajit_lsa_session) <= CUDAJIT_LSA_BARRIER_SESSION_ALIGN &&
                  alignof(cudajit_lsa_session_warp) <= CUDAJIT_LSA_BARRIER_SESSION_ALIGN,
              "ncclLsaBarrierSession needs more alignment than the kernel gives");
static_assert(sizeof(cudajit_lsa_session_thread) <= CUDAJIT_LSA_BARRIER_SESSION_BYTES &&
                  alignof(cudajit_lsa_session_thread) <= CUDAJIT_LSA_BARRIER_SESSION_ALIGN,
              "ncclLsaBarrierSession<ncclCoopThread> does not fit the kernel's session buffer");
static_assert(sizeof(cudajit_lsa_session_lanes) <= CUDAJIT_LSA_BARRIER_SESSION_BYTES &&
                  alignof(cudajit_lsa_session_lanes) <= CUDAJIT_LSA_BARRIER_SESSION_ALIGN,
              "ncclLsaBarrierSession<ncclCoopLanes> does not fit the kernel's session buffer");
static_assert(sizeof(cudajit_lsa_session_warp_span) <= CUDAJIT_LSA_BARRIER_SESSION_BYTES &&
                  alignof(cudajit_lsa_session_warp_span) <= CUDAJIT_LSA_BARRIER_SESSION_ALIGN,
              "ncclLsaBarrierSession<ncclCoopWarpSpan> does not fit the kernel's session buffer");

// The host side (cudajit_nccl::sys::layout, generated from the same release's headers)
// passes ncclDevComm by value to kernels: its size must be the one compiled here.
#ifdef CUDAJIT_DEV_COMM_BYTES
static_assert(sizeof(ncclDevComm) == CUDAJIT_DEV_COMM_BYTES,
              "ncclDevComm differs from the host bindings' layout: headers of another release?");
#endif

// Memory orders travel as cuda::memory_order's values (relaxed 0, acquire 2, release 3,
// acq_rel 4, seq_cst 5): the Rust side passes the same integers.
static __device__ __forceinline__ cuda::memory_order cudajit_order(int order) {
  return static_cast<cuda::memory_order>(order);
}

// Windows and the addresses of window memory cross as integers (uintptr_t): kernels hold
// a window as a 64-bit handle and read memory at an address through a slice, so the
// kernel language needs no pointer type and the declarations match these definitions
// exactly (LTO inlines across a match, not across a cast of the callee).
static __device__ __forceinline__ ncclWindow_t cudajit_window(uintptr_t window) {
  return reinterpret_cast<ncclWindow_t>(window);
}

extern "C" {

__device__ uintptr_t cudajit_nccl_lsa_pointer(uintptr_t window, size_t offset, int lsa_peer) {
  return reinterpret_cast<uintptr_t>(ncclGetLsaPointer(cudajit_window(window), offset, lsa_peer));
}

__device__ uintptr_t cudajit_nccl_peer_pointer(uintptr_t window, size_t offset, int peer) {
  return reinterpret_cast<uintptr_t>(ncclGetPeerPointer(cudajit_window(window), offset, peer));
}

__device__ uintptr_t cudajit_nccl_local_pointer(uintptr_t window, size_t offset) {
  return reinterpret_cast<uintptr_t>(ncclGetLocalPointer(cudajit_window(window), offset));
}

__device__ int cudajit_nccl_rank(const ncclDevComm* comm) { return ncclTeamWorld(*comm).rank; }

__device__ int cudajit_nccl_nranks(const ncclDevComm* comm) {
  return ncclTeamWorld(*comm).nRanks;
}

__device__ int cudajit_nccl_lsa_rank(const ncclDevComm* comm) { return ncclTeamLsa(*comm).rank; }

__device__ int cudajit_nccl_lsa_size(const ncclDevComm* comm) {
  return ncclTeamLsa(*comm).nRanks;
}

__device__ int cudajit_nccl_lsa_rank_to_world(const ncclDevComm* comm, int lsa_rank) {
  return ncclTeamRankToWorld(*comm, ncclTeamLsa(*comm), lsa_rank);
}

// `session` points at CUDAJIT_LSA_BARRIER_SESSION_BYTES bytes, aligned to
// CUDAJIT_LSA_BARRIER_SESSION_ALIGN, that live until the matching destroy.
__device__ void cudajit_nccl_lsa_barrier_init(void* session, const ncclDevComm* comm,
                                              unsigned int index) {
  new (session) cudajit_lsa_session(ncclCoopCta(), *comm, ncclTeamTagLsa(), index);
}

__device__ void cudajit_nccl_lsa_barrier_arrive(void* session, int order) {
  static_cast<cudajit_lsa_session*>(session)->arrive(ncclCoopCta(), cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_wait(void* session, int order) {
  static_cast<cudajit_lsa_session*>(session)->wait(ncclCoopCta(), cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_sync(void* session, int order) {
  static_cast<cudajit_lsa_session*>(session)->sync(ncclCoopCta(), cudajit_order(order));
}

// Runs the session's destructor, which persists the barrier epoch for the next kernel.
__device__ void cudajit_nccl_lsa_barrier_destroy(void* session) {
  static_cast<cudajit_lsa_session*>(session)->~cudajit_lsa_session();
}

// The same for a warp's session (ncclCoopWarp): every lane of the warp calls, with an
// index per warp (the device communicator needs that many LSA barriers).
__device__ void cudajit_nccl_lsa_barrier_init_warp(void* session, const ncclDevComm* comm,
                                                   unsigned int index) {
  new (session) cudajit_lsa_session_warp(ncclCoopWarp(), *comm, ncclTeamTagLsa(), index);
}

__device__ void cudajit_nccl_lsa_barrier_arrive_warp(void* session, int order) {
  static_cast<cudajit_lsa_session_warp*>(session)->arrive(ncclCoopWarp(), cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_wait_warp(void* session, int order) {
  static_cast<cudajit_lsa_session_warp*>(session)->wait(ncclCoopWarp(), cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_sync_warp(void* session, int order) {
  static_cast<cudajit_lsa_session_warp*>(session)->sync(ncclCoopWarp(), cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_destroy_warp(void* session) {
  static_cast<cudajit_lsa_session_warp*>(session)->~cudajit_lsa_session_warp();
}

// The sessions of the other cooperative groups. The session keeps its group (the
// `coop` member of ncclLsaBarrierSession_internal), and NCCL's arrive/wait/sync use that
// one, not the group passed to them: passing it back makes the calls independent of the
// group's parameters (the lane mask, the warp span), which the kernel gives only at init.

// A thread's session (ncclCoopThread): each calling thread on its own, with an index of
// its own (the device communicator needs one LSA barrier per such thread).
__device__ void cudajit_nccl_lsa_barrier_init_thread(void* session, const ncclDevComm* comm,
                                                     unsigned int index) {
  new (session) cudajit_lsa_session_thread(ncclCoopThread(), *comm, ncclTeamTagLsa(), index);
}

__device__ void cudajit_nccl_lsa_barrier_arrive_thread(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_thread*>(session);
  s->arrive(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_wait_thread(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_thread*>(session);
  s->wait(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_sync_thread(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_thread*>(session);
  s->sync(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_destroy_thread(void* session) {
  static_cast<cudajit_lsa_session_thread*>(session)->~cudajit_lsa_session_thread();
}

// Some lanes of one warp (ncclCoopLanes(lane_mask)): every lane of the mask calls, with
// the same mask and index.
__device__ void cudajit_nccl_lsa_barrier_init_lanes(void* session, const ncclDevComm* comm,
                                                    unsigned int lane_mask, unsigned int index) {
  new (session)
      cudajit_lsa_session_lanes(ncclCoopLanes(lane_mask), *comm, ncclTeamTagLsa(), index);
}

__device__ void cudajit_nccl_lsa_barrier_arrive_lanes(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_lanes*>(session);
  s->arrive(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_wait_lanes(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_lanes*>(session);
  s->wait(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_sync_lanes(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_lanes*>(session);
  s->sync(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_destroy_lanes(void* session) {
  static_cast<cudajit_lsa_session_lanes*>(session)->~cudajit_lsa_session_lanes();
}

// Consecutive warps of a CTA (ncclCoopWarpSpan(warp0, nWarps, id)): warps warp0 ..
// warp0 + nwarps - 1 (threadIdx.x / 32) call, with the same span and index; the span
// synchronises on named barrier 1 + id.
__device__ void cudajit_nccl_lsa_barrier_init_warp_span(void* session, const ncclDevComm* comm,
                                                        unsigned int warp0, unsigned int nwarps,
                                                        unsigned int id, unsigned int index) {
  new (session) cudajit_lsa_session_warp_span(
      ncclCoopWarpSpan(static_cast<int>(warp0), static_cast<int>(nwarps), static_cast<int>(id)),
      *comm, ncclTeamTagLsa(), index);
}

__device__ void cudajit_nccl_lsa_barrier_arrive_warp_span(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_warp_span*>(session);
  s->arrive(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_wait_warp_span(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_warp_span*>(session);
  s->wait(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_sync_warp_span(void* session, int order) {
  auto* s = static_cast<cudajit_lsa_session_warp_span*>(session);
  s->sync(s->coop, cudajit_order(order));
}

__device__ void cudajit_nccl_lsa_barrier_destroy_warp_span(void* session) {
  static_cast<cudajit_lsa_session_warp_span*>(session)->~cudajit_lsa_session_warp_span();
}

}  // extern "C"
