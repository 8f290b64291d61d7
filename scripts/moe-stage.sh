#!/usr/bin/env bash
# Builds the MoE benchmark, the MoE example and the MoE GPU tests and stages them in
# .gpu-moe/ (multi-gpu-stage.sh moe). Then, with the device tool on two GPUs:
#   run(command="bash .gpu-moe/moe-run.sh", carry=[".gpu-moe"], kind="nvidia-h200-x2")
exec "$(dirname "$0")/multi-gpu-stage.sh" moe
