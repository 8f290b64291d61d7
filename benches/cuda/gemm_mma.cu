// The GEMM of examples/gemm/ (kernels.rs, tiles.rs) in CUDA C++: the same algorithm,
// instruction for instruction, for the cudajit/nvcc comparison of the GEMM benchmark.
//
//   nvcc -O3 -arch=sm_90 -cubin -o gemm_mma.cubin gemm_mma.cu
//   cargo run --release --example gemm -- --cuda-cubin gemm_mma.cubin
//
// C (M×N, row-major) = A (M×K, bf16, row-major) · B, f32 accumulate: block tile 128×128,
// k-tile 64, 4 warps of 64×64 (4×8 mma.sync m16n8k16 per 16-wide k step), a 3-stage
// cp.async pipeline in 96 KiB of dynamic shared memory, 16-byte chunks of 128-byte rows
// XOR-swizzled by row % 8, blocks in bands of 8 block rows. The tensor-core instructions
// are inline PTX with exactly the text `cudajit::tensor` emits (mma.sync, ldmatrix,
// cp.async, cvt.rn.bf16x2), and the index arithmetic has the Rust code's widths (`usize`
// is 64-bit, `u32` is `unsigned`), so the two sides differ only in their compilers.
//
// Kernels, named as the benchmark's contenders and taking the cudajit kernels' parameters
// (`m, n, k, a, b, c`; bf16 as its 16 bits):
//   gemm_bf16_tn          B column by column (b[n * K + k]), C f32
//   gemm_bf16_nn          B row by row (b[k * N + n]), C f32
//   gemm_bf16_tn_to_bf16  as gemm_bf16_tn, C rounded to bf16
//   gemm_bf16_nn_to_bf16  as gemm_bf16_nn, C rounded to bf16
// Launch: grid (N / 128, M / 128), 128 threads, 98304 bytes of dynamic shared memory
// (which needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). M, N multiples of 128, K
// of 64. Nothing is #included (nvcc's implicit cuda_runtime.h has __cvta_generic_to_shared).

typedef unsigned long long u64;
typedef unsigned long long usize;
typedef unsigned short bf16_bits;

// ---- the instructions, as cudajit::tensor writes them -----------------------------------

__device__ __forceinline__ unsigned shared_address(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ u64 global_address(const void* p) { return (u64)p; }

__device__ __forceinline__ void cp_async_16(unsigned shared, u64 global) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared), "l"(global));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }

__device__ __forceinline__ void cp_async_wait_group_1() { asm volatile("cp.async.wait_group 1;"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned address, unsigned& r0, unsigned& r1,
                                            unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(address));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned address, unsigned& r0, unsigned& r1,
                                                  unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(address));
}

__device__ __forceinline__ void mma_bf16(const unsigned* a, const unsigned* b, float* c) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, "
        "%7}, {%8, %9}, {%10, %11, %12, %13};"
        : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
          "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// `lo` and `hi` rounded to bf16 in one register, `lo` in bits 0–15 (cvt puts its first
// source in the upper half).
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
    unsigned d;
    asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}

// ---- the shared-memory layout (tiles.rs) ------------------------------------------------

#define STAGE_WORDS 8192
#define B_WORDS_OFFSET 4096
#define PANEL_WORDS 2048
#define SHARED_BYTES (3 * STAGE_WORDS * 4)

// The word of 16-byte chunk `chunk` of 128-byte shared row `row`, swizzled.
__device__ __forceinline__ usize swizzled(usize row, usize chunk) {
    return row * 32 + (chunk ^ (row % 8)) * 4;
}

template <bool B_ROW_MAJOR>
__device__ __forceinline__ void load_stage(unsigned* smem, const bf16_bits* __restrict__ a,
                                           const bf16_bits* __restrict__ b, usize stage,
                                           usize tile, usize row0, usize col0, usize kk,
                                           usize nn, usize t) {
    usize base = stage * STAGE_WORDS;
    usize k0 = tile * 64;
#pragma unroll
    for (usize i = 0; i < 8; ++i) {
        usize q = t + 128 * i;
        usize r = q / 8;
        usize ch = q % 8;
        cp_async_16(shared_address(&smem[base + swizzled(r, ch)]),
                    global_address(&a[(row0 + r) * kk + k0 + ch * 8]));
    }
    usize b_base = base + B_WORDS_OFFSET;
    if (B_ROW_MAJOR) {
#pragma unroll
        for (usize i = 0; i < 8; ++i) {
            usize q = t + 128 * i;
            usize r = q / 16;
            usize n_chunk = q % 16;
            usize panel = n_chunk / 8;
            cp_async_16(shared_address(&smem[b_base + panel * PANEL_WORDS + swizzled(r, n_chunk % 8)]),
                        global_address(&b[(k0 + r) * nn + col0 + n_chunk * 8]));
        }
    } else {
#pragma unroll
        for (usize i = 0; i < 8; ++i) {
            usize q = t + 128 * i;
            usize r = q / 8;
            usize ch = q % 8;
            cp_async_16(shared_address(&smem[b_base + swizzled(r, ch)]),
                        global_address(&b[(col0 + r) * kk + k0 + ch * 8]));
        }
    }
}

__device__ __forceinline__ usize a_fragment_word(usize base, usize wm, usize i, usize ks,
                                                 usize lane) {
    usize r = wm * 64 + i * 16 + lane % 16;
    return base + swizzled(r, ks * 2 + lane / 16);
}

