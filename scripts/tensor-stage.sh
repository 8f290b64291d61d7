#!/usr/bin/env bash
# Builds what the tensor-core and language GPU runs need (the GPU machine has no Rust
# toolchain) and stages it in .gpu-tensor/ (git-ignored) with scripts/tensor-run.sh. Then,
# with the device tool:
#   run(command="bash .gpu-tensor/tensor-run.sh", carry=[".gpu-tensor"], kind="nvidia-h200")
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu-tensor && mkdir -p .gpu-tensor/bin
cargo build --release --example gemm --example cudarc_interop
cp target/release/examples/gemm target/release/examples/cudarc_interop .gpu-tensor/bin/
# GPU tests: the tensor-core layer, sm_90a and tensor maps, the language additions, and
# the simulator-against-GPU differential test.
cargo test --release --no-run --message-format=json \
  --test tensor_core --test hopper --test scalar_methods --test gpu_language \
  --test memory_ordering --test gemm --test differential --test gpu 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu-tensor/bin/test-" + m["target"]["name"])
'
strip .gpu-tensor/bin/* 2>/dev/null || true
cp scripts/tensor-run.sh benches/cuda/gemm_mma.cu .gpu-tensor/
du -sh .gpu-tensor
