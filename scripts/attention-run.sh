#!/usr/bin/env bash
# Runs on the GPU machine from .gpu-attn/ (see scripts/attention-stage.sh), in about 5 of
# the 9 minutes the steps' time limits add up to: the attention tests (simulator, every
# form and element type on the GPU against the host, the PTX and ptxas checks), the
# registers of every form, the example's checks (every head dimension and KV tile, bf16
# and f16, causal and not, GQA, tails) and its benchmark, PyTorch SDPA's flash and cuDNN
# back ends on the same shapes, and the comparison table and plot. Logs and tables land in
# $OUT; the CSVs are written row by row, so a step cut short still leaves its rows.
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-/tmp/attention-out}"
mkdir -p "$out"
exec > >(tee "$out/attention-log.txt") 2>&1
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# One cache for the run: the example reuses the cubins the tests compiled.
export CUDAJIT_CACHE_DIR=/tmp/cudajit-attention-cache-$$ CUDAJIT_REQUIRE_TOOLCHAIN=1
step() { echo; echo "=== $* ==="; date -u +%T; }
status=0
step "machine"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
step "test-attention"
timeout 100 ./bin/test-attention --test-threads=1 || status=1
step "every form for sm_90: PTX and ptxas's registers"
timeout 45 ./bin/attention --cpu-check || status=1
step "cudajit: checks against the host, then the benchmark"
timeout 210 ./bin/attention --csv "$out/cudajit.csv" || status=1
step "PyTorch SDPA: flash and cuDNN back ends, same shapes"
timeout 170 python3 sdpa_bench.py --csv "$out/sdpa.csv" || status=1
step "comparison table and plot"
timeout 20 python3 plot.py "$out/cudajit.csv" "$out/sdpa.csv" "$out/attention-h200.png" \
  > "$out/comparison.md" || status=1
cat "$out/comparison.md"
echo; echo "=== done (status $status) ==="; date -u +%T
exit $status
