#!/usr/bin/env bash
# Stages NCCL 2.32.3 (libnccl.so.2, 344 MB, from the nvidia-nccl-cu13 wheel scripts/test.sh
# caches) for the GPU machine, which has no network: split into parts of 56 MiB (a part and the working tree fit one call's 64 MiB), each
# carried by one device call while the machine stays warm (ignored files stay there between
# calls), then reassembled and checked there by scripts/nccl-232-assemble.sh:
#   for each part i:  run(command="true", carry=[".gpu-nccl232/part-$i"], kind="nvidia-h200-x2")
#   then:             run(command="bash .gpu-nccl232/assemble.sh", carry=[".gpu-nccl232/assemble.sh", ".gpu-nccl232/SHA256"], kind="nvidia-h200-x2")
# and point CUDAJIT_NCCL_LIBRARY at .gpu-nccl232/libnccl.so.2 there (issue 19's runs).
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${CUDAJIT_NCCL_HEADERS_CACHE:-$HOME/.cache/cudajit-tools/nccl}"
library="$cache/2.32.3/nvidia/nccl/lib/libnccl.so.2"
if [ ! -f "$library" ]; then
  echo "no $library: run scripts/test.sh once (it fetches the 2.32.3 wheel), or pip download nvidia-nccl-cu13==2.32.3" >&2
  exit 1
fi
stage=.gpu-nccl232
rm -rf "$stage" && mkdir -p "$stage"
(cd "$stage" && split -b 56M -d -a 2 "$library" part- && sha256sum "$library" | sed 's|  .*|  libnccl.so.2|' > SHA256)
cp scripts/nccl-232-assemble.sh "$stage/assemble.sh"
ls -la "$stage"
echo "carry each $stage/part-NN in its own call (one part a call, machine warm), then run assemble.sh"
