#!/usr/bin/env bash
# Runs every GPU test, example and benchmark on the GPU machine, from .gpu/ (see
# scripts/gpu-stage.sh). Output is printed and copied to $OUT/gpu-log.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")"
log="${OUT:-/tmp}/gpu-log.txt"
exec > >(tee "$log") 2>&1
export CUDAJIT_CACHE_DIR=/tmp/cudajit-cache-$$
rm -rf "$CUDAJIT_CACHE_DIR"
step() { echo; echo "=== $* ==="; }
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
ls -l /usr/local/cuda/nvvm/lib64/ /usr/local/cuda/lib64/libnvJitLink* 2>&1 | head -8
step "quickstart, first process (empty cache: compiles)"
./bin/quickstart
step "quickstart, second process (disk cache)"
./bin/quickstart
step "GPU tests"
./bin/test-gpu --test-threads=1
step "pipeline tests against the machine's CUDA toolkit"
CUDAJIT_REQUIRE_TOOLCHAIN=1 ./bin/test-pipeline --nocapture
step "benchmark"
rm -rf "$CUDAJIT_CACHE_DIR"
./bin/saxpy_bench
step "benchmark again (warm disk cache)"
./bin/saxpy_bench
echo; echo "=== done ==="
