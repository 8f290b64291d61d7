#!/usr/bin/env bash
# Builds the CPU simulator's checks against the GPU (release binaries; the GPU machine has
# no Rust toolchain) and stages them, with scripts/sim-run.sh, in .gpu-sim/ (git-ignored).
# Then, with the device tool:
#   run(command="bash .gpu-sim/sim-run.sh", carry=[".gpu-sim"], kind="nvidia-h200")
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
rm -rf .gpu-sim && mkdir -p .gpu-sim/bin
cargo build --release --example random_kernels --example sim_bench --example quickstart
for example in random_kernels sim_bench quickstart; do
  cp "$target/release/examples/$example" .gpu-sim/bin/
done
# The differential test (every kernel on both), the simulator's own tests, the random
# kernel test and the GPU tests.
cargo test --release --no-run --message-format=json \
  --test differential --test sim --test random_kernels --test gpu 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu-sim/bin/test-" + m["target"]["name"])
'
strip .gpu-sim/bin/* 2>/dev/null || true
cp scripts/sim-run.sh .gpu-sim/
du -sh .gpu-sim
