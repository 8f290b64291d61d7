#!/usr/bin/env bash
# Downloads NVIDIA's `nvidia-nccl-cu13` wheels into a cache directory outside the
# repository and extracts only what cudajit-nccl's tests and generator need: the headers
# (`nvidia/nccl/include/*`), the host library `libnccl.so.2`, the device library
# `libnccl_device.ltoir` where the wheel ships one (2.31 and later; 2.29.x and 2.30.x
# ship none) and the list of files in `nvidia/nccl/lib`. Idempotent: a version already
# extracted (marked `.complete`) is skipped; the wheel itself is kept in the cache so
# re-extraction needs no download. A cache extracted before the device library was
# wanted gets it from the kept wheel on the next run.
#
# The 2.31+ device libraries are LTO-IR from a newer NVVM than CUDA 13.0's: nvJitLink
# 13.0 refuses them (NVJITLINK_ERROR_OUTDATED_LIBRARY). So whenever a fetched release
# ships one, nvJitLink $NEW_NVJITLINK is fetched too (its libnvJitLink.so.13 only), for
# the CPU link tests of nccl-device/host/tests/device_code.rs.
#
#   nccl-device/scripts/fetch-wheels.sh                 # the versions the test suite checks
#   nccl-device/scripts/fetch-wheels.sh --all           # every supported generation
#   nccl-device/scripts/fetch-wheels.sh 2.29.7 2.31.2   # chosen versions
#   nccl-device/scripts/fetch-wheels.sh --cuda-headers  # the test versions + CUDA 13.0 headers
#                                                       # (what scripts/test.sh runs)
#
# Layout ($CUDAJIT_NCCL_HEADERS_CACHE, default ~/.cache/cudajit-tools/nccl):
#   <root>/<version>/nvidia/nccl/include/nccl.h, nccl_device.h, nccl_device/...
#   <root>/<version>/nvidia/nccl/lib/libnccl.so.2
#   <root>/<version>/nvidia/nccl/lib/libnccl_device.ltoir   when the wheel has it
#   <root>/<version>/lib-files.txt      every file name under nvidia/nccl/lib in the wheel
#   <root>/<version>/wheel/*.whl        the downloaded wheel
#   <root>/nvjitlink-<v>/nvidia/cu13/lib/libnvJitLink.so.13   (see above)
#   <root>/cuda-13.0/nvidia/cu13/{include,lib}  CUDA runtime, crt and cccl headers and the
#                                      static runtime, for nvcc layout probes (--cuda-headers)
#
# Point the tests at it with CUDAJIT_NCCL_HEADERS_CACHE=<root>.
set -euo pipefail

# The test suite checks the oldest and the newest supported release.
TEST_VERSIONS=(2.28.3 2.32.3)
# Every release from the oldest supported one on (the generator groups them into layout
# generations: see nccl-device/host/src/sys/layout/mod.rs).
ALL_VERSIONS=(2.28.3 2.28.7 2.28.9 2.29.2 2.29.3 2.29.7 2.30.3 2.30.4 2.30.7 2.31.2 2.32.3)
# CUDA 13.0 headers for the nvcc layout probes of nccl_device.h (nvcc itself is the
# nvidia-cuda-nvcc 13.0.88 wheel that scripts/test.sh installs).
# The nvJitLink that reads the 2.31+ device libraries (checked: 13.5.37 links 2.32.3's).
NEW_NVJITLINK=13.5.37
CUDA_HEADER_WHEELS=(nvidia-cuda-runtime==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85)

root="${CUDAJIT_NCCL_HEADERS_CACHE:-$HOME/.cache/cudajit-tools/nccl}"
python=$(command -v python3 || command -v python)

versions=()
cuda_headers=0
for arg in "$@"; do
  case "$arg" in
    --all) versions+=("${ALL_VERSIONS[@]}") ;;
    --cuda-headers) cuda_headers=1 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) versions+=("$arg") ;;
  esac
