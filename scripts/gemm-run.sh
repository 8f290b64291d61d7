#!/usr/bin/env bash
# Runs on the GPU machine, from the folder scripts/gemm-stage.sh filled (.gpu-gemm/):
# builds the CUDA C++ twin with nvcc, runs the GEMM GPU test, then the benchmark (cudajit,
# the nvcc twin and cuBLAS interleaved in one process) for both B layouts and both output
# types, and leaves in $OUT:
#   gemm-tn-f32.md, gemm-nn-f32.md, gemm-tn-bf16.md, gemm-nn-bf16.md   the result tables
#   gemm-log.txt       everything printed, including ptxas -v of the twin
#   gemm_mma.cubin     the nvcc build;  nvcc.sass / cudajit.sass: both sides' SASS
# Optional: SIZES=4096,8192 (default: every size) and RUNS=20.
# Exit status: 1 when a test failed or a result was wrong.
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-/tmp/gemm-out}"
mkdir -p "$out"
exec > >(tee "$out/gemm-log.txt") 2>&1
step() { echo; echo "=== $* ==="; }
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 CUDAJIT_REQUIRE_TOOLCHAIN=1
# A fresh cache: the kernels are compiled by this machine's CUDA toolkit, in this run.
export CUDAJIT_CACHE_DIR="/tmp/cudajit-gemm-cache-$$"
rm -rf "$CUDAJIT_CACHE_DIR"
export CUDAJIT_BOUNDS_CHECKS=0
export CUDAJIT_DUMP="$out/cudajit-dump"
# Where the test finds the twin's source on this machine.
export CUDAJIT_GEMM_SOURCE="$PWD/gemm_mma.cu"
status=0

step "machine"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
nvcc --version | tail -2

step "nvcc -O3 -arch=sm_90 -cubin gemm_mma.cu (ptxas -v: registers, spills)"
if ! nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o gemm_mma.cubin gemm_mma.cu; then
  echo "nvcc failed: the twin is left out"
  status=1
fi
cubin_args=()
if [ -f gemm_mma.cubin ]; then
  cp gemm_mma.cubin "$out/"
  cubin_args=(--cuda-cubin gemm_mma.cubin)
fi

step "test-gemm: both sides against cuBLAS at small sizes, every layout and output"
./bin/test-gemm --test-threads=1 || status=1

size_args=()
[ -n "${SIZES:-}" ] && size_args=(--sizes "$SIZES")
for layout in tn nn; do
  for output in f32 bf16; do
    step "benchmark: --layout $layout --output $output"
    ./bin/gemm --layout "$layout" --output "$output" --runs "${RUNS:-20}" "${size_args[@]}" \
      "${cubin_args[@]}" --markdown "$out/gemm-$layout-$output.md" || status=1
  done
done

step "SASS and resource usage of both sides"
if [ -f gemm_mma.cubin ]; then
  cuobjdump -sass gemm_mma.cubin > "$out/nvcc.sass" 2>&1
  cuobjdump -res-usage gemm_mma.cubin 2>&1 | grep -E "Function|REG"
fi
: > "$out/cudajit.sass"
for f in $(find "$out/cudajit-dump" -name '*gemm*.cubin' 2>/dev/null); do
  cuobjdump -sass "$f" >> "$out/cudajit.sass" 2>&1
  cuobjdump -res-usage "$f" 2>&1 | grep -E "Function|REG"
done
ls -la "$out"
echo; echo "=== done (status $status) ==="
exit $status
