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
step "bounds-check messages name the simulator's file:line:column and function (CUDAJIT_BOUNDS_CHECKS=1 in each child)"
./bin/test-check_locations --test-threads=1 --nocapture
step "named barriers (the warpgroups' shared-memory hand-over)"
./bin/test-named_barriers --test-threads=1
step "kernel-suite tests (the benchmark's kernels at odd sizes)"
./bin/test-kernels --test-threads=1
step "pipeline tests against the machine's CUDA toolkit"
CUDAJIT_REQUIRE_TOOLCHAIN=1 ./bin/test-pipeline --nocapture
step "benchmark"
rm -rf "$CUDAJIT_CACHE_DIR"
./bin/saxpy_bench
step "benchmark again (warm disk cache)"
./bin/saxpy_bench
step "cudajit doctor"
./bin/cudajit doctor
step "CUDA Graph capture tests"
./bin/test-graph --test-threads=1 --nocapture
step "cache fault injection against the machine's CUDA toolkit"
CUDAJIT_REQUIRE_TOOLCHAIN=1 ./bin/test-cache_faults
step "launch benchmark (10^5 launches: cudajit vs cudarc vs bare cuLaunchKernel)"
./bin/launch_bench
step "compile benchmark (fresh processes: cold compile, disk-cache hit)"
./bin/compile_bench 7
step "cache tools"
./bin/cudajit cache stats
./bin/cudajit cache list | head -20
./bin/cudajit cache verify
step "CUDAJIT_DUMP and cudajit emit"
dump=/tmp/cudajit-dump-$$
CUDAJIT_DUMP=$dump ./bin/quickstart > /dev/null
./bin/cudajit emit --dir "$dump" --list
./bin/cudajit emit --dir "$dump" --kernel saxpy --ptx | head -30
./bin/cudajit emit --dir "$dump" --kernel saxpy --sass | head -40
rm -rf "$dump"
echo; echo "=== done ==="
