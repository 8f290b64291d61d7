// The eight kernels of examples/kernel_bench/, written in plain CUDA C++ as the same
// algorithms with the same launch configurations, for the cudajit/nvcc comparison.
//
//   nvcc -O3 -arch=sm_90 -cubin -o kernels.cubin kernels.cu
//
// Conventions, so the work is identical on both sides:
// - every kernel has the name of its cudajit twin and is `extern "C"` (unmangled);
// - inputs are `const T* __restrict__`, as cudajit's `&[T]` (noalias readonly); outputs
//   `T* __restrict__`, as `&mut [T]` (noalias);
// - the lengths a cudajit kernel reads from its slices (`x.len()`) are passed explicitly as
//   64-bit values, and index arithmetic uses the same widths as the Rust code (`usize` is
//   `u64`, `u32` is `unsigned`);
// - a `vload4`/`vstore4` in Rust is a `float4`/`uint4` access here; a register array is a
//   local array with `#pragma unroll` loops.
// No library (cuBLAS, CUB): the point is to compare compilers on the same source-level
// algorithm. Nothing is #included: nvcc's implicit cuda_runtime.h provides float4/uint4.

typedef unsigned long long u64;

#define FULL_WARP 0xffffffffu

// ---- vector add, SAXPY: one 16-byte vector per thread, scalar tail ----------------------

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, u64 n) {
    u64 q = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n / 4) {
        float4 x = reinterpret_cast<const float4*>(a)[q];
        float4 y = reinterpret_cast<const float4*>(b)[q];
        reinterpret_cast<float4*>(c)[q] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    } else if (q == n / 4) {
        for (u64 i = 4 * q; i < n; ++i) c[i] = a[i] + b[i];
    }
}

extern "C" __global__ void saxpy(float alpha, const float* __restrict__ x, float* __restrict__ y,
                                 u64 n) {
    u64 q = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n / 4) {
        float4 xv = reinterpret_cast<const float4*>(x)[q];
        float4 yv = reinterpret_cast<float4*>(y)[q];
        reinterpret_cast<float4*>(y)[q] = make_float4(alpha * xv.x + yv.x, alpha * xv.y + yv.y,
                                                      alpha * xv.z + yv.z, alpha * xv.w + yv.w);
    } else if (q == n / 4) {
        for (u64 i = 4 * q; i < n; ++i) y[i] = alpha * x[i] + y[i];
    }
}

// ---- warp helpers ---------------------------------------------------------------------

__device__ __forceinline__ float warp_sum_f32(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL_WARP, v, offset);
    return v;
}

__device__ __forceinline__ float warp_max_f32(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v = fmaxf(v, __shfl_xor_sync(FULL_WARP, v, offset));
    return v;
}

__device__ __forceinline__ unsigned warp_sum_u32(unsigned v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL_WARP, v, offset);
    return v;
}

// ---- block reduction: grid-stride float4 loop (2 loads per iteration), warp shuffles,
// per-warp sums in shared memory ---------------------------------------------------------
// Launched twice: over the input (one partial sum per block), then one block over those.

extern "C" __global__ void reduce_sum(const float* __restrict__ x, u64 n,
                                      float* __restrict__ partial) {
    __shared__ float warp_sums[32];
    u64 quads = n / 4;
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float sum = 0.0f;
    u64 q = g;
    // Two 16-byte loads in flight per thread before either is used.
    for (; q + stride < quads; q += 2 * stride) {
        float4 v = x4[q];
        float4 w = x4[q + stride];
        sum += ((v.x + v.y) + (v.z + v.w)) + ((w.x + w.y) + (w.z + w.w));
    }
    if (q < quads) {
        float4 v = x4[q];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    u64 tail = 4 * quads + g;
    if (tail < n) sum += x[tail];
    sum = warp_sum_f32(sum);
    unsigned lane = threadIdx.x % 32;
    unsigned warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        unsigned warps = blockDim.x / 32;
        float v = lane < warps ? warp_sums[lane] : 0.0f;
        float total = warp_sum_f32(v);
        if (lane == 0) partial[blockIdx.x] = total;
    }
}

// ---- scan (reduce-then-scan) ----------------------------------------------------------
// Phase 1: sums[b] = wrapping sum of tile b.

