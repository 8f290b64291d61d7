#!/usr/bin/env bash
# Runs a module's programs on a machine with 2+ GPUs (NVLink), from the folder
# scripts/multi-gpu-stage.sh NAME fills: the GPU tests (tests/NAME_gpu.rs), the example on every
# GPU, then the benchmark (ITERS, default 30; WARMUP, default 5). Output is printed and
# copied to $OUT/NAME-log.txt; the benchmark's table to $OUT/NAME_bench.csv.
# Usage: multi-gpu-run.sh NAME [what the example runs]   (moe-run.sh and m2n-run.sh call it)
set -uo pipefail
name="${1:?usage: multi-gpu-run.sh NAME [what the example runs]}"
example="${2:-}"
export NCCL_NVLS_ENABLE=0
# The system NCCL 2.28.3 with its headers (not PyTorch's wheel 2.28.9 found through PATH).
export CUDAJIT_NCCL_LIBRARY=${CUDAJIT_NCCL_LIBRARY:-/usr/lib/x86_64-linux-gnu/libnccl.so.2}
cd "$(dirname "$0")"
out="${OUT:-/tmp}"
log="$out/$name-log.txt"
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ==="; }
status=0
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
ls -l "$CUDAJIT_NCCL_LIBRARY" 2>&1
export CUDAJIT_CACHE_DIR=$(mktemp -d)
step "GPU tests (tests/${name}_gpu.rs)"
time "./bin/${name}_gpu" --test-threads=1 --nocapture || status=1
step "example${example:+ ($example)}"
time "./bin/$name" || status=1
step "benchmark"
OUT="$out" "./bin/${name}_bench" || status=1
echo; echo "=== done (status $status) ==="
exit $status
