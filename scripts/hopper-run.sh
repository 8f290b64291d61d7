#!/usr/bin/env bash
# Runs on the GPU machine from .gpu-hop/ (see scripts/hopper-stage.sh): the GPU tests of
# TMA, ptx! register arrays and the GEMMs, the Hopper GEMM's cold and warm start, then the
# benchmarks: the bf16 TMA + wgmma GEMM (TN at every size, NN) against cuBLAS and its nvcc
# twin, and the FP8 one against cuBLASLt. Logs and tables land in $OUT.
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-/tmp/hopper-out}"
mkdir -p "$out"
exec > >(tee "$out/hopper-log.txt") 2>&1
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDAJIT_CACHE_DIR=/tmp/cudajit-hopper-cache-$$ CUDAJIT_REQUIRE_TOOLCHAIN=1
export CUDAJIT_GEMM_SOURCE="$PWD/gemm_mma.cu"
step() { echo; echo "=== $* ==="; }
status=0
step "machine"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
for t in hopper ptx_register_arrays gemm; do
  step "test-$t"
  ./bin/test-$t --test-threads=1 || status=1
done
step "startup: the Hopper GEMM's first launch in fresh processes"
./bin/gemm --startup 5 || status=1
nvcc -O3 -arch=sm_90a -cubin -o gemm_wgmma.cubin gemm_wgmma.cu || status=1
step "bf16 TMA + wgmma GEMM, TN, every size, against cuBLAS and the nvcc twin"
./bin/gemm --kernel wgmma --cuda-cubin gemm_wgmma.cubin --markdown "$out/wgmma-tn.md" || status=1
step "bf16 TMA + wgmma GEMM, TN, in 2-block clusters sharing B by multicast"
./bin/gemm --kernel wgmma --cluster --sizes "${CLUSTER_SIZES:-4096,8192,16384,4096x14336x4096,4096x8192x8192,16384x8192x8192,512x8192x8192}" \
  --markdown "$out/wgmma-cluster.md" || status=1
step "bf16 TMA + wgmma GEMM, NN"
./bin/gemm --kernel wgmma --layout nn --cuda-cubin gemm_wgmma.cubin \
  --sizes "${NN_SIZES:-4096,8192,4096x14336x4096,16384x8192x8192}" --markdown "$out/wgmma-nn.md" || status=1
step "FP8 (e4m3) wgmma GEMM against cuBLASLt, every size"
./bin/gemm --kernel fp8 --markdown "$out/fp8.md" || status=1
echo; echo "=== done (status $status) ==="
exit $status
