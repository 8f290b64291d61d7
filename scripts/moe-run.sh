#!/usr/bin/env bash
# The MoE programs on 2+ GPUs, from .gpu-moe/ (multi-gpu-run.sh moe): tests/moe_gpu.rs, the
# example, the benchmark; $OUT/moe-log.txt and $OUT/moe_bench.csv.
exec bash "$(dirname "$0")/multi-gpu-run.sh" moe "both modes, FP8 dispatch, NCCL EP's shapes"
