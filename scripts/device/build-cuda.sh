#!/usr/bin/env bash
# Builds the CUDA addon build/cuda/kiln_cuda.node from native/cuda/ with nvcc (npm run build:cuda).
# Separate from the CPU addon: `npm ci` never needs nvcc.
#   --if-available   exit 0 with a message when nvcc is absent (CI compile check)
#   --check          compile the objects only, do not link (a CI compile check; ~10 min on 2 cores,
#                    the G2 unit dominates). addon.cpp needs node_api.h (KILN_NAPI_INCLUDE or Node's own)
#                    and node-addon-api's napi.h (the shared glue native/napi/glue.hpp; header only);
#                    also builds the gpu-hold tool (scripts/device/build-gpu-hold.sh, a few seconds)
# Environment: KILN_CUDA_ARCH (default "90"; e.g. "80 89 90" for several targets),
#              KILN_CUDA_DEFINES (extra nvcc flags, e.g. "-DKILN_CUDA_MUL=2"; with it, or with
#              KILN_CUDA_BUILD_DIR, the build goes to that folder only, for A/B comparisons),
#              KILN_NAPI_INCLUDE (directory of node_api.h; default: this Node's include/node),
#              KILN_NAA_INCLUDE (directory of node-addon-api's napi.h; default: the one in node_modules),
#              NVCC (default nvcc), JOBS (parallel compiles, default nproc).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if_available=0
check_only=0
for a in "$@"; do
  case "$a" in
    --if-available) if_available=1 ;;
    --check) check_only=1 ;;
    *) echo "build-cuda: unknown option $a" >&2; exit 2 ;;
  esac
done
source scripts/device/nvcc-env.sh
nvcc_or_exit build-cuda "$if_available" "the CUDA backend is not built (the CPU backend is unaffected)"
napi="${KILN_NAPI_INCLUDE:-}"
if [ -z "$napi" ] && command -v node >/dev/null 2>&1; then
  napi="$(node -p "require('path').join(process.config.variables.node_prefix || '/usr', 'include', 'node')")"
fi
[ -f "$napi/node_api.h" ] || napi=/usr/include/node
if [ ! -f "$napi/node_api.h" ]; then
  echo "build-cuda: node_api.h not found (set KILN_NAPI_INCLUDE)" >&2
  exit 1
fi
naa="${KILN_NAA_INCLUDE:-}"
if [ -z "$naa" ] && command -v node >/dev/null 2>&1; then
  naa="$(node -p "require('node-addon-api').include_dir" 2>/dev/null || true)"
fi
[ -f "$naa/napi.h" ] || naa=node_modules/node-addon-api
if [ ! -f "$naa/napi.h" ]; then
  echo "build-cuda: node-addon-api not found (npm ci, or set KILN_NAA_INCLUDE)" >&2
  exit 1
fi
# Objects and the addon are built in native/cuda/.build/ (ignored): `node-gyp rebuild` (npm ci,
# npm install) deletes build/, and the units take ~10 min to compile. The addon is then copied to
# build/cuda/kiln_cuda.node, where src/backend/cuda.ts looks first (then in native/cuda/.build/).
defines="${KILN_CUDA_DEFINES:-}"
obj="${KILN_CUDA_BUILD_DIR:-native/cuda/.build}"
mkdir -p "$obj" build/cuda
out=$obj/kiln_cuda.node
final=build/cuda/kiln_cuda.node
[ "$obj" = native/cuda/.build ] && [ -z "$defines" ] || final="$out"
# The nvcc units, by role: msm_g1/msm_g2 (MSM drivers, the G2 one dominates), msm (MSM entry points),
# device (probe, contexts), ntt, csr, pinned (host memory), upload (the SRS streamed in chunks),
# bench, partition (whole proofs), setup (the INSECURE development setup).
units=(msm_g1 msm_g2 msm device ntt csr pinned upload bench partition setup)
# Every unit's object is there and none is newer than the addon (a build folder copied from a
# checkout without a newer unit is not up to date).
objects_linked() {
  local f
  for f in "${units[@]}" host addon; do [ -f "$obj/$f.o" ] && [ ! "$obj/$f.o" -nt "$out" ] || return 1; done
}
# Up to date? (every source and header older than the addon, same arch, every object linked)
stamp="$obj/arch.txt"
arch_key="$arch${defines:+ $defines}"
if [ -f "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$arch_key" ] && [ "$check_only" = 0 ] && objects_linked &&
   [ -z "$(find native/cuda native/napi native/src/ff native/src/ec native/src/util -newer "$out" -type f -not -path "*/.build*" | head -1)" ]; then
  [ "$out" = "$final" ] || cp -f "$out" "$final"
  echo "build-cuda: $out is up to date (at $final)"
  exit 0
