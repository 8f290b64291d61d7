#!/usr/bin/env bash
# Runs on the GPU machine from the folder scripts/suite-stage.sh filled (see
# docs/gpu-results.md, "typed tensor-core operations"): the tests that need a GPU, then the
# Hopper GEMM (bf16 TN/NN, persistent, FP8) at 8192³ against cuBLAS / cuBLASLt and the nvcc
# twin, and the FA3-style attention at d128/d64 against PyTorch SDPA (flash, cuDNN).
set -uo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
out="${OUT:-/tmp/s6-out}"; mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDAJIT_CACHE_DIR=/tmp/cudajit-s6-cache-$$ CUDAJIT_REQUIRE_TOOLCHAIN=1
export CUDAJIT_GEMM_SOURCE="$root/benches/cuda/gemm_mma.cu"
for f in bin/*.xz; do [ -e "$f" ] && (xz -d "$f" 2>/dev/null || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"); done
chmod +x bin/* 2>/dev/null
step() { echo; echo "=== $* ==="; date -u +%T; }
status=0
step machine; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
echo "commit $(cat commit)"
for t in tensor_ops pipeline_hazards hopper_sim named_barriers attention_wgmma gemm; do
  step "test-$t"; timeout 150 ./bin/test-$t --test-threads=1 2>&1 | grep -E "^test |test result|panicked|skipped" || status=1
done
nvcc -O3 -arch=sm_90a -cubin -o /tmp/gemm_wgmma.cubin "$root/benches/cuda/gemm_wgmma.cu" || status=1
step "bf16 wgmma TN 8192 vs cuBLAS and the nvcc twin"
timeout 120 ./bin/gemm --kernel wgmma --sizes 8192 --cuda-cubin /tmp/gemm_wgmma.cubin --markdown "$out/wgmma-tn.md" || status=1
step "bf16 wgmma TN persistent 8192"
timeout 90 ./bin/gemm --kernel wgmma --persistent --sizes 8192 --markdown "$out/wgmma-persistent.md" || status=1
step "bf16 wgmma NN 8192"
timeout 90 ./bin/gemm --kernel wgmma --layout nn --sizes 8192 --markdown "$out/wgmma-nn.md" || status=1
step "FP8 wgmma 8192 vs cuBLASLt"
timeout 90 ./bin/gemm --kernel fp8 --sizes 8192 --markdown "$out/fp8.md" || status=1
step "attention (FA3-style wgmma and FA2) bf16 d128, d64"
timeout 200 ./bin/attention --skip-checks --only bf16:128,bf16:64 --csv "$out/cudajit-attention.csv" || status=1
step "SDPA flash and cuDNN, bf16 d128, d64"
timeout 150 python3 "$root/examples/attention/sdpa_bench.py" --dtypes bf16 --dims 128,64 --csv "$out/sdpa.csv" || status=1
step "done (status $status)"
exit $status
