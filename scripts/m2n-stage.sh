#!/usr/bin/env bash
# Builds the M-to-N benchmark, example and GPU tests and stages them in .gpu-m2n/
# (multi-gpu-stage.sh m2n). Then, with the device tool on two GPUs:
#   run(command="bash .gpu-m2n/m2n-run.sh", carry=[".gpu-m2n"], kind="nvidia-h200-x2")
exec "$(dirname "$0")/multi-gpu-stage.sh" m2n
