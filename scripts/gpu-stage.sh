#!/usr/bin/env bash
# Builds the release binaries that the GPU machine runs (it has no Rust toolchain) and
# stages them, with scripts/gpu-run.sh, in .gpu/ (git-ignored). Then, with the device tool:
#   run(command="bash .gpu/gpu-run.sh", carry=[".gpu"], kind="nvidia-h200")
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu/bin
cargo build --release --examples
cp target/release/examples/quickstart target/release/examples/saxpy_bench .gpu/bin/
# The cudajit tool and the launch/compile benchmarks (cache, launch path and tools issue).
cargo build --release --features cli --bin cudajit
cp target/release/cudajit target/release/examples/launch_bench target/release/examples/compile_bench .gpu/bin/
# Integration test binaries: the GPU tests and the CPU pipeline tests (which compile with
# the machine's CUDA toolkit instead of the wheels).
cargo test --release --no-run --message-format=json --test gpu --test pipeline --test graph --test cache_faults --test kernels --test check_locations --test named_barriers 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu/bin/test-" + m["target"]["name"])
'
strip .gpu/bin/* 2>/dev/null || true
cp scripts/gpu-run.sh .gpu/
du -sh .gpu
