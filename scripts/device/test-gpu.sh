#!/usr/bin/env bash
# npm run test:gpu — on the GPU machine, in one call: builds the CUDA addon (nvcc) and, when absent,
# the CPU addon (g++ against the Node-API headers; the GPU machine has no npm), then runs the GPU
# tests (CPU twin comparisons + a DemoCircuit 2^16 proof). Needs dist/ (npx tsc -p . here, or carried)
# and @noble/* under node_modules (carried in .device/node_modules when node_modules is absent).
# Output is also written to $OUT/test-gpu.log when OUT is set.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bash scripts/device/prepare-run.sh
log="${OUT:-/tmp}/test-gpu.log"
set +e
node --test --test-concurrency=1 --test-reporter=spec dist/test/gpu/ 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
exit "$rc"
