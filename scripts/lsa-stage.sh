#!/usr/bin/env bash
# Builds the release binaries of the NCCL device-API examples (the GPU machine has no Rust)
# and stages them with lsa-run.sh in .gpu-lsa/ (git-ignored). Then, with the device tool:
#   run(command="bash .gpu-lsa/lsa-run.sh", carry=[".gpu-lsa"], kind="nvidia-h200-x2")
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
stage=.gpu-lsa
rm -rf "$stage" && mkdir -p "$stage/bin"
cargo build --release -p cudajit-nccl --bin cudajit-nccl-launch
examples=(lsa_peer_read allreduce_lsa allgather_lsa alltoall_lsa)
cargo build --release --features nccl $(printf -- '--example %s ' "${examples[@]}")
for e in "${examples[@]}"; do cp "$target/release/examples/$e" "$stage/bin/"; done
cp \
   "$target/release/cudajit-nccl-launch" "$stage/bin/"
strip "$stage"/bin/* 2>/dev/null || true
cp scripts/lsa-run.sh "$stage/"
du -sh "$stage"
