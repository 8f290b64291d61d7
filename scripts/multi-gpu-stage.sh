#!/usr/bin/env bash
# Builds a module's benchmark, example and GPU tests (the GPU machine has no Rust) and
# stages them with multi-gpu-run.sh in .gpu-NAME/ (git-ignored), NAME the cargo feature
# whose programs are NAME_bench, NAME and tests/NAME_gpu.rs (moe, m2n). Then, with the
# device tool on two GPUs:
#   run(command="bash .gpu-NAME/NAME-run.sh", carry=[".gpu-NAME"], kind="nvidia-h200-x2")
# PROFILE=debug stages debug builds (a quick check of the staging itself).
# Usage: scripts/multi-gpu-stage.sh NAME   (scripts/moe-stage.sh and m2n-stage.sh call it)
set -euo pipefail
name="${1:?usage: scripts/multi-gpu-stage.sh NAME (moe, m2n)}"
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
profile="${PROFILE:-release}"
flag=$([ "$profile" = release ] && echo --release || true)
stage=".gpu-$name"
rm -rf "$stage" && mkdir -p "$stage/bin"
cargo build $flag --features "$name" --example "${name}_bench" --example "$name"
cp "$target/$profile/examples/${name}_bench" "$target/$profile/examples/$name" "$stage/bin/"
# The GPU test binary: the newest NAME_gpu-* that cargo reports.
test_bin=$(cargo test $flag --features "$name" --no-run --test "${name}_gpu" --message-format=json 2>/dev/null \
  | sed -n "s/.*\"executable\":\"\([^\"]*${name}_gpu[^\"]*\)\".*/\1/p" | tail -1)
cp "$test_bin" "$stage/bin/${name}_gpu"
strip "$stage"/bin/* 2>/dev/null || true
cp scripts/multi-gpu-run.sh "scripts/$name-run.sh" "$stage/"
du -sh "$stage"
