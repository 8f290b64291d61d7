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
// The cooperative group of every barrier is the whole CTA (ncclCoopCta): the issue's
// barrier index is `blockIdx.x`, one barrier per CTA.
#include <nccl.h>
#include <nccl_device.h>
#include <new>

// Bytes a kernel reserves (align 16) for an LSA barrier session: checked here at compile
// time and mirrored in device_library/symbols.rs.
#define CUDAJIT_LSA_BARRIER_SESSION_BYTES 64
#define CUDAJIT_LSA_BARRIER_SESSION_ALIGN 16

typedef ncclLsaBarrierSession<ncclCoopCta> cudajit_lsa_session;
typedef ncclLsaBarrierSession<ncclCoopWarp> cudajit_lsa_session_warp;
static_assert(sizeof(cudajit_lsa_session) <= CUDAJIT_LSA_BARRIER_SESSION_BYTES &&
                  sizeof(cudajit_lsa_session_warp) <= CUDAJIT_LSA_BARRIER_SESSION_BYTES,
              "ncclLsaBarrierSession outgrew CUDAJIT_LSA_BARRIER_SESSION_BYTES");
static_assert(alignof(cudajit_lsa_session) <= CUDAJIT_LSA_BARRIER_SESSION_ALIGN &&
                  alignof(cudajit_lsa_session_warp) <= CUDAJIT_LSA_BARRIER_SESSION_ALIGN,
              "ncclLsaBarrierSession needs more alignment than the kernel gives");

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

}  // extern "C"
