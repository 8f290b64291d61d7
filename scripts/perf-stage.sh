#!/usr/bin/env bash
# Builds the kernel benchmark (examples/kernel_bench/) in release mode and stages it in
# .gpu-perf/ (git-ignored) with the CUDA C++ twins (benches/cuda/kernels.cu) and
# scripts/perf-run.sh, for the GPU machine, which has no Rust toolchain. Then, with the
# device tool:
#   run(command="bash .gpu-perf/perf-run.sh", carry=[".gpu-perf"], kind="nvidia-h200")
# and read perf.md (the tables) and perf-log.txt from the files that come back.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
# Release: cudajit kernels of a debug build get bounds checks (CompileOptions::for_build),
# which is not what is being compared.
cargo build --release --example kernel_bench
rm -rf .gpu-perf && mkdir -p .gpu-perf
cp "$target/release/examples/kernel_bench" .gpu-perf/
strip .gpu-perf/kernel_bench 2>/dev/null || true
cp benches/cuda/kernels.cu scripts/perf-run.sh .gpu-perf/
# The CPU part runs here too, so a broken kernel is caught before the GPU is booked.
CUDAJIT_TOOLS_DIR="${CUDAJIT_TOOLS_DIR:-$HOME/.cache/cudajit-tools/site-packages}" \
  .gpu-perf/kernel_bench --cpu-check
du -sh .gpu-perf
echo 'staged; run: run(command="bash .gpu-perf/perf-run.sh", carry=[".gpu-perf"], kind="nvidia-h200")'
