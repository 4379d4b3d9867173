# Sourced by build-cuda.sh and build-gpu-hold.sh: finds nvcc and sets the target flags.
#   nvcc_or_exit NAME IF_AVAILABLE WHAT-THEN
# NVCC (default nvcc on the PATH, else /usr/local/cuda/bin/nvcc); without one: "NAME: nvcc not found;
# WHAT-THEN", then exit 0 when IF_AVAILABLE is 1, else 1. Sets NVCC, arch (KILN_CUDA_ARCH, default "90";
# e.g. "80 89 90") and gencode (the nvcc -gencode flags of arch).
nvcc_or_exit() {
  NVCC="${NVCC:-nvcc}"
  if ! command -v "$NVCC" >/dev/null 2>&1; then
    [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
  fi
  if ! command -v "$NVCC" >/dev/null 2>&1; then
    echo "$1: nvcc not found; $3"
    [ "$2" = 1 ] && exit 0
    exit 1
  fi
  arch="${KILN_CUDA_ARCH:-90}"
  gencode=()
  local a
  for a in $arch; do gencode+=("-gencode=arch=compute_$a,code=sm_$a"); done
}
