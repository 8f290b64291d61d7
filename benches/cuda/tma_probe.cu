// A probe of TMA on the H200 (2026-12-01), outside cudajit: the CUDA programming guide's
// TMA load, the same load in raw PTX (with and without cluster launch), the TMA store, and
// cudajit's own dumped PTX of the store kernel (store.ptx, from CUDAJIT_DUMP) loaded by the
// driver, each with a tensor map encoded in C. Results: docs/logs/h200-2026-12-01-tma-probe.txt.
//   nvcc -std=c++17 -arch=sm_90a -o tma_probe tma_probe.cu -lcuda
//   ./tma_probe raw|guide|raw-initfence|raw-cluster|store|ptx-store W H X0 Y0
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda/barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorName(r, &s); printf("%s failed: %s (line %d)\n", #x, s, __LINE__); exit(1);} } while (0)
using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

// The CUDA programming guide's TMA example, as written there.
__global__ void guide(const __grid_constant__ CUtensorMap map, int x0, int y0, float* out) {
  __shared__ alignas(128) float tile[8][32];
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cde::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  barrier::arrival_token token;
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_global_to_shared(&tile, &map, x0, y0, bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
  } else {
    token = bar.arrive();
  }
  bar.wait(std::move(token));
  out[threadIdx.x] = (&tile[0][0])[threadIdx.x];
}

__global__ void raw(const __grid_constant__ CUtensorMap map, int x0, int y0, float* out, int init_fence) {
  __shared__ alignas(128) float tile[256];
  __shared__ alignas(8) unsigned long long bar_s;
  unsigned bar = (unsigned)__cvta_generic_to_shared(&bar_s);
  unsigned t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
    if (init_fence) asm volatile("fence.mbarrier_init.release.cluster;"); else asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(1024u));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      :: "r"((unsigned)__cvta_generic_to_shared(tile)), "l"((unsigned long long)&map), "r"(x0), "r"(y0), "r"(bar) : "memory");
  }
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(bar), "r"(0u));
  }
  out[t] = tile[t];
}

__global__ void store(const __grid_constant__ CUtensorMap map, int x0, int y0, int which) {
  __shared__ alignas(128) float tile[256];
  tile[threadIdx.x] = 1000.0f + threadIdx.x;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned src = (unsigned)__cvta_generic_to_shared(tile);
    if (which == 0) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
        :: "l"((unsigned long long)&map), "r"(x0), "r"(y0), "r"(src) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
        :: "l"((unsigned long long)&map), "r"(x0), "r"(y0), "r"(src) : "memory");
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

int main(int argc, char** argv) {
  const char* mode = argv[1];
  unsigned w = atoi(argv[2]), h = atoi(argv[3]); int x0 = atoi(argv[4]), y0 = atoi(argv[5]);
  CK(cuInit(0));
  CUdevice dev; CK(cuDeviceGet(&dev, 0));
  int v; cuDriverGetVersion(&v); int major, minor;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cudaFree(0);
  std::vector<float> data(w * h);
  for (unsigned i = 0; i < w * h; i++) data[i] = i * 0.5f - 7.0f;
  float *tensor, *out;
  cudaMalloc(&tensor, data.size() * 4); cudaMemcpy(tensor, data.data(), data.size() * 4, cudaMemcpyHostToDevice);
  cudaMalloc(&out, 256 * 4); cudaMemset(out, 0, 1024);
  alignas(64) CUtensorMap map;
  memset(&map, 0, sizeof map);
  cuuint64_t dims[2] = {w, h}; cuuint64_t strides[1] = {w * 4};
  cuuint32_t box[2] = {32, 8}; cuuint32_t es[2] = {1, 1};
  CK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void*)tensor, dims, strides, box, es,
     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  printf("driver %d cc %d.%d map[0..4] %016llx %016llx %016llx %016llx\n", v, major, minor, map.opaque[0], map.opaque[1], map.opaque[2], map.opaque[3]);
  if (!strcmp(mode, "ptx-store")) {
    CUmodule mod; CUfunction fn;
    CK(cuModuleLoad(&mod, "store.ptx"));
    CK(cuModuleGetFunction(&fn, mod, "tma_store_box"));
    void* args[] = {&map, &x0, &y0};
    CK(cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, 0, args, 0));
    CUresult r = cuCtxSynchronize(); const char* es; cuGetErrorName(r, &es);
    printf("ptx-store %ux%u at (%d,%d): %s\n", w, h, x0, y0, es);
    if (r) return 1;
    std::vector<float> t(w*h); cudaMemcpy(t.data(), tensor, w*h*4, cudaMemcpyDeviceToHost); printf("  t[0]=%f t[65]=%f\n", t[0], t[w+1]);
    return 0;
  }
  if (!strcmp(mode, "store")) { store<<<1, 256>>>(map, x0, y0, 0); cudaError_t e = cudaDeviceSynchronize(); printf("store %ux%u at (%d,%d): %s\n", w, h, x0, y0, cudaGetErrorName(e)); std::vector<float> t(w*h); cudaMemcpy(t.data(), tensor, w*h*4, cudaMemcpyDeviceToHost); printf("  t[0]=%f t[33]=%f\n", t[0], t[w*1+1]); return 0; }
  if (!strcmp(mode, "guide")) guide<<<1, 256>>>(map, x0, y0, out);
  else if (!strcmp(mode, "raw")) raw<<<1, 256>>>(map, x0, y0, out, 0);
  else if (!strcmp(mode, "raw-initfence")) raw<<<1, 256>>>(map, x0, y0, out, 1);
  else if (!strcmp(mode, "raw-cluster")) {
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = 1; cfg.blockDim = 256;
    cudaLaunchAttribute a[1]; a[0].id = cudaLaunchAttributeClusterDimension; a[0].val.clusterDim.x = 1; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.attrs = a; cfg.numAttrs = 1;
    cudaError_t e = cudaLaunchKernelEx(&cfg, raw, map, x0, y0, out, 1);
    printf("launch: %s\n", cudaGetErrorName(e));
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s %ux%u at (%d,%d): %s\n", mode, w, h, x0, y0, cudaGetErrorName(e));
  if (e) return 1;
  std::vector<float> got(256); cudaMemcpy(got.data(), out, 1024, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (unsigned r = 0; r < 8; r++) for (unsigned c = 0; c < 32; c++) {
    unsigned x = x0 + c, y = y0 + r; float ex = (x < w && y < h) ? data[y * w + x] : 0.f;
    if (got[r * 32 + c] != ex) bad++;
  }
  printf("  %d mismatches of 256\n", bad);
  return 0;
}
