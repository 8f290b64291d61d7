#!/usr/bin/env bash
# Stages, in .gpu-fidelity/ (git-ignored), what proves the language work on a GPU: the GPU
# twins of the closure, Rust-fidelity, conformance, bounds-check-location, differential and language
# tests, and the rustc oracle over SEEDS (default 0..1000) run on the GPU (each generated
# program compiled by cudajit, run there, compared with rustc's host build). Then, with
# the device tool:
#   run(command="bash .gpu-fidelity/fidelity-run.sh", carry=[".gpu-fidelity"])
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${SEEDS:-0..1000}
rm -rf .gpu-fidelity && mkdir -p .gpu-fidelity/bin
copy_tests() {
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".gpu-fidelity/bin/test-" + m["target"]["name"])
'
}
tests=()
for t in closure_positions rust_fidelity conformance closures check_locations gpu_language differential struct_methods array_params; do
  [ -f "tests/$t.rs" ] && tests+=(--test "$t")
done
cargo test --release --no-run --message-format=json "${tests[@]}" 2>/dev/null | copy_tests
# The oracle in a debug build without debug info (its host programs must not check
# overflow, which the workspace's profile override gives the dev profile).
CARGO_PROFILE_DEV_DEBUG=0 CUDAJIT_ORACLE_SEEDS="$seeds" \
  cargo test --no-run --message-format=json -p cudajit-oracle --test agree 2>/dev/null | copy_tests
strip .gpu-fidelity/bin/* 2>/dev/null || true
cp scripts/fidelity-run.sh .gpu-fidelity/
echo "$seeds" > .gpu-fidelity/seeds
du -sh .gpu-fidelity; ls -la .gpu-fidelity/bin
