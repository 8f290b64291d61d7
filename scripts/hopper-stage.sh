#!/usr/bin/env bash
# Builds what the Hopper GEMM runs need (the GPU machine has no Rust toolchain) and stages it
# in .gpu-hop/ (git-ignored) with scripts/hopper-run.sh and the CUDA C++ twins. Then, with
# the device tool:
#   run(command="bash .gpu-hop/hopper-run.sh", carry=[".gpu-hop"], kind="nvidia-h200")
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu-hop && mkdir -p .gpu-hop/bin
cargo build --release --example gemm
cp target/release/examples/gemm .gpu-hop/bin/
cargo test --release --no-run --message-format=json \
  --test gemm --test hopper --test ptx_register_arrays 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu-hop/bin/test-" + m["target"]["name"])
'
strip .gpu-hop/bin/* 2>/dev/null || true
cp scripts/hopper-run.sh benches/cuda/gemm_mma.cu benches/cuda/gemm_wgmma.cu .gpu-hop/
du -sh .gpu-hop
