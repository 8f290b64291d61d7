#!/usr/bin/env bash
# Regenerates nccl-device/host/src/sys/layout/generated/ from the real headers of every supported
# NCCL release, and checks the result.
#
# 1. fetch-wheels.sh --all --cuda-headers: the nvidia-nccl-cu13 wheels (headers only are
#    used) and CUDA 13.0 headers, cached outside the repository.
# 2. gen_layouts.py: per release, nvcc preprocesses nccl.h + nccl_device.h for the field
#    lists and compiles a host probe printing sizeof/alignof/offsetof and the initializer
#    bytes the C++ compiler computes; releases with identical layouts form one generation;
#    one Rust module per generation is written, with compile-time assertions that rustc's
#    layout equals the probed C layout.
# 3. cargo build + the layout tests of cudajit-nccl against every release just probed.
#
# Needs: python3, g++ (nvcc's host compiler), nvcc (CUDAJIT_NVCC, or the nvidia-cuda-nvcc
# wheel under $CUDAJIT_TOOLS_DIR that scripts/test.sh installs), network access to PyPI on
# the first run. Usage: nccl-device/scripts/regenerate-bindings.sh [VERSION...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# The host layer crate, cudajit-nccl, beside this scripts folder.
crate="$(dirname "$here")/host"
cache="${CUDAJIT_NCCL_HEADERS_CACHE:-$HOME/.cache/cudajit-tools/nccl}"
export CUDAJIT_NCCL_HEADERS_CACHE="$cache"

if [ $# -gt 0 ]; then versions=("$@"); else
  versions=($(sed -n 's/^ALL_VERSIONS=(\(.*\))$/\1/p' "$here/fetch-wheels.sh"))
fi

nvcc="${CUDAJIT_NVCC:-}"
if [ -z "$nvcc" ]; then
  for d in "${CUDAJIT_TOOLS_DIR:-}" "$HOME/.cache/cudajit-tools/cu13.0.88/site-packages" \
           "$HOME/.cache/cudajit-tools/site-packages"; do
    if [ -n "$d" ] && [ -x "$d/nvidia/cu13/bin/nvcc" ]; then nvcc="$d/nvidia/cu13/bin/nvcc"; break; fi
  done
fi
[ -n "$nvcc" ] || command -v nvcc >/dev/null && nvcc="${nvcc:-$(command -v nvcc)}"
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  echo "regenerate-bindings: no nvcc; set CUDAJIT_NVCC or run scripts/test.sh once (it installs the nvcc wheel)" >&2
  exit 1
fi

echo "== fetching headers (${versions[*]}) into $cache"
"$here/fetch-wheels.sh" --cuda-headers "${versions[@]}"
echo "== probing layouts with $nvcc"
python3 "$here/gen_layouts.py" --cache "$cache" --nvcc "$nvcc" \
  --out "$crate/src/sys/layout/generated" "${versions[@]}"
echo "== checking"
cd "$crate/../.."
CUDAJIT_NCCL_LAYOUT_VERSIONS="${versions[*]}" CUDAJIT_NVCC="$nvcc" CUDAJIT_REQUIRE_TOOLCHAIN=1 \
  cargo test -p cudajit-nccl --test layouts -- --nocapture