done
if [ ${#versions[@]} -eq 0 ]; then
  versions=("${TEST_VERSIONS[@]}")
fi

# Extracts members of wheel $1 whose names start with one of the prefixes $3... into $2,
# and writes the names under nvidia/nccl/lib/ to $2/lib-files.txt when $2 is an NCCL dir.
extract() {
  "$python" - "$@" <<'PY'
import sys, zipfile, os
wheel, dest, *prefixes = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    for n in names:
        if any(n.startswith(p) for p in prefixes) and not n.endswith("/"):
            z.extract(n, dest)
    libs = sorted(n for n in names if n.startswith("nvidia/nccl/lib/"))
    if libs:
        with open(os.path.join(dest, "lib-files.txt"), "w") as f:
            f.write("\n".join(libs) + "\n")
PY
}

download() { # $1 = requirement, $2 = directory
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: \
    --dest "$2" "$1"
}

DEVICE_LIBRARY=nvidia/nccl/lib/libnccl_device.ltoir

# Whether the extracted release $1 lacks a device library that its wheel ships.
device_library_missing() {
  grep -qx "$DEVICE_LIBRARY" "$1/lib-files.txt" 2>/dev/null && [ ! -f "$1/$DEVICE_LIBRARY" ]
}

fetch_wheel() { # $1 = version, $2 = release directory
  if ! ls "$2"/wheel/*.whl >/dev/null 2>&1; then
    echo "nccl $1: downloading nvidia-nccl-cu13==$1 into $2/wheel"
    mkdir -p "$2/wheel"
    download "nvidia-nccl-cu13==$1" "$2/wheel"
  fi
}

for v in "${versions[@]}"; do
  dir="$root/$v"
  if [ -f "$dir/.complete" ]; then
    if device_library_missing "$dir"; then
      # Extracted by an older version of this script: add the device library only.
      echo "nccl $v: extracting the device library into $dir"
      fetch_wheel "$v" "$dir"
      extract "$dir"/wheel/*.whl "$dir" "$DEVICE_LIBRARY"
      test -f "$dir/$DEVICE_LIBRARY" || { echo "no device library in the $v wheel" >&2; exit 1; }
    else
      echo "nccl $v: cached in $dir"
    fi
    continue
  fi
  fetch_wheel "$v" "$dir"
  rm -rf "$dir/nvidia"
  extract "$dir"/wheel/*.whl "$dir" nvidia/nccl/include/ nvidia/nccl/lib/libnccl.so \
    "$DEVICE_LIBRARY"
  test -f "$dir/nvidia/nccl/include/nccl.h" || { echo "no nccl.h in the $v wheel" >&2; exit 1; }
  touch "$dir/.complete"
done

# nvJitLink for the device libraries, when a fetched release has one (see the header).
wants_nvjitlink=0
for v in "${versions[@]}"; do
  [ -f "$root/$v/$DEVICE_LIBRARY" ] && wants_nvjitlink=1
done
if [ "$wants_nvjitlink" -eq 1 ]; then
  dir="$root/nvjitlink-$NEW_NVJITLINK"
  if [ -f "$dir/.complete" ]; then
    echo "nvJitLink $NEW_NVJITLINK: cached in $dir"
  else
    echo "nvJitLink $NEW_NVJITLINK: downloading into $dir/wheel"
    mkdir -p "$dir/wheel"
    ls "$dir"/wheel/*.whl >/dev/null 2>&1 || download "nvidia-nvjitlink==$NEW_NVJITLINK" "$dir/wheel"
    extract "$dir"/wheel/*.whl "$dir" nvidia/cu13/lib/libnvJitLink.so
    test -f "$dir/nvidia/cu13/lib/libnvJitLink.so.13" || { echo "no libnvJitLink.so.13 in the wheel" >&2; exit 1; }
    touch "$dir/.complete"
  fi
fi

if [ "$cuda_headers" -eq 1 ]; then
  dir="$root/cuda-13.0"
  if [ -f "$dir/.complete" ]; then
    echo "CUDA headers: cached in $dir"
  else
    echo "CUDA headers: downloading ${CUDA_HEADER_WHEELS[*]} into $dir/wheel"
    mkdir -p "$dir/wheel"
    for w in "${CUDA_HEADER_WHEELS[@]}"; do download "$w" "$dir/wheel"; done
    rm -rf "$dir/nvidia"
    for whl in "$dir"/wheel/*.whl; do
      extract "$whl" "$dir" nvidia/cu13/include/ nvidia/cu13/lib/libcudart_static.a \
        nvidia/cu13/lib/libcudadevrt.a
    done
    touch "$dir/.complete"
  fi
fi
