// Reference LSA collectives in CUDA C++ over NCCL 2.28's device API (`nccl_device.h`):
// the hand-written baseline that examples/nccl_bench/ measures against ncclAllReduce,
// ncclAllGather and cuMemcpyPeerAsync (and, later, against cudajit's DSL kernels).
//
// Build (the GPU machine; headers of exactly the loaded libnccl's release):
//   nvcc -O3 -arch=sm_90 -cubin -std=c++17 -I<nccl include> [-I<cuda include>] \
//        -o lsa_collectives.cubin lsa_collectives.cu
//
// Every kernel is `extern "C" __global__` with the same parameters:
//   (ncclDevComm comm, ncclWindow_t win, size_t offset_bytes, size_t count)
// - `comm` by value (the host copies DevComm::as_bytes(rank): sizeof(ncclDevComm) bytes);
// - `win` the symmetric window (NCCL_WIN_COLL_SYMMETRIC) holding input and output;
// - `offset_bytes` where the input starts in the window: a multiple of 16;
// - `count` elements per rank (bytes for the *_bytes kernels).
//
// Window convention, identical on every rank (all offsets relative to the window):
//   input   [offset_bytes, offset_bytes + count*sizeof(T))
//   output  starts at offset_bytes + round_up(count*sizeof(T), 4096)   (output_offset)
//           all-reduce: count elements; all-gather: lsaSize*count, rank r's block at
//           r*count; peer read: count (the next LSA peer's input).
// So a window of output_offset + lsaSize*count*sizeof(T) bytes (past offset_bytes)
// serves every kernel.
//
// Launch: any grid and block size (grid-stride loops), blockDim.x a multiple of 32,
// gridDim.x <= the dev comm's lsaBarrierCount (barrier index = blockIdx.x), the same
// grid on every rank, launched on every rank before waiting on any: each CTA meets the
// CTA of the same index on every LSA peer in an entry barrier (acquire: peers' inputs,
// written before their launch, are visible) and an exit barrier (release: nothing of
// this kernel's peer reads or writes is still in flight when any rank finishes).
// The LSA team must be the whole communicator (one NVLink domain, e.g. ncclCommInitAll),
// with at most LSA_MAX_PEERS ranks.
//
// Accesses are 16 bytes wide (float4 / int4 / uint4 of 8 bf16) plus a scalar tail;
// reductions add peers in LSA rank order 0..n-1 on every rank (bf16 accumulates in f32
// and rounds once), so every rank gets bit-identical results.
#include <cuda_bf16.h>
#include <nccl.h>
#include <nccl_device.h>
#include <stdint.h>

#define LSA_MAX_PEERS 72
#define OUTPUT_ALIGN 4096

typedef ncclLsaBarrierSession<ncclCoopCta> LsaBarrier;

static __device__ __forceinline__ size_t output_offset(size_t offset_bytes, size_t in_bytes) {
  return offset_bytes + (in_bytes + OUTPUT_ALIGN - 1) / OUTPUT_ALIGN * OUTPUT_ALIGN;
}

// Base addresses of one window offset on every LSA peer, in shared memory: computed once
// per CTA instead of once per access. Callers sync the CTA (the barrier does) before use.
static __device__ __forceinline__ void peer_bases(ncclWindow_t win, size_t offset, int n,
                                                  char** bases) {
  if (n > LSA_MAX_PEERS) __trap();
  for (int p = threadIdx.x; p < n; p += blockDim.x) {
    bases[p] = static_cast<char*>(ncclGetLsaPointer(win, offset, p));
  }
}

// Window memory is global memory: saying so lets the compiler emit ld/st.global instead
// of generic accesses.
template <typename P>
static __device__ __forceinline__ P* global(P* p) {
  __builtin_assume(__isGlobal(p));
  return p;
}

// ---------------------------------------------------------------------------------------
// Element types: a 16-byte vector, its f32 (or i32) accumulator, and the scalar tail.

template <typename T> struct Lanes;

template <> struct Lanes<float> {
  typedef float4 Vec;
  typedef float4 Acc;
  typedef float ScalarAcc;
  static constexpr int kLanes = 4;
  static __device__ __forceinline__ Acc zero() { return make_float4(0.f, 0.f, 0.f, 0.f); }
  static __device__ __forceinline__ void add(Acc& a, Vec v) {
    a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
  }
  static __device__ __forceinline__ Vec pack(Acc a) { return a; }
  static __device__ __forceinline__ ScalarAcc widen(float x) { return x; }
  static __device__ __forceinline__ float narrow(ScalarAcc x) { return x; }
};

template <> struct Lanes<int32_t> {
  typedef int4 Vec;
  typedef int4 Acc;
  typedef int32_t ScalarAcc;
  static constexpr int kLanes = 4;
  static __device__ __forceinline__ Acc zero() { return make_int4(0, 0, 0, 0); }
  static __device__ __forceinline__ void add(Acc& a, Vec v) {
    a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
  }
  static __device__ __forceinline__ Vec pack(Acc a) { return a; }
  static __device__ __forceinline__ ScalarAcc widen(int32_t x) { return x; }
  static __device__ __forceinline__ int32_t narrow(ScalarAcc x) { return x; }
};

