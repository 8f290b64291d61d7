#!/usr/bin/env bash
# Stages release builds of integration tests (and examples) for the GPU machine, which has no
# Rust: scripts/suite-stage.sh DIR TEST... [-- EXAMPLE...] builds them, strips them and copies
# them with scripts/suite-run.sh into DIR (git-ignored, keep it under the device tool's 64 MiB a
# call). Then, with the device tool:
#   run(command="bash DIR/suite-run.sh", carry=["DIR"], kind="nvidia-h200")
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
tests=()
examples=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; examples=("$@"); break; fi
  tests+=(--test "$1")
  shift
done
rm -rf "$dir" && mkdir -p "$dir/bin"
cargo test --release --no-run --message-format=json "${tests[@]}" 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], sys.argv[1] + "/bin/test-" + m["target"]["name"])
' "$dir"
for example in "${examples[@]}"; do
  cargo build --release --example "$example"
  cp "target/release/examples/$example" "$dir/bin/"
done
strip "$dir"/bin/* 2>/dev/null || true
cp scripts/suite-run.sh "$dir/"
git rev-parse HEAD > "$dir/commit"
du -sh "$dir"
