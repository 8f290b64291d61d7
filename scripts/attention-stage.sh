#!/usr/bin/env bash
# Builds what the fused-attention GPU run needs (the GPU machine has no Rust toolchain) and
# stages it in .gpu-attn/ (git-ignored) with scripts/attention-run.sh, the SDPA benchmark
# and the plot script. Then, with the device tool:
#   run(command="bash .gpu-attn/attention-run.sh", carry=[".gpu-attn"], kind="nvidia-h200")
# and read $OUT: attention-log.txt, cudajit.csv, sdpa.csv, comparison.md, attention-h200.png.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu-attn && mkdir -p .gpu-attn/bin
cargo build --release --example attention
cp target/release/examples/attention .gpu-attn/bin/
cargo test --release --no-run --message-format=json --test attention 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu-attn/bin/test-" + m["target"]["name"])
'
strip .gpu-attn/bin/* 2>/dev/null || true
cp scripts/attention-run.sh examples/attention/sdpa_bench.py examples/attention/plot.py .gpu-attn/
du -sh .gpu-attn
