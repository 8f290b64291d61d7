#!/usr/bin/env bash
# Builds the MoE benchmark, the MoE example and the MoE GPU tests (the GPU machine has no
# Rust) and stages them with moe-run.sh in .gpu-moe/ (git-ignored). Then, with the device
# tool on two GPUs:
#   run(command="bash .gpu-moe/moe-run.sh", carry=[".gpu-moe"], kind="nvidia-h200-x2")
# PROFILE=debug stages debug builds (a quick check of the staging itself).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
profile="${PROFILE:-release}"
flag=$([ "$profile" = release ] && echo --release || true)
stage=.gpu-moe
rm -rf "$stage" && mkdir -p "$stage/bin"
cargo build $flag --features moe --example moe_bench --example moe
cp "$target/$profile/examples/moe_bench" "$target/$profile/examples/moe" "$stage/bin/"
# The GPU test binary: the newest moe_gpu-* that cargo reports.
test_bin=$(cargo test $flag --features moe --no-run --test moe_gpu --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*moe_gpu[^"]*\)".*/\1/p' | tail -1)
cp "$test_bin" "$stage/bin/moe_gpu"
strip "$stage"/bin/* 2>/dev/null || true
cp scripts/moe-run.sh "$stage/"
du -sh "$stage"
