#!/usr/bin/env bash
# Builds the GEMM benchmark (examples/gemm/) and its GPU test (tests/gemm.rs) in release
# mode and stages them in .gpu-gemm/ (git-ignored) with the CUDA C++ twin
# (benches/cuda/gemm_mma.cu) and scripts/gemm-run.sh, for the GPU machine, which has no
# Rust toolchain. Then, with the device tool:
#   run(command="bash .gpu-gemm/gemm-run.sh", carry=[".gpu-gemm"], kind="nvidia-h200")
# and read gemm-*.md (the tables) and gemm-log.txt from the files that come back.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
# Release: cudajit kernels of a debug build get bounds checks (CompileOptions::for_build),
# which is not what is being compared.
cargo build --release --example gemm
rm -rf .gpu-gemm && mkdir -p .gpu-gemm/bin
cp "$target/release/examples/gemm" .gpu-gemm/bin/
cargo test --release --no-run --message-format=json --test gemm 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu-gemm/bin/test-" + m["target"]["name"])
'
strip .gpu-gemm/bin/* 2>/dev/null || true
cp benches/cuda/gemm_mma.cu scripts/gemm-run.sh .gpu-gemm/
# The CPU part runs here too (both sides compile for sm_90), so a broken kernel is caught
# before the GPU is booked.
CUDAJIT_TOOLS_DIR="${CUDAJIT_TOOLS_DIR:-$HOME/.cache/cudajit-tools/site-packages}" \
  CUDAJIT_GEMM_SOURCE="$PWD/.gpu-gemm/gemm_mma.cu" .gpu-gemm/bin/gemm --cpu-check
du -sh .gpu-gemm
echo 'staged; run: run(command="bash .gpu-gemm/gemm-run.sh", carry=[".gpu-gemm"], kind="nvidia-h200")'
