#!/usr/bin/env bash
# Runs on the GPU machine: every staged test binary (one line of results each, failures in
# full) and the staged quickstart. scripts/suite-stage.sh stages it.
set -uo pipefail
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
echo "commit: $(cat commit)"
export CUDAJIT_CACHE_DIR="${TMPDIR:-/tmp}/cudajit-suite-cache"
export CUDAJIT_REQUIRE_TOOLCHAIN=1
failed=0
for t in bin/test-*; do
  [ -x "$t" ] || continue
  log=$(mktemp)
  if "$t" --test-threads=4 >"$log" 2>&1; then status=ok; else status=FAILED; failed=1; fi
  echo "== ${t#bin/test-}: $(grep -E '^test result' "$log" | tail -n 1) [$status]"
  if [ "$status" = FAILED ]; then tail -n 60 "$log"; fi
  grep -E 'skipp' "$log" | sort | uniq -c | head -n 5
  rm -f "$log"
done
if [ -x bin/quickstart ]; then echo "== quickstart"; ./bin/quickstart; fi
exit $failed
