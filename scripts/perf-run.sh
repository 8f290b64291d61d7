#!/usr/bin/env bash
# Runs on the GPU machine, from the folder scripts/perf-stage.sh filled (.gpu-perf/):
# builds the CUDA C++ twins with nvcc, runs the cudajit-vs-nvcc kernel benchmark in one
# process, and leaves in $OUT:
#   perf.md            the result tables (paste into docs/performance.md)
#   perf-log.txt       everything printed, including the checks and ptxas -v
#   kernels.cubin      the nvcc build;  nvcc.sass / cudajit.sass: both sides' SASS
#   cudajit-cubins/    the cudajit cubins that ran;  cudajit-dump/: CUDAJIT_DUMP output
# Exit status: the benchmark's (1 when a kernel gave a wrong result).
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-/tmp/perf-out}"
mkdir -p "$out"
exec > >(tee "$out/perf-log.txt") 2>&1
step() { echo; echo "=== $* ==="; }
export PATH="/usr/local/cuda/bin:$PATH"
# A fresh cache: the kernels are compiled by this machine's CUDA toolkit, in this run.
export CUDAJIT_CACHE_DIR="/tmp/cudajit-perf-cache-$$"
rm -rf "$CUDAJIT_CACHE_DIR"
# Release builds have no bounds checks; say so explicitly for the record.
export CUDAJIT_BOUNDS_CHECKS=0
# Every compiled kernel's IR, PTX and cubin (ignored by builds that predate CUDAJIT_DUMP).
export CUDAJIT_DUMP="$out/cudajit-dump"
export NCCL_NVLS_ENABLE=0

step "machine"
date -u
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,persistence_mode,power.limit --format=csv
nvcc --version | tail -2

step "nvcc -O3 -arch=sm_90 -cubin kernels.cu (ptxas -v: registers, spills)"
if ! nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o kernels.cubin kernels.cu; then
  echo "nvcc failed: measuring the cudajit side only"
fi
cubin_args=()
if [ -f kernels.cubin ]; then
  cp kernels.cubin "$out/"
  cubin_args=(--cuda-cubin kernels.cubin)
fi

step "benchmark: cudajit vs nvcc (checks against the CPU first; median of 30 runs)"
./kernel_bench "${cubin_args[@]}" --markdown "$out/perf.md" --dump-cubins "$out/cudajit-cubins"
status=$?
echo "kernel_bench exit status: $status"

step "SASS and resource usage of both sides"
if [ -f kernels.cubin ]; then
  cuobjdump -sass kernels.cubin > "$out/nvcc.sass" 2>&1
  cuobjdump -res-usage kernels.cubin 2>&1 | grep -E "Function|REG"
fi
: > "$out/cudajit.sass"
for f in "$out"/cudajit-cubins/*.cubin; do
  [ -f "$f" ] || continue
  cuobjdump -sass "$f" >> "$out/cudajit.sass" 2>&1
  cuobjdump -res-usage "$f" 2>&1 | grep -E "Function|REG"
done
ls -la "$out"
echo; echo "=== done (status $status) ==="
exit $status