template <bool B_ROW_MAJOR>
__device__ __forceinline__ usize b_fragment_word(usize base, usize wn, usize j2, usize ks,
                                                 usize lane) {
    usize mi = lane / 8;
    if (B_ROW_MAJOR) {
        usize r = ks * 16 + (mi % 2) * 8 + lane % 8;
        return base + B_WORDS_OFFSET + wn * PANEL_WORDS + swizzled(r, j2 * 2 + mi / 2);
    } else {
        usize r = wn * 64 + j2 * 16 + (mi / 2) * 8 + lane % 8;
        return base + B_WORDS_OFFSET + swizzled(r, ks * 2 + mi % 2);
    }
}

__device__ __forceinline__ void band_order(usize bx, usize by, usize gx, usize gy, usize& tile_m,
                                           usize& tile_n) {
    usize id = by * gx + bx;
    usize band = id / (8 * gx);
    usize first = band * 8;
    usize rows = gy - first < 8 ? gy - first : 8;
    usize within = id - band * 8 * gx;
    tile_m = first + within % rows;
    tile_n = within / rows;
}

// ---- the kernel (kernels.rs) -------------------------------------------------------------

template <bool B_ROW_MAJOR, bool C_BF16>
__device__ __forceinline__ void gemm(unsigned n, unsigned k, const bf16_bits* __restrict__ a,
                                     const bf16_bits* __restrict__ b, void* __restrict__ c) {
    extern __shared__ __align__(16) unsigned smem[];
    usize t = threadIdx.x;
    usize lane = t % 32;
    usize warp = t / 32;
    usize wm = warp / 2;
    usize wn = warp % 2;
    usize tile_m, tile_n;
    band_order(blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, tile_m, tile_n);
    usize row0 = tile_m * 128;
    usize col0 = tile_n * 128;
    usize kk = k;
    usize nn = n;
    usize tiles = kk / 64;

#pragma unroll
    for (usize s = 0; s < 2; ++s) {
        if (s < tiles) load_stage<B_ROW_MAJOR>(smem, a, b, s, s, row0, col0, kk, nn, t);
        cp_async_commit();
    }
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    unsigned fa[16];
    unsigned fb[16];
    for (usize kt = 0; kt < tiles; ++kt) {
        cp_async_wait_group_1();
        __syncthreads();
        if (kt + 2 < tiles)
            load_stage<B_ROW_MAJOR>(smem, a, b, (kt + 2) % 3, kt + 2, row0, col0, kk, nn, t);
        cp_async_commit();
        usize base = (kt % 3) * STAGE_WORDS;
        for (usize ks = 0; ks < 4; ++ks) {
#pragma unroll
            for (usize i = 0; i < 4; ++i) {
                ldmatrix_x4(shared_address(&smem[a_fragment_word(base, wm, i, ks, lane)]),
                            fa[4 * i], fa[4 * i + 1], fa[4 * i + 2], fa[4 * i + 3]);
            }
#pragma unroll
            for (usize j2 = 0; j2 < 4; ++j2) {
                unsigned address =
                    shared_address(&smem[b_fragment_word<B_ROW_MAJOR>(base, wn, j2, ks, lane)]);
                if (B_ROW_MAJOR)
                    ldmatrix_x4_trans(address, fb[4 * j2], fb[4 * j2 + 1], fb[4 * j2 + 2],
                                      fb[4 * j2 + 3]);
                else
                    ldmatrix_x4(address, fb[4 * j2], fb[4 * j2 + 1], fb[4 * j2 + 2],
                                fb[4 * j2 + 3]);
            }
#pragma unroll
            for (usize i = 0; i < 4; ++i) {
#pragma unroll
                for (usize j = 0; j < 8; ++j) {
                    mma_bf16(&fa[4 * i], &fb[2 * j], &acc[(i * 8 + j) * 4]);
                }
            }
        }
    }
    usize g = lane / 4;
    usize tq = lane % 4;
#pragma unroll
    for (usize i = 0; i < 4; ++i) {
#pragma unroll
        for (usize j = 0; j < 8; ++j) {
            usize at = (i * 8 + j) * 4;
            usize r = row0 + wm * 64 + i * 16 + g;
            usize col = col0 + wn * 64 + j * 8 + 2 * tq;
            if (C_BF16) {
                unsigned* words = reinterpret_cast<unsigned*>(c);
                words[(r * nn + col) / 2] = pack_bf16x2(acc[at], acc[at + 1]);
                words[((r + 8) * nn + col) / 2] = pack_bf16x2(acc[at + 2], acc[at + 3]);
            } else {
                float2* pairs = reinterpret_cast<float2*>(c);
                pairs[(r * nn + col) / 2] = make_float2(acc[at], acc[at + 1]);
                pairs[((r + 8) * nn + col) / 2] = make_float2(acc[at + 2], acc[at + 3]);
            }
        }
    }
}

#define GEMM_ENTRY(name, b_row_major, c_type, c_bf16)                                        \
    extern "C" __global__ void name(unsigned m, unsigned n, unsigned k,                       \
                                    const bf16_bits* __restrict__ a,                          \
                                    const bf16_bits* __restrict__ b, c_type* __restrict__ c) { \
        (void)m;                                                                              \
        gemm<b_row_major, c_bf16>(n, k, a, b, c);                                             \
    }

GEMM_ENTRY(gemm_bf16_tn, false, float, false)
GEMM_ENTRY(gemm_bf16_nn, true, float, false)
GEMM_ENTRY(gemm_bf16_tn_to_bf16, false, bf16_bits, true)
GEMM_ENTRY(gemm_bf16_nn_to_bf16, true, bf16_bits, true)
