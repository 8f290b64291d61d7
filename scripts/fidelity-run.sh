#!/usr/bin/env bash
# Runs what scripts/fidelity-stage.sh staged, on the GPU machine; the log is printed and
# copied to $OUT/fidelity-log.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")"
exec > >(tee "${OUT:-/tmp}/fidelity-log.txt") 2>&1
export CUDAJIT_CACHE_DIR=/tmp/cudajit-cache-$$
step() { echo; echo "=== $* ==="; }
step "machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in bin/test-*; do
  step "$t"
  "$t" --test-threads=1 2>&1 | grep -vE '^test .* ok$' | tail -n 40
done
step "rustc oracle on the GPU: seeds $(cat seeds) (CUDAJIT_FMA=0, set by the test)"
if [ -x bin/test-agree ]; then
  time bin/test-agree --nocapture 2>&1 | tail -n 40
fi
