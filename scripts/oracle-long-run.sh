#!/usr/bin/env bash
# The rustc oracle's long run: COUNT generated programs from seed FIRST on, in batches of
# BATCH (each batch one build of tests/oracle, whose build script writes the programs),
# run on the CPU simulator (and the GPU when there is one) against rustc's compilation.
# Prints each batch's result and the total; exits 1 if any program disagrees.
#   scripts/oracle-long-run.sh [FIRST] [COUNT] [BATCH]     (defaults: 1000 10000 1000)
set -uo pipefail
cd "$(dirname "$0")/.."
first=${1:-1000}
count=${2:-10000}
batch=${3:-1000}
agreed=0
total=0
failed=0
for ((start = first; start < first + count; start += batch)); do
  end=$((start + batch))
  log=$(mktemp)
  if CUDAJIT_ORACLE_SEEDS="$start..$end" cargo test -q -p cudajit-oracle --test agree -- --nocapture >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=1
  fi
  line=$(grep -E '^simulator: [0-9]+ of [0-9]+' "$log" | tail -n 1)
  echo "seeds $start..$end: ${line:-no result (see below)} [$status]"
  if [ "$status" = FAILED ]; then
    grep -E 'disagrees|failed on|^error' "$log" | head -n 20
  fi
  if [[ $line =~ ([0-9]+)\ of\ ([0-9]+) ]]; then
    agreed=$((agreed + BASH_REMATCH[1]))
    total=$((total + BASH_REMATCH[2]))
  fi
  rm -f "$log"
done
echo "total: $agreed of $total programs agree with rustc"
exit $failed
