#!/usr/bin/env bash
# A benchmark before and after a change, on the GPU machine in one call: builds
# examples/EXAMPLE in release from BASE (default: the merge base with main) and from the
# working tree, and stages both stripped binaries with before-after-run.sh in DIR
# (git-ignored, default .gpu-EXAMPLE). Then, with the device tool:
#   run(command="bash DIR/before-after-run.sh", carry=["DIR"], kind="nvidia-h200")
#
#   scripts/before-after-stage.sh EXAMPLE [FEATURES]
#
# FEATURES: cargo features the example needs (`nccl`). BASE_EXAMPLE_SED: when the example
# is new (not in BASE), it is copied from the working tree into BASE's tree with this sed
# script applied (for API names BASE spells otherwise). BASE_TREE: an already built
# checkout of BASE, to skip rebuilding it.
set -euo pipefail
cd "$(dirname "$0")/.."
example=$1
features=${2:-}
base="${BASE:-$(git merge-base HEAD main)}"
stage="${DIR:-.gpu-$example}"
rm -rf "$stage" && mkdir -p "$stage/bin"
tree="${BASE_TREE:-${TMPDIR:-/tmp}/cudajit-before-$example}"
build=(cargo build --release --example "$example")
if [ -n "$features" ]; then build+=(--features "$features"); fi
if [ ! -x "$tree/target/release/examples/$example" ]; then
  rm -rf "$tree" && mkdir -p "$tree"
  git archive "$base" | tar -x -C "$tree"
  if [ ! -e "$tree/examples/$example.rs" ] && [ ! -d "$tree/examples/$example" ]; then
    sed -e "${BASE_EXAMPLE_SED:-}" "examples/$example.rs" > "$tree/examples/$example.rs"
    # Its [[example]] entry, as the working tree's Cargo.toml gives it.
    python3 - "$tree/Cargo.toml" "$example" <<'PY'
import re, sys
path, name = sys.argv[1], sys.argv[2]
entry = re.search(r'\[\[example\]\]\nname = "%s"\n(?:[^\[\n][^\n]*\n)*' % re.escape(name), open("Cargo.toml").read())
if entry:
    open(path, "a").write("\n" + entry.group(0))
PY
  fi
  (cd "$tree" && CARGO_TARGET_DIR=target "${build[@]}")
fi
cp "$tree/target/release/examples/$example" "$stage/bin/$example-before"
"${build[@]}"
cp "${CARGO_TARGET_DIR:-target}/release/examples/$example" "$stage/bin/$example-after"
strip "$stage"/bin/* 2>/dev/null || true
git rev-parse "$base" > "$stage/before.commit"
git rev-parse HEAD > "$stage/after.commit"
echo "$example" > "$stage/example"
cp scripts/before-after-run.sh "$stage/"
du -sh "$stage"
