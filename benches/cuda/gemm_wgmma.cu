// The CUDA C++ twin of cudajit's Hopper GEMM (examples/gemm/hopper.rs), instruction for
// instruction: TMA loads into a 4-deep ring of 128-byte-swizzled buffers completing
// mbarriers, one producer warpgroup (setmaxnreg 40) and two consumer warpgroups
// (setmaxnreg 232) issuing wgmma.mma_async.m64n256k16 on 128 f32 accumulators per thread,
// one k-tile of wgmmas in flight, the epilogue's 8-byte stores straight to C.
//
//   nvcc -O3 -arch=sm_90a -cubin -o gemm_wgmma.cubin benches/cuda/gemm_wgmma.cu
//
// C (M x N, row-major, f32) = A (M x K, bf16, row-major) * B, B given N x K ("tn") or
// K x N ("nn"). M % 128 == 0, N % 256 == 0, K % 64 == 0.

#include <cuda.h>
#include <cstdint>

namespace {

constexpr uint32_t STAGES = 4;
constexpr uint32_t A_BYTES = 128 * 64 * 2;
constexpr uint32_t B_BYTES = 256 * 64 * 2;

__device__ __forceinline__ uint64_t k_major_sw128(uint32_t address) {
  return uint64_t((address & 0x3ffff) >> 4) | (1ull << 16) | (uint64_t(1024 >> 4) << 32) |
         (1ull << 62);
}

__device__ __forceinline__ uint64_t mn_major_sw128(uint32_t address, uint32_t chunk_bytes) {
  return uint64_t((address & 0x3ffff) >> 4) | (uint64_t((chunk_bytes >> 4) & 0x3fff) << 16) |
         (uint64_t(1024 >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbarrier_wait_parity(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 "
        "%0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, uint64_t map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// The output tile of block (bx, by) in a gx x gy grid: bands of 8 block rows.
__device__ __forceinline__ void band_order(unsigned bx, unsigned by, unsigned gx, unsigned gy,
                                           unsigned& tile_m, unsigned& tile_n) {
  unsigned id = by * gx + bx;
  unsigned band = id / (8 * gx);
  unsigned first = band * 8;
  unsigned rows = gy - first < 8 ? gy - first : 8;
  unsigned within = id - band * 8 * gx;
  tile_m = first + within % rows;
  tile_n = within / rows;
}

#define WGMMA_REGS_8(i)                                                                  \
  "+f"(acc[i]), "+f"(acc[i + 1]), "+f"(acc[i + 2]), "+f"(acc[i + 3]), "+f"(acc[i + 4]), \
      "+f"(acc[i + 5]), "+f"(acc[i + 6]), "+f"(acc[i + 7])
#define WGMMA_REGS_32(i) \
  WGMMA_REGS_8(i), WGMMA_REGS_8(i + 8), WGMMA_REGS_8(i + 16), WGMMA_REGS_8(i + 24)

#define WGMMA_M64N256K16(TRANS_B)                                                            \
  asm volatile(                                                                              \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                          \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"                              \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "               \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "     \
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "     \
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "     \
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "     \
      "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, " \
      "%124, %125, %126, %127}, %128, %129, p, 1, 1, 0, " #TRANS_B ";\n}"                    \
      : WGMMA_REGS_32(0), WGMMA_REGS_32(32), WGMMA_REGS_32(64), WGMMA_REGS_32(96)            \
      : "l"(a_desc), "l"(b_desc), "r"(1u)                                                    \
      : "memory")

template <bool B_ROW_MAJOR>
__device__ __forceinline__ void gemm_wgmma(const CUtensorMap& a_map, const CUtensorMap& b_map,
                                           unsigned n, unsigned k, float* c) {
  extern __shared__ __align__(16) uint32_t smem[];
  const unsigned t = threadIdx.x;
  const unsigned warpgroup = t / 128;
  const uint32_t raw = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t ring = raw + (1024 - raw % 1024) % 1024;
  const uint32_t b_ring = ring + STAGES * A_BYTES;
  const uint32_t bars = ring + STAGES * (A_BYTES + B_BYTES);
  unsigned tile_m, tile_n;
  band_order(blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, tile_m, tile_n);
  const unsigned row0 = tile_m * 128;
  const unsigned col0 = tile_n * 256;
  const unsigned tiles = k / 64;
  if (t == 0) {
    for (uint32_t s = 0; s < STAGES; s++) {
      mbarrier_init(bars + 8 * s, 1);
      mbarrier_init(bars + 8 * (STAGES + s), 2);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (t == 0) {
      const uint64_t a_address = reinterpret_cast<uint64_t>(&a_map);
      const uint64_t b_address = reinterpret_cast<uint64_t>(&b_map);
      for (unsigned kt = 0; kt < tiles; kt++) {
        const uint32_t s = kt % STAGES;
        const unsigned round = kt / STAGES;
        if (round > 0) mbarrier_wait_parity(bars + 8 * (STAGES + s), (round - 1) & 1);
        const uint32_t full = bars + 8 * s;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full),
                     "r"(A_BYTES + B_BYTES)
                     : "memory");
        const int x = int(kt * 64);
        tma_load_2d(ring + s * A_BYTES, a_address, x, int(row0), full);
        if (B_ROW_MAJOR) {
          for (uint32_t chunk = 0; chunk < 4; chunk++)
            tma_load_2d(b_ring + s * B_BYTES + 8192 * chunk, b_address, int(col0 + 64 * chunk), x,
                        full);
        } else {
          tma_load_2d(b_ring + s * B_BYTES, b_address, x, int(col0), full);
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const unsigned consumer = warpgroup - 1;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = 0.0f;
    for (unsigned kt = 0; kt < tiles; kt++) {
      const uint32_t s = kt % STAGES;
      mbarrier_wait_parity(bars + 8 * s, (kt / STAGES) & 1);
      const uint32_t a_tile = ring + s * A_BYTES + consumer * (A_BYTES / 2);
      const uint32_t b_tile = b_ring + s * B_BYTES;
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
      for (uint32_t ks = 0; ks < 4; ks++) {
        const uint64_t a_desc = k_major_sw128(a_tile + 32 * ks);
        if (B_ROW_MAJOR) {
          const uint64_t b_desc = mn_major_sw128(b_tile + 2048 * ks, 8192);
          WGMMA_M64N256K16(1);
        } else {
          const uint64_t b_desc = k_major_sw128(b_tile + 32 * ks);
          WGMMA_M64N256K16(0);
        }
      }
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
      if (kt > 0 && t % 128 == 0)
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(
                         bars + 8 * (STAGES + (kt - 1) % STAGES))
                     : "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    const unsigned lane = t % 32;
    const unsigned warp = (t % 128) / 32;
    const unsigned g = lane / 4;
    const unsigned q = lane % 4;
    const size_t row = row0 + consumer * 64 + warp * 16 + g;
#pragma unroll
    for (int j = 0; j < 32; j++) {
      const size_t col = col0 + j * 8 + 2 * q;
      *reinterpret_cast<float2*>(&c[row * n + col]) = make_float2(acc[4 * j], acc[4 * j + 1]);
      *reinterpret_cast<float2*>(&c[(row + 8) * n + col]) =
          make_float2(acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(384, 1)
    gemm_wgmma_tn(const __grid_constant__ CUtensorMap a_map,
                  const __grid_constant__ CUtensorMap b_map, unsigned n, unsigned k, float* c) {
  gemm_wgmma<false>(a_map, b_map, n, k, c);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    gemm_wgmma_nn(const __grid_constant__ CUtensorMap a_map,
                  const __grid_constant__ CUtensorMap b_map, unsigned n, unsigned k, float* c) {
  gemm_wgmma<true>(a_map, b_map, n, k, c);
}
