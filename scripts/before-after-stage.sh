#!/usr/bin/env bash
# The launch path before and after the crate layout change (issue 26): builds
# examples/launch_bench in release from BASE (default: the merge base with main) and from
# the working tree, stages both stripped binaries with layout-bench-run.sh in .gpu-layout/
# (git-ignored). Then, with the device tool:
#   run(command="bash .gpu-layout/layout-bench-run.sh", carry=[".gpu-layout"], kind="nvidia-h200")
set -euo pipefail
cd "$(dirname "$0")/.."
base="${BASE:-$(git merge-base HEAD main)}"
stage=.gpu-layout
rm -rf "$stage" && mkdir -p "$stage/bin"
# BASE_TREE: an already built checkout of $base (its target/release), to skip rebuilding it.
tree="${BASE_TREE:-${TMPDIR:-/tmp}/cudajit-layout-base}"
if [ ! -x "$tree/target/release/examples/launch_bench" ]; then
  rm -rf "$tree" && mkdir -p "$tree"
  git archive "$base" | tar -x -C "$tree"
  (cd "$tree" && cargo build --release --example launch_bench)
fi
cp "$tree/target/release/examples/launch_bench" "$stage/bin/launch_bench-before"
cargo build --release --example launch_bench
cp "${CARGO_TARGET_DIR:-target}/release/examples/launch_bench" "$stage/bin/launch_bench-after"
strip "$stage"/bin/* 2>/dev/null || true
git rev-parse "$base" > "$stage/before.commit"
git rev-parse HEAD > "$stage/after.commit"
cp scripts/layout-bench-run.sh "$stage/"
du -sh "$stage"
