#!/usr/bin/env bash
# Shared by test-gpu.sh and bench-gpu.sh: makes sure the addons and the JS runtime pieces are there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
# The production node_modules when absent (the GPU machine has no npm): carried as
# .device/node_modules.tar.xz (make it with `bash scripts/device/pack-modules.sh`, ~3 MB) or as a
# plain .device/node_modules folder.
if [ ! -d node_modules/@noble/curves ]; then
  if [ -f .device/node_modules.tar.xz ]; then
    tar -xJf .device/node_modules.tar.xz
  elif [ -d .device/node_modules ]; then
    mkdir -p node_modules
    cp -r .device/node_modules/. node_modules/
  fi
fi
if [ ! -f dist/src/backend/cuda.js ]; then
  if command -v npx >/dev/null 2>&1; then npx tsc -p .; else echo "dist/ missing: run npx tsc -p . and carry dist" >&2; exit 1; fi
fi
# The CUDA addon: a carried build that loads here is used as is (KILN_CUDA_REBUILD=1 forces
# build-cuda.sh's up-to-date check; copies to the GPU machine get fresh mtimes, and the G2 unit
# takes ~10 min to compile on one core).
if [ ! -f build/cuda/kiln_cuda.node ] && [ -f native/cuda/.build/kiln_cuda.node ]; then
  mkdir -p build/cuda && cp native/cuda/.build/kiln_cuda.node build/cuda/
fi
if [ "${KILN_CUDA_REBUILD:-0}" = 1 ] || ! node -e "require('./build/cuda/kiln_cuda.node')" 2>/dev/null; then
  echo "building the CUDA addon here (~10 min: carry native/cuda/.build/kiln_cuda.node to avoid this)"
  rm -f build/cuda/kiln_cuda.node native/cuda/.build/kiln_cuda.node
  bash scripts/device/build-cuda.sh
fi
# The CPU addon (for the comparisons): built here with g++ if it does not load.
if ! node -e "require('./build/Release/kiln_native.node')" 2>/dev/null; then
  napi="${KILN_NAPI_INCLUDE:-$(node -p "require('path').join(process.config.variables.node_prefix || '/usr', 'include', 'node')")}"
  naa="$(node -p "require('node-addon-api').include_dir" 2>/dev/null || echo node_modules/node-addon-api)"
  mkdir -p build/Release
  flags=$(node native/src/tools/cpu-flags.cjs)
  ifma=$(node native/src/tools/cpu-flags.cjs --ifma)
  echo "building the CPU addon with g++ ($flags${ifma:+; IFMA units: $ifma})"
  # The AVX-512 IFMA units (binding.gyp's kiln_ifma) alone get the IFMA flags; empty without them.
  objs=()
  if [ -n "$ifma" ]; then
    mkdir -p build/Release/obj.ifma
    for f in kernels_ifma kernels_fr_ifma; do
      g++ -O3 -std=gnu++17 -fPIC -pthread -fexceptions -Wno-maybe-uninitialized $flags $ifma -Inative/src \
        -c "native/src/$f.cpp" -o "build/Release/obj.ifma/$f.o"
      objs+=("build/Release/obj.ifma/$f.o")
    done
  fi
  g++ -O3 -std=gnu++17 -fPIC -shared -pthread -fexceptions $flags -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS \
    -DNODE_ADDON_API_CPP_EXCEPTIONS_ALL '-DKILN_VERSION="0.1.0"' -DNODE_GYP_MODULE_NAME=kiln_native \
    -I"$napi" -I"$naa" -Inative/src native/src/addon.cpp native/src/kernels_ec.cpp native/src/kernels_fr.cpp native/src/params/reader.cpp \
    "${objs[@]+"${objs[@]}"}" -o build/Release/kiln_native.node
fi
