#!/usr/bin/env bash
# The M-to-N programs on 2+ GPUs, from .gpu-m2n/ (multi-gpu-run.sh m2n): tests/m2n_gpu.rs,
# the example (the issue's [4096 × 14336] weight, both forms, checked), the benchmark
# against NCCL host collectives and cuMemcpyPeerAsync; $OUT/m2n-log.txt and
# $OUT/m2n_bench.csv.
exec bash "$(dirname "$0")/multi-gpu-run.sh" m2n "[4096 × 14336] bf16, Shard(1) → [Shard(0), Replicate], both forms"
