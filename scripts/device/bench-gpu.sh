#!/usr/bin/env bash
# npm run bench:gpu — builds what is needed (see prepare-run.sh), then node dist/bench/gpu.js "$@".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bash scripts/device/prepare-run.sh
node dist/bench/gpu.js "$@" 2>&1 | tee "${OUT:-/tmp}/bench-gpu.log"
