#!/usr/bin/env bash
# Builds the M-to-N benchmark and example (the GPU machine has no Rust) and stages them
# with m2n-run.sh in .gpu-m2n/ (git-ignored). Then, with the device tool on two GPUs:
#   run(command="bash .gpu-m2n/m2n-run.sh", carry=[".gpu-m2n"], kind="nvidia-h200-x2")
# PROFILE=debug stages debug builds (a quick check of the staging itself).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
profile="${PROFILE:-release}"
flag=$([ "$profile" = release ] && echo --release || true)
stage=.gpu-m2n
rm -rf "$stage" && mkdir -p "$stage/bin"
cargo build $flag --features m2n --example m2n_bench --example m2n
cp "$target/$profile/examples/m2n_bench" "$target/$profile/examples/m2n" "$stage/bin/"
strip "$stage"/bin/* 2>/dev/null || true
cp scripts/m2n-run.sh "$stage/"
du -sh "$stage"
