#!/usr/bin/env bash
# Runs cudajit-nccl's GPU tests and example on a 2-GPU machine, from the staging folder
# that nccl-device/scripts/gpu-stage.sh fills. Output is printed and copied to
# $OUT/nccl-gpu-log.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")"
log="${OUT:-/tmp}/nccl-gpu-log.txt"
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ==="; }
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
nvidia-smi topo -m 2>/dev/null | head -4
ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* /usr/include/nccl.h 2>&1
step "example, one process over 2 GPUs (system NCCL)"
./bin/nccl_setup
step "example, one process per GPU through the launcher"
./bin/cudajit-nccl-launch --nproc 2 --timeout 120 -- ./bin/nccl_setup
wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) or list(nvidia.nccl.__path__)[0])' 2>/dev/null ||
        python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)
if [ -n "$wheel" ] && [ -f "$wheel/lib/libnccl.so.2" ]; then
  step "example with the Python wheel's NCCL ($wheel)"
  CUDAJIT_NCCL_LIBRARY="$wheel/lib/libnccl.so.2" ./bin/nccl_setup
  step "version mismatch: wheel library with the system headers"
  CUDAJIT_NCCL_LIBRARY="$wheel/lib/libnccl.so.2" CUDAJIT_NCCL_INCLUDE=/usr/include ./bin/nccl_setup
fi
step "GPU tests (system NCCL)"
./bin/test-gpu --test-threads=1 --nocapture
echo; echo "=== done ==="