extern "C" __global__ void scan_tile_sums(u64 tile, const unsigned* __restrict__ x, u64 n,
                                          unsigned* __restrict__ sums) {
    __shared__ unsigned warp_sums[32];
    u64 start = (u64)blockIdx.x * tile;
    u64 end = start + tile < n ? start + tile : n;
    u64 t = threadIdx.x;
    u64 per_round = 4 * (u64)blockDim.x;
    unsigned s = 0;
    for (u64 base = start + 4 * t; base < end; base += per_round) {
        if (base + 4 <= end) {
            uint4 v = reinterpret_cast<const uint4*>(x)[base / 4];
            s += (v.x + v.y) + (v.z + v.w);
        } else {
            for (u64 i = base; i < end; ++i) s += x[i];
        }
    }
    s = warp_sum_u32(s);
    unsigned lane = threadIdx.x % 32;
    unsigned warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        unsigned warps = blockDim.x / 32;
        unsigned v = lane < warps ? warp_sums[lane] : 0u;
        unsigned total = warp_sum_u32(v);
        if (lane == 0) sums[blockIdx.x] = total;
    }
}

__device__ __forceinline__ unsigned element_or_zero(const unsigned* __restrict__ x, u64 i,
                                                    u64 end) {
    return i < end ? x[i] : 0u;
}

// Phases 2 and 3: inclusive scan of tile b of x into y, plus prefix[b - 1] when prefix_len
// is not zero. Rounds of 4 * blockDim elements: 4 per thread in registers, a shfl_up warp
// scan, warp totals in shared memory (two alternating buffers: one barrier per round); the
// next round's uint4 is loaded before this round's barrier.

extern "C" __global__ void scan_tiles(u64 tile, const unsigned* __restrict__ x, u64 n,
                                      const unsigned* __restrict__ prefix, u64 prefix_len,
                                      unsigned* __restrict__ y) {
    __shared__ unsigned warp_totals[64];
    u64 b = blockIdx.x;
    u64 start = b * tile;
    u64 end = start + tile < n ? start + tile : n;
    u64 t = threadIdx.x;
    unsigned lane = threadIdx.x % 32;
    unsigned warp = threadIdx.x / 32;
    unsigned warps = blockDim.x / 32;
    u64 per_round = 4 * (u64)blockDim.x;
    unsigned carry = 0;
    if (b > 0 && prefix_len > 0) carry = prefix[b - 1];
    unsigned buffer = 0;
    u64 base = start + 4 * t;
    unsigned n0 = 0, n1 = 0, n2 = 0, n3 = 0;
    if (base + 4 <= end) {
        uint4 v = reinterpret_cast<const uint4*>(x)[base / 4];
        n0 = v.x;
        n1 = v.y;
        n2 = v.z;
        n3 = v.w;
    } else {
        n0 = element_or_zero(x, base, end);
        n1 = element_or_zero(x, base + 1, end);
        n2 = element_or_zero(x, base + 2, end);
    }
    for (u64 round = start; round < end; round += per_round) {
        unsigned v0 = n0, v1 = n1, v2 = n2, v3 = n3;
        u64 next = base + per_round;
        if (next + 4 <= end) {
            uint4 v = reinterpret_cast<const uint4*>(x)[next / 4];
            n0 = v.x;
            n1 = v.y;
            n2 = v.z;
            n3 = v.w;
        } else if (next < end) {
            n0 = element_or_zero(x, next, end);
            n1 = element_or_zero(x, next + 1, end);
            n2 = element_or_zero(x, next + 2, end);
            n3 = 0;
        }
        unsigned p1 = v0 + v1;
        unsigned p2 = p1 + v2;
        unsigned p3 = p2 + v3;
        unsigned inclusive = p3;
        for (unsigned delta = 1; delta < 32; delta *= 2) {
            unsigned up = __shfl_up_sync(FULL_WARP, inclusive, delta);
            if (lane >= delta) inclusive += up;
        }
        if (lane == 31) warp_totals[buffer * 32 + warp] = inclusive;
        __syncthreads();
        unsigned before = 0, total = 0;
        for (unsigned w = 0; w < warps; ++w) {
            unsigned v = warp_totals[buffer * 32 + w];
            if (w < warp) before += v;
            total += v;
        }
        unsigned exclusive = carry + before + (inclusive - p3);
        if (base + 4 <= end) {
            reinterpret_cast<uint4*>(y)[base / 4] =
                make_uint4(exclusive + v0, exclusive + p1, exclusive + p2, exclusive + p3);
        } else if (base < end) {
            y[base] = exclusive + v0;
            if (base + 1 < end) y[base + 1] = exclusive + p1;
            if (base + 2 < end) y[base + 2] = exclusive + p2;
        }
        carry += total;
        buffer ^= 1;
        base = next;
    }
}

// ---- histogram: 256 bins x 32 lane copies per block in shared memory, merged with global
// atomics -------------------------------------------------------------------------------

