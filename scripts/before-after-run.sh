#!/usr/bin/env bash
# Runs on the GPU machine: a benchmark before and after a change, alternately, three times
# each (the order alternates too, so drift of the machine's clocks falls on both).
# scripts/before-after-stage.sh stages it.
set -uo pipefail
cd "$(dirname "$0")"
example=$(cat example)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader || true
echo "$example: before $(cat before.commit), after $(cat after.commit)"
export CUDAJIT_CACHE_DIR="${TMPDIR:-/tmp}/cudajit-before-after-cache"
rm -rf "$CUDAJIT_CACHE_DIR"
for round in 1 2 3; do
  if [ $((round % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
  for which in $order; do
    echo "== round $round: $which"
    "./bin/$example-$which"
  done
done