fi
common=(-std=c++17 -O3 -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -DNAPI_VERSION=8 -DNODE_GYP_MODULE_NAME=kiln_cuda $defines)
t0=$(date +%s)
# An object is rebuilt when its source, any header it may include, or the arch changed
# (the G2 unit alone takes ~10 min on one core, so unchanged units are kept).
# The headers of a unit come from its dependency file (written by -MMD at the last compile); without
# one, every header counts.
stale() {
  local o="$obj/$1.o" d="$obj/$1.d"
  [ "$(cat "$stamp" 2>/dev/null)" = "$arch_key" ] || return 0
  [ -f "$o" ] || return 0
  [ "native/cuda/$2" -nt "$o" ] && return 0
  if [ -f "$d" ]; then
    local f
    for f in $(sed -e 's/\\$//' -e 's/^[^:]*://' "$d"); do
      [ -f "$f" ] && [ "$f" -nt "$o" ] && return 0
    done
    return 1
  fi
  [ -n "$(find native/cuda native/napi native/src/ff native/src/ec native/src/util \( -name '*.cuh' -o -name '*.hpp' \) -newer "$o" | head -1)" ]
}
pids=()
for f in "${units[@]}"; do
  if stale "$f" "$f.cu"; then
    "$NVCC" "${common[@]}" "${gencode[@]}" -MMD -MF "$obj/$f.d" -c "native/cuda/$f.cu" -o "$obj/$f.o" &
    pids+=($!)
  fi
done
if stale host host.cpp; then
  g++ -std=c++17 -O2 -fPIC -fvisibility=hidden -MMD -MF "$obj/host.d" -c native/cuda/host.cpp -o "$obj/host.o" &
  pids+=($!)
fi
if stale addon addon.cpp; then
  g++ -std=c++17 -O2 -fPIC -fvisibility=hidden -fexceptions -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS \
    -DNODE_ADDON_API_CPP_EXCEPTIONS_ALL -DNODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS -DNODE_GYP_MODULE_NAME=kiln_cuda -I"$napi" -I"$naa" \
    -MMD -MF "$obj/addon.d" -c native/cuda/addon.cpp -o "$obj/addon.o" &
  pids+=($!)
fi
fail=0
for p in "${pids[@]+"${pids[@]}"}"; do wait "$p" || fail=1; done
if [ "$fail" != 0 ]; then echo "build-cuda: compilation failed" >&2; exit 1; fi
if [ "$check_only" = 1 ]; then
  echo "$arch_key" > "$stamp"
  NVCC="$NVCC" GPU_HOLD_OUT="$obj/gpu-hold" bash scripts/device/build-gpu-hold.sh
  echo "build-cuda: objects compiled (arch $arch) in $(( $(date +%s) - t0 )) s"
  exit 0
fi
echo "$arch_key" > "$stamp"
objs=()
for f in "${units[@]}" host addon; do objs+=("$obj/$f.o"); done
"$NVCC" -shared "${gencode[@]}" -o "$out" "${objs[@]}" -Xcompiler -fvisibility=hidden
[ "$out" = "$final" ] || cp -f "$out" "$final"
echo "build-cuda: built $final (arch $arch) in $(( $(date +%s) - t0 )) s"
