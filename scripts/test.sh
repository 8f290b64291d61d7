#!/usr/bin/env bash
# Installs what the tests need and runs them: rustfmt check, clippy, the whole test suite.
#
# NVIDIA's compiler libraries (libNVVM + libdevice, nvJitLink, NVRTC, nvcc) come from
# NVIDIA's PyPI wheels at pinned versions, installed once into a cache directory outside
# the clone ($CUDAJIT_TOOLS_CACHE, default ~/.cache/cudajit-tools) and reused after that.
# With them the CPU tests compile real kernels to real cubins; GPU tests skip themselves
# when no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."

CUDA_WHEEL_VERSION=13.0.88   # the CUDA 13.0 toolkit of the GPU machines
cache_root="${CUDAJIT_TOOLS_CACHE:-$HOME/.cache/cudajit-tools}"
tools="$cache_root/cu$CUDA_WHEEL_VERSION"
wheels=(
  "nvidia-nvvm==$CUDA_WHEEL_VERSION"
  "nvidia-nvjitlink==$CUDA_WHEEL_VERSION"
  "nvidia-cuda-nvrtc==$CUDA_WHEEL_VERSION"
  "nvidia-cuda-nvcc==$CUDA_WHEEL_VERSION"
)

if [ ! -f "$tools/.complete" ]; then
  echo "installing NVIDIA compiler wheels ($CUDA_WHEEL_VERSION) into $tools"
  python=$(command -v python3 || command -v python)
  rm -rf "$tools.partial"
  mkdir -p "$tools.partial"
  # One pip call for all wheels: they share the nvidia/ directory, and separate
  # `--target` installs would not merge it.
  "$python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$tools.partial/site-packages" "${wheels[@]}"
  rm -rf "$tools"
  mv "$tools.partial" "$tools"
  touch "$tools/.complete"
fi

export CUDAJIT_TOOLS_DIR="$tools/site-packages"
export CUDAJIT_REQUIRE_TOOLCHAIN=1

# NCCL 2.28.3 and 2.32.3 (headers, libnccl.so.2, the device library) for the NCCL
# discovery, version and layout tests, and CUDA 13.0 headers for nvcc's layout probes,
# cached once under the tools cache.
export CUDAJIT_NCCL_HEADERS_CACHE="$cache_root/nccl"
bash nccl-device/scripts/fetch-wheels.sh --cuda-headers 2.28.3 2.32.3
# Tests get a cache directory of their own, emptied each run.
export CUDAJIT_CACHE_DIR="${TMPDIR:-/tmp}/cudajit-test-cache-$$"
trap 'rm -rf "$CUDAJIT_CACHE_DIR"' EXIT

echo "== import floors"
python3 scripts/import-floors.py
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --features cudajit/cli,cudajit/moe,cudajit/m2n --quiet -- -D warnings
# Every simulated launch from here on also checks global memory for data races (off by
# default, docs/simulator.md#races-on-global-memory): a test kernel that races is a bug of
# the test even when its results happen to agree.
export CUDAJIT_SIM_RACES=global
echo "== cargo test"
cargo test --workspace --features cudajit/cli,cudajit/moe,cudajit/m2n
echo "== NCCL's unique id over MPI (the mpi feature) under mpirun -np 2 and -np 4"
# Needs a system MPI (rsmpi's build runs mpicc) and libclang (its bindgen); CI installs
# neither, so without them the step says so and is skipped.
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "SKIPPED: mpicc/mpirun not on PATH (apt-get install libopenmpi-dev openmpi-bin libclang-dev)"
elif [ -z "${LIBCLANG_PATH:-}" ] && ! ldconfig -p | grep -q 'libclang[-.0-9]*\.so'; then
  echo "SKIPPED: no libclang for rsmpi's bindings (apt-get install libclang-dev, or set LIBCLANG_PATH)"
else
  cargo build -p cudajit-nccl --features mpi
  cargo clippy -p cudajit-nccl --all-targets --features mpi --quiet -- -D warnings
  cargo clippy --example nccl_setup --features nccl,mpi --quiet -- -D warnings
  cargo test -p cudajit-nccl --features mpi --test mpi_job
fi
echo "== the tensor-core examples compiled for sm_90 (PTX shape, no local memory)"
cargo run --quiet --example gemm -- --cpu-check
cargo run --quiet --example attention -- --cpu-check
echo "== quickstart on the CPU simulator (no GPU needed)"
CUDAJIT_BACKEND=sim cargo run --quiet --example quickstart
echo "== LSA examples on 2, 4 and 8 simulated NCCL ranks, and on 2 simulated nodes of 4 (no GPU, no NCCL library needed)"
for topology in "1 2" "1 4" "1 8" "2 4"; do
  set -- $topology
  for example in lsa_peer_read allreduce_lsa allgather_lsa alltoall_lsa; do
    CUDAJIT_BACKEND=sim SIM_NODES=$1 SIM_RANKS=$2 cargo run --quiet --features nccl --example "$example" | tail -n 1
  done
done
echo "== MoE dispatch and combine (examples/moe.rs) on 2, 4 and 8 simulated ranks"
for ranks in 2 4 8; do
  CUDAJIT_BACKEND=sim SIM_RANKS=$ranks cargo run --quiet --features moe --example moe | tail -n 3
done
echo "== M-to-N resharding (examples/m2n.rs) on 2, 4 and 8 simulated ranks"
for ranks in 2 4 8; do
  CUDAJIT_BACKEND=sim SIM_RANKS=$ranks cargo run --quiet --features m2n --example m2n | tail -n 2
done
