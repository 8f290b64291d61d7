#!/usr/bin/env bash
# On the GPU machine: joins the parts scripts/nccl-232-stage.sh made into libnccl.so.2 and
# checks its SHA-256 against the development machine's.
set -euo pipefail
cd "$(dirname "$0")"
cat part-* > libnccl.so.2
sha256sum -c SHA256
echo "CUDAJIT_NCCL_LIBRARY=$PWD/libnccl.so.2"
