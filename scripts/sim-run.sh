#!/usr/bin/env bash
# Runs the CPU simulator against the GPU on the GPU machine, from .gpu-sim/ (see
# scripts/sim-stage.sh): every kernel on both (differential test), N random kernels on
# both (RANDOM_KERNELS, default 500, from seed RANDOM_SEED, default 0), the simulator's
# tests, the quickstart on both backends and the simulator benchmark. Output is printed and
# copied to $OUT/sim-log.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")"
log="${OUT:-/tmp}/sim-log.txt"
exec > >(tee "$log") 2>&1
export CUDAJIT_CACHE_DIR=/tmp/cudajit-sim-cache-$$
rm -rf "$CUDAJIT_CACHE_DIR"
step() { echo; echo "=== $* ==="; }
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
nproc
step "differential: every kernel on the GPU (CUDAJIT_FMA=0) and on the simulator"
CUDAJIT_FMA=0 ./bin/test-differential --nocapture
step "differential with FMA contraction on (exact outputs compared within 1e-5)"
./bin/test-differential --nocapture
step "random kernels: ${RANDOM_KERNELS:-500} on the GPU and on the simulator"
./bin/random_kernels "${RANDOM_KERNELS:-500}" "${RANDOM_SEED:-0}"
step "the simulator's tests"
./bin/test-sim
step "random kernel test (CI's 60 seeds, compared here)"
./bin/test-random_kernels --nocapture
step "GPU tests"
./bin/test-gpu --test-threads=1
step "quickstart on the GPU, then on the simulator"
./bin/quickstart
CUDAJIT_BACKEND=sim ./bin/quickstart
step "simulator benchmark: every core, then 2"
./bin/sim_bench
./bin/sim_bench 2
echo; echo "=== done ==="
