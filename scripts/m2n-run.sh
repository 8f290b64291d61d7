#!/usr/bin/env bash
# Runs the M-to-N programs on a machine with 2+ GPUs (NVLink), from the folder
# scripts/m2n-stage.sh fills: the GPU tests (tests/m2n_gpu.rs), the example on every GPU (the issue's [4096 × 14336] weight,
# both forms, checked), then the benchmark (ITERS, default 30; WARMUP, default 5) against
# NCCL host collectives and cuMemcpyPeerAsync. Output is printed and copied to
# $OUT/m2n-log.txt; the benchmark's table to $OUT/m2n_bench.csv.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
# The system NCCL 2.28.3 with its headers (not PyTorch's wheel 2.28.9 found through PATH).
export CUDAJIT_NCCL_LIBRARY=${CUDAJIT_NCCL_LIBRARY:-/usr/lib/x86_64-linux-gnu/libnccl.so.2}
cd "$(dirname "$0")"
out="${OUT:-/tmp}"
log="$out/m2n-log.txt"
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ==="; }
status=0
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
ls -l "$CUDAJIT_NCCL_LIBRARY" 2>&1
export CUDAJIT_CACHE_DIR=$(mktemp -d)
step "GPU tests (tests/m2n_gpu.rs)"
time ./bin/m2n_gpu --test-threads=1 --nocapture || status=1
step "example ([4096 × 14336] bf16, Shard(1) → [Shard(0), Replicate], both forms)"
time ./bin/m2n || status=1
step "benchmark"
OUT="$out" ./bin/m2n_bench || status=1
echo; echo "=== done (status $status) ==="
exit $status
