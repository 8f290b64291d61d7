#!/usr/bin/env bash
# Builds the M-to-N benchmark, example and GPU tests (the GPU machine has no Rust) and stages them
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
# The GPU test binary: the newest m2n_gpu-* that cargo reports.
test_bin=$(cargo test $flag --features m2n --no-run --test m2n_gpu --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*m2n_gpu[^"]*\)".*/\1/p' | tail -1)
cp "$test_bin" "$stage/bin/m2n_gpu"
strip "$stage"/bin/* 2>/dev/null || true
cp scripts/m2n-run.sh "$stage/"
du -sh "$stage"