// 32 copies of the bins, bin b of copy k at 32 b + k: lane k counts into copy k (bank k).

__device__ __forceinline__ void count_bytes(unsigned* local, unsigned w, unsigned lane) {
    for (unsigned s = 0; s < 4; ++s) atomicAdd(&local[((w >> (8 * s)) & 255) * 32 + lane], 1u);
}

extern "C" __global__ void histogram256(const unsigned* __restrict__ words, u64 n,
                                        unsigned* __restrict__ bins) {
    __shared__ unsigned local[256 * 32];
    unsigned lane = threadIdx.x % 32;
    for (u64 i = threadIdx.x; i < 256 * 32; i += blockDim.x) local[i] = 0;
    __syncthreads();
    u64 quads = n / 4;
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 q = g; q < quads; q += stride) {
        uint4 w = reinterpret_cast<const uint4*>(words)[q];
        count_bytes(local, w.x, lane);
        count_bytes(local, w.y, lane);
        count_bytes(local, w.z, lane);
        count_bytes(local, w.w, lane);
    }
    u64 tail = 4 * quads + g;
    if (tail < n) count_bytes(local, words[tail], lane);
    __syncthreads();
    for (u64 bin = threadIdx.x; bin < 256; bin += blockDim.x) {
        unsigned count = 0;
        for (unsigned k = 0; k < 32; ++k) count += local[bin * 32 + (k + lane) % 32];
        if (count > 0) atomicAdd(&bins[bin], count);
    }
}

// ---- transpose through a padded TILE x (TILE + 1) shared tile, TILE x ROWS threads -----
// `transpose_tiled` is 32 x 8; `transpose_tiled_<TILE>x<ROWS>` the other shapes the
// benchmark can measure (`--transpose-tile`), each the twin of the Rust kernel's
// `launch::<TILE, ROWS>`.

template <unsigned TILE, unsigned ROWS>
__device__ void transpose_tile(unsigned rows, unsigned cols, const float* __restrict__ input,
                               float* __restrict__ output) {
    __shared__ float tile[TILE * (TILE + 1)];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned c = blockIdx.x * TILE + tx;
    unsigned r0 = blockIdx.y * TILE + ty;
    for (unsigned j = 0; j < TILE; j += ROWS) {
        unsigned r = r0 + j;
        if (r < rows && c < cols) tile[(ty + j) * (TILE + 1) + tx] = input[r * cols + c];
    }
    __syncthreads();
    unsigned oc = blockIdx.y * TILE + tx;
    unsigned or0 = blockIdx.x * TILE + ty;
    for (unsigned j = 0; j < TILE; j += ROWS) {
        unsigned orow = or0 + j;
        if (orow < cols && oc < rows) output[orow * rows + oc] = tile[tx * (TILE + 1) + ty + j];
    }
}

#define TRANSPOSE(NAME, TILE, ROWS)                                                      \
    extern "C" __global__ void NAME(unsigned rows, unsigned cols,                        \
                                    const float* __restrict__ input,                    \
                                    float* __restrict__ output) {                       \
        transpose_tile<TILE, ROWS>(rows, cols, input, output);                          \
    }
TRANSPOSE(transpose_tiled, 32, 8)
TRANSPOSE(transpose_tiled_32x4, 32, 4)
TRANSPOSE(transpose_tiled_32x16, 32, 16)
TRANSPOSE(transpose_tiled_64x8, 64, 8)
TRANSPOSE(transpose_tiled_64x16, 64, 16)

// ---- SGEMM: 128 x 128 block tiles, k-steps of 8, 8 x 8 outputs per thread -------------
// c (m x n) = a (m x k) * b (k x n), row-major; m, n multiples of 128, k of 8;
// grid (n / 128, m / 128), 256 threads. See the Rust twin for the layout.

