#!/usr/bin/env bash
# Builds native/cuda/.build/gpu-hold from native/cuda/tools/gpu-hold.cu with nvcc: the tool that holds all
# but N GiB of a GPU, as a stand-in for a 16/24 GiB card (run-bench32.sh starts it when KILN_GPU_LEAVE_GIB
# is set). Standalone (no kiln headers), the CUDA runtime linked statically; a few seconds to compile.
# build-cuda.sh --check compiles it too (the CI compile check).
#   --if-available   exit 0 with a message when nvcc is absent
# Environment: KILN_CUDA_ARCH (default "90"; e.g. "80 89 90"), NVCC (default nvcc),
#              GPU_HOLD_OUT (the binary; default native/cuda/.build/gpu-hold).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if_available=0
for a in "$@"; do
  case "$a" in
    --if-available) if_available=1 ;;
    *) echo "build-gpu-hold: unknown option $a" >&2; exit 2 ;;
  esac
done
source scripts/device/nvcc-env.sh
nvcc_or_exit build-gpu-hold "$if_available" "gpu-hold is not built (carry native/cuda/.build/gpu-hold instead)"
out="${GPU_HOLD_OUT:-native/cuda/.build/gpu-hold}"
mkdir -p "$(dirname "$out")"
"$NVCC" -O2 -std=c++17 -cudart static "${gencode[@]}" -o "$out" native/cuda/tools/gpu-hold.cu
echo "build-gpu-hold: built $out (arch $arch)"
