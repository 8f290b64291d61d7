#!/usr/bin/env bash
# Builds the release binaries of cudajit-nccl's GPU run (the GPU machine has no Rust) and
# stages them with gpu-run.sh in .gpu/nccl/ (git-ignored). Then, with the device tool:
#   run(command="bash .gpu/nccl/gpu-run.sh", carry=[".gpu/nccl"], kind="nvidia-h200-x2")
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
stage=.gpu/nccl
rm -rf "$stage" && mkdir -p "$stage/bin"
cargo build --release -p cudajit-nccl --bins
cargo build --release --features nccl --example nccl_setup
cp "$target/release/examples/nccl_setup" "$target/release/cudajit-nccl-launch" "$stage/bin/"
cargo test --release -p cudajit-nccl --no-run --message-format=json --test gpu 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], sys.argv[1] + "/bin/test-" + m["target"]["name"])
' "$stage"
strip "$stage"/bin/* 2>/dev/null || true
cp nccl-device/scripts/gpu-run.sh "$stage/"
du -sh "$stage"