extern "C" __global__ void sgemm(unsigned n, unsigned k, const float* __restrict__ a,
                                 const float* __restrict__ b, float* __restrict__ c) {
    __shared__ __align__(16) float a_tile[8 * 132];
    __shared__ __align__(16) float b_tile[8 * 128];
    unsigned t = threadIdx.x;
    unsigned tx = t % 16;
    unsigned ty = t / 16;
    u64 row0 = (u64)blockIdx.y * 128;
    u64 col0 = (u64)blockIdx.x * 128;
    u64 kk = k;
    u64 nn = n;

    u64 a_row = t / 2;
    u64 a_k = 4 * (t % 2);
    u64 b_k = t / 32;
    u64 b_col = 4 * (t % 32);

    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
    float af[8], bf[8];
    for (u64 k0 = 0; k0 < kk; k0 += 8) {
        float4 av = reinterpret_cast<const float4*>(a)[((row0 + a_row) * kk + k0 + a_k) / 4];
        a_tile[a_k * 132 + a_row] = av.x;
        a_tile[(a_k + 1) * 132 + a_row] = av.y;
        a_tile[(a_k + 2) * 132 + a_row] = av.z;
        a_tile[(a_k + 3) * 132 + a_row] = av.w;
        float4 bv = reinterpret_cast<const float4*>(b)[((k0 + b_k) * nn + col0 + b_col) / 4];
        reinterpret_cast<float4*>(b_tile)[(b_k * 128 + b_col) / 4] = bv;
        __syncthreads();
#pragma unroll
        for (u64 kq = 0; kq < 8; ++kq) {
            float4 x0 = reinterpret_cast<const float4*>(a_tile)[(kq * 132 + 4 * ty) / 4];
            float4 x1 = reinterpret_cast<const float4*>(a_tile)[(kq * 132 + 64 + 4 * ty) / 4];
            float4 y0 = reinterpret_cast<const float4*>(b_tile)[(kq * 128 + 4 * tx) / 4];
            float4 y1 = reinterpret_cast<const float4*>(b_tile)[(kq * 128 + 64 + 4 * tx) / 4];
            af[0] = x0.x; af[1] = x0.y; af[2] = x0.z; af[3] = x0.w;
            af[4] = x1.x; af[5] = x1.y; af[6] = x1.z; af[7] = x1.w;
            bf[0] = y0.x; bf[1] = y0.y; bf[2] = y0.z; bf[3] = y0.w;
            bf[4] = y1.x; bf[5] = y1.y; bf[6] = y1.z; bf[7] = y1.w;
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i * 8 + j] += af[i] * bf[j];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (u64 i = 0; i < 8; ++i) {
        u64 r = i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4;
        u64 base = (row0 + r) * nn + col0;
        reinterpret_cast<float4*>(c)[(base + 4 * tx) / 4] =
            make_float4(acc[i * 8], acc[i * 8 + 1], acc[i * 8 + 2], acc[i * 8 + 3]);
        reinterpret_cast<float4*>(c)[(base + 64 + 4 * tx) / 4] =
            make_float4(acc[i * 8 + 4], acc[i * 8 + 5], acc[i * 8 + 6], acc[i * 8 + 7]);
    }
}

// ---- softmax: one warp per row of 32 * PER_LANE floats, the row in registers ---------
// Lane l holds float4 vectors l, l + 32, .. of its row; max and sum are warp butterflies.
// Two instantiations: softmax_rows_32 (1024 columns, measured) and softmax_rows_4 (128,
// checked), the names cudajit gives its specialisations.

template <int PER_LANE>
__device__ __forceinline__ void softmax_rows_impl(unsigned rows, const float* __restrict__ x,
                                                  float* __restrict__ y) {
    unsigned warps = blockDim.x / 32;
    u64 row = blockIdx.x * warps + threadIdx.x / 32;
    if (row < rows) {
        u64 lane = threadIdx.x % 32;
        u64 first = row * 8 * PER_LANE + lane;
        float v[PER_LANE];
#pragma unroll
        for (int j = 0; j < PER_LANE / 4; ++j) {
            float4 q = reinterpret_cast<const float4*>(x)[first + 32 * j];
            v[4 * j] = q.x;
            v[4 * j + 1] = q.y;
            v[4 * j + 2] = q.z;
            v[4 * j + 3] = q.w;
        }
        float m = v[0];
#pragma unroll
        for (int i = 1; i < PER_LANE; ++i) m = fmaxf(m, v[i]);
        m = warp_max_f32(m);
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
            v[i] = expf(v[i] - m);
            s += v[i];
        }
        float inv = 1.0f / warp_sum_f32(s);
#pragma unroll
        for (int j = 0; j < PER_LANE / 4; ++j)
            reinterpret_cast<float4*>(y)[first + 32 * j] =
                make_float4(v[4 * j] * inv, v[4 * j + 1] * inv, v[4 * j + 2] * inv, v[4 * j + 3] * inv);
    }
}

extern "C" __global__ void softmax_rows_32(unsigned rows, const float* __restrict__ x,
                                           float* __restrict__ y) {
    softmax_rows_impl<32>(rows, x, y);
}

extern "C" __global__ void softmax_rows_4(unsigned rows, const float* __restrict__ x,
                                          float* __restrict__ y) {
    softmax_rows_impl<4>(rows, x, y);
}
