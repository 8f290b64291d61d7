#!/usr/bin/env bash
# Runs the NCCL device-API examples on a machine with 2+ GPUs (NVLink), from the folder
# scripts/lsa-stage.sh fills: each example in one process over all GPUs (4 KB ..
# MAX_BYTES, default 1 GB), then in one process per GPU (4 KB .. 64 MB).
# Output is printed and copied to $OUT/lsa-log.txt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")"
log="${OUT:-/tmp}/lsa-log.txt"
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ==="; }
ngpu=$(nvidia-smi -L | wc -l)
max=${MAX_BYTES:-1073741824}
status=0
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* 2>&1
step "first run in a fresh cache (compiles the kernels and the NCCL bridge)"
export CUDAJIT_CACHE_DIR=$(mktemp -d)
time MAX_BYTES=4096 ./bin/lsa_peer_read || status=1
step "second process (disk cache)"
time MAX_BYTES=4096 ./bin/lsa_peer_read || status=1
for example in lsa_peer_read allreduce_lsa allgather_lsa alltoall_lsa; do
  step "$example, one process over $ngpu GPUs, up to $max bytes"
  MAX_BYTES=$max ./bin/$example || status=1
  step "$example, one process per GPU, up to 64 MB"
  MAX_BYTES=67108864 ./bin/cudajit-nccl-launch --nproc "$ngpu" --timeout 300 -- ./bin/$example || status=1
done
# Agreement before the first launch (docs/nccl.md): each run must print the refusals and
# "DIVERGE=...: detected" and exit 0; a hang ends at the `timeout` with status 124.
agree() {  # what, command...
  local what=$1; shift
  step "agreement: $what"
  "$@"; local rc=$?
  echo "exit status $rc"
  [ $rc -eq 0 ] || status=1
}
agree "DIVERGE=grid, one process over $ngpu GPUs (twice the CTAs of the barriers)" \
  env DIVERGE=grid timeout 120 ./bin/allreduce_lsa
agree "DIVERGE=1, one process over $ngpu GPUs (rank 1 launches i32, the others f32)" \
  env DIVERGE=1 timeout 120 ./bin/allreduce_lsa
agree "DIVERGE=grid, one process per GPU" \
  env DIVERGE=grid timeout 120 ./bin/cudajit-nccl-launch --nproc "$ngpu" --timeout 60 -- ./bin/allreduce_lsa
agree "DIVERGE=1, one process per GPU (the ranks exchange identities through NCCL)" \
  env DIVERGE=1 timeout 120 ./bin/cudajit-nccl-launch --nproc "$ngpu" --timeout 60 -- ./bin/allreduce_lsa
echo; echo "=== done (status $status) ==="
exit $status