struct Bf16x8Acc {
  float2 v[4];
};

template <> struct Lanes<__nv_bfloat16> {
  typedef uint4 Vec;  // 8 bf16
  typedef Bf16x8Acc Acc;
  typedef float ScalarAcc;
  static constexpr int kLanes = 8;
  static __device__ __forceinline__ Acc zero() {
    Acc a;
#pragma unroll
    for (int i = 0; i < 4; ++i) a.v[i] = make_float2(0.f, 0.f);
    return a;
  }
  static __device__ __forceinline__ void add(Acc& a, Vec v) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float2 f = __bfloat1622float2(h[i]);
      a.v[i].x += f.x;
      a.v[i].y += f.y;
    }
  }
  static __device__ __forceinline__ Vec pack(Acc a) {
    Vec out;
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = __float22bfloat162_rn(a.v[i]);
    return out;
  }
  static __device__ __forceinline__ ScalarAcc widen(__nv_bfloat16 x) {
    return __bfloat162float(x);
  }
  static __device__ __forceinline__ __nv_bfloat16 narrow(ScalarAcc x) {
    return __float2bfloat16_rn(x);
  }
};

// Sums vectors [begin, end) over the n peers' inputs (`src[p]`) and stores the result
// to every destination in `dst` (n_dst of them: 1 for one-shot, n for two-shot).
// Unrolled by 4 so each thread keeps 4*n independent 16-byte loads in flight.
template <typename T>
static __device__ __forceinline__ void reduce_vectors(char* const* src, int n, char* const* dst,
                                                      int n_dst, size_t begin, size_t end) {
  typedef Lanes<T> L;
  typedef typename L::Vec Vec;
  constexpr int kUnroll = 4;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = begin + size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < end; i += kUnroll * stride) {
    typename L::Acc acc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = L::zero();
    for (int p = 0; p < n; ++p) {
      const Vec* in = global(reinterpret_cast<const Vec*>(src[p]));
      Vec v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = in[i + u * stride];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) L::add(acc[u], v[u]);
    }
    for (int d = 0; d < n_dst; ++d) {
      Vec* out = global(reinterpret_cast<Vec*>(dst[d]));
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) out[i + u * stride] = L::pack(acc[u]);
    }
  }
  for (; i < end; i += stride) {
    typename L::Acc acc = L::zero();
    for (int p = 0; p < n; ++p) L::add(acc, global(reinterpret_cast<const Vec*>(src[p]))[i]);
    const Vec r = L::pack(acc);
    for (int d = 0; d < n_dst; ++d) global(reinterpret_cast<Vec*>(dst[d]))[i] = r;
  }
}

// The scalar elements [begin, end), by the whole grid.
template <typename T>
static __device__ __forceinline__ void reduce_scalars(char* const* src, int n, char* const* dst,
                                                      int n_dst, size_t begin, size_t end) {
  typedef Lanes<T> L;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = begin + size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < end; i += stride) {
    typename L::ScalarAcc acc = L::widen(reinterpret_cast<const T*>(src[0])[i]);
    for (int p = 1; p < n; ++p) acc += L::widen(reinterpret_cast<const T*>(src[p])[i]);
    const T r = L::narrow(acc);
    for (int d = 0; d < n_dst; ++d) reinterpret_cast<T*>(dst[d])[i] = r;
  }
}

// One-shot: every rank reads all n inputs and writes the sum to its own output.
template <typename T>
static __device__ __forceinline__ void all_reduce_one_shot(ncclDevComm const& comm,
                                                           ncclWindow_t win, size_t offset,
                                                           size_t count) {
  __shared__ char* src[LSA_MAX_PEERS];
  __shared__ char* dst[1];
  const int n = comm.lsaSize;
  peer_bases(win, offset, n, src);
  if (threadIdx.x == 0) {
    dst[0] = static_cast<char*>(
        ncclGetLocalPointer(win, output_offset(offset, count * sizeof(T))));
  }
  LsaBarrier bar(ncclCoopCta(), comm, ncclTeamTagLsa(), blockIdx.x);
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);  // also publishes src/dst to the CTA

  const size_t n_vec = count / Lanes<T>::kLanes;
  reduce_vectors<T>(src, n, dst, 1, 0, n_vec);
  reduce_scalars<T>(src, n, dst, 1, n_vec * Lanes<T>::kLanes, count);

  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// Two-shot: LSA rank r reduces its chunk of vectors (reduce-scatter) and stores the sum
