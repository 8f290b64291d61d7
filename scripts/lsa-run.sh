#!/usr/bin/env bash
# Runs the NCCL device-API examples on a machine with 2+ GPUs (NVLink), from the folder
# scripts/lsa-stage.sh fills: one process over all GPUs, then one process per GPU.
# Output is printed and copied to $OUT/lsa-log.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")"
log="${OUT:-/tmp}/lsa-log.txt"
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ==="; }
ngpu=$(nvidia-smi -L | wc -l)
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* 2>&1
step "lsa_peer_read, one process over $ngpu GPUs (first run compiles, including the NCCL bridge)"
time ./bin/lsa_peer_read
step "lsa_peer_read again (cached)"
time ./bin/lsa_peer_read
step "lsa_peer_read, one process per GPU"
./bin/cudajit-nccl-launch --nproc "$ngpu" --timeout 300 -- ./bin/lsa_peer_read
step "allreduce_lsa, one process over $ngpu GPUs, 4 KB .. ${MAX_BYTES:-1073741824} bytes"
MAX_BYTES=${MAX_BYTES:-1073741824} ./bin/allreduce_lsa
step "allreduce_lsa, one process per GPU, 4 KB .. 64 MB"
MAX_BYTES=67108864 ./bin/cudajit-nccl-launch --nproc "$ngpu" --timeout 300 -- ./bin/allreduce_lsa
# Agreement before the first launch (docs/nccl.md): each run must print the refusals and
# "DIVERGE=...: detected" and exit 0; a hang ends at the `timeout` with status 124.
step "agreement: DIVERGE=grid, one process over $ngpu GPUs (twice the CTAs of the barriers)"
DIVERGE=grid timeout 120 ./bin/allreduce_lsa; echo "exit status $?"
step "agreement: DIVERGE=1, one process over $ngpu GPUs (rank 1 launches i32, the others f32)"
DIVERGE=1 timeout 120 ./bin/allreduce_lsa; echo "exit status $?"
step "agreement: DIVERGE=grid, one process per GPU"
DIVERGE=grid timeout 120 ./bin/cudajit-nccl-launch --nproc "$ngpu" --timeout 60 -- ./bin/allreduce_lsa; echo "exit status $?"
step "agreement: DIVERGE=1, one process per GPU (the ranks exchange identities through NCCL)"
DIVERGE=1 timeout 120 ./bin/cudajit-nccl-launch --nproc "$ngpu" --timeout 60 -- ./bin/allreduce_lsa; echo "exit status $?"
echo; echo "=== done ==="