// into every peer's output (all-gather); the last rank also takes the scalar tail.
template <typename T>
static __device__ __forceinline__ void all_reduce_two_shot(ncclDevComm const& comm,
                                                           ncclWindow_t win, size_t offset,
                                                           size_t count) {
  __shared__ char* src[LSA_MAX_PEERS];
  __shared__ char* dst[LSA_MAX_PEERS];
  const int n = comm.lsaSize;
  const int r = comm.lsaRank;
  peer_bases(win, offset, n, src);
  peer_bases(win, output_offset(offset, count * sizeof(T)), n, dst);
  LsaBarrier bar(ncclCoopCta(), comm, ncclTeamTagLsa(), blockIdx.x);
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);

  const size_t n_vec = count / Lanes<T>::kLanes;
  const size_t chunk = (n_vec + n - 1) / n;
  const size_t begin = min(n_vec, size_t(r) * chunk);
  const size_t end = min(n_vec, begin + chunk);
  reduce_vectors<T>(src, n, dst, n, begin, end);
  if (r == n - 1) reduce_scalars<T>(src, n, dst, n, n_vec * Lanes<T>::kLanes, count);

  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// Copies `bytes` from `from` to every `to[d]` (d < n_to), 16 bytes at a time when every
// address allows it, else 4, else 1.
static __device__ __forceinline__ void copy_bytes(const char* from, char* const* to, int n_to,
                                                  size_t bytes) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uintptr_t align = reinterpret_cast<uintptr_t>(from) | bytes;
  for (int d = 0; d < n_to; ++d) align |= reinterpret_cast<uintptr_t>(to[d]);
  if (align % 16 == 0) {
    const uint4* in = global(reinterpret_cast<const uint4*>(from));
    const size_t n = bytes / 16;
    constexpr int kUnroll = 4;
    size_t i = first;
    for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = in[i + u * stride];
      for (int d = 0; d < n_to; ++d) {
        uint4* out = global(reinterpret_cast<uint4*>(to[d]));
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) out[i + u * stride] = v[u];
      }
    }
    for (; i < n; i += stride) {
      const uint4 v = in[i];
      for (int d = 0; d < n_to; ++d) global(reinterpret_cast<uint4*>(to[d]))[i] = v;
    }
  } else if (align % 4 == 0) {
    for (size_t i = first; i < bytes / 4; i += stride) {
      const uint32_t v = reinterpret_cast<const uint32_t*>(from)[i];
      for (int d = 0; d < n_to; ++d) reinterpret_cast<uint32_t*>(to[d])[i] = v;
    }
  } else {
    for (size_t i = first; i < bytes; i += stride) {
      const char v = from[i];
      for (int d = 0; d < n_to; ++d) to[d][i] = v;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Entry points.

extern "C" {

__global__ void lsa_all_reduce_one_shot_f32(ncclDevComm comm, ncclWindow_t win,
                                            size_t offset_bytes, size_t count) {
  all_reduce_one_shot<float>(comm, win, offset_bytes, count);
}
__global__ void lsa_all_reduce_one_shot_bf16(ncclDevComm comm, ncclWindow_t win,
                                             size_t offset_bytes, size_t count) {
  all_reduce_one_shot<__nv_bfloat16>(comm, win, offset_bytes, count);
}
__global__ void lsa_all_reduce_one_shot_i32(ncclDevComm comm, ncclWindow_t win,
                                            size_t offset_bytes, size_t count) {
  all_reduce_one_shot<int32_t>(comm, win, offset_bytes, count);
}

__global__ void lsa_all_reduce_two_shot_f32(ncclDevComm comm, ncclWindow_t win,
                                            size_t offset_bytes, size_t count) {
  all_reduce_two_shot<float>(comm, win, offset_bytes, count);
}
__global__ void lsa_all_reduce_two_shot_bf16(ncclDevComm comm, ncclWindow_t win,
                                             size_t offset_bytes, size_t count) {
  all_reduce_two_shot<__nv_bfloat16>(comm, win, offset_bytes, count);
}
__global__ void lsa_all_reduce_two_shot_i32(ncclDevComm comm, ncclWindow_t win,
                                            size_t offset_bytes, size_t count) {
  all_reduce_two_shot<int32_t>(comm, win, offset_bytes, count);
}

// All-gather (push): each rank stores its `count` input bytes into block lsaRank of
// every peer's output. `count` is in bytes: the data type does not matter.
__global__ void lsa_all_gather_bytes(ncclDevComm comm, ncclWindow_t win, size_t offset_bytes,
                                     size_t count) {
  __shared__ char* dst[LSA_MAX_PEERS];
  const int n = comm.lsaSize;
  peer_bases(win, output_offset(offset_bytes, count) + size_t(comm.lsaRank) * count, n, dst);
  const char* src = static_cast<const char*>(ncclGetLocalPointer(win, offset_bytes));
  LsaBarrier bar(ncclCoopCta(), comm, ncclTeamTagLsa(), blockIdx.x);
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  copy_bytes(src, dst, n, count);
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// Peer read (pull): copies the next LSA peer's `count` input bytes into the local output.
__global__ void lsa_peer_read_bytes(ncclDevComm comm, ncclWindow_t win, size_t offset_bytes,
                                    size_t count) {
  const int peer = (comm.lsaRank + 1) % comm.lsaSize;
  const char* src = static_cast<const char*>(ncclGetLsaPointer(win, offset_bytes, peer));
  char* dst = static_cast<char*>(ncclGetLocalPointer(win, output_offset(offset_bytes, count)));
  LsaBarrier bar(ncclCoopCta(), comm, ncclTeamTagLsa(), blockIdx.x);
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  copy_bytes(src, &dst, 1, count);
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

}  // extern "C"
