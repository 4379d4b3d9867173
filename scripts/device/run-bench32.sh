#!/usr/bin/env bash
# The one runner of the 32 GiB device benches (porep32.sh, post32.sh, snap32.sh call it): on the GPU
# machine, prints the machine's memory and disk, samples the device's memory with nvidia-smi beside the
# bench (peak device memory), and runs `node --max-old-space-size=HEAP dist/bench/NAME.js --dir DIR --md
# $OUT/results.md ARGS…`, logging to $OUT/NAME.log.
#   run-bench32.sh NAME HEAP_MB DEFAULT_DIR [ARGS…]    (KILN_BENCH_DIR overrides DEFAULT_DIR)
set -euo pipefail
name="$1" heap="$2" default_dir="$3"
shift 3
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bash scripts/device/prepare-run.sh
out="${OUT:-/tmp}"
dir="${KILN_BENCH_DIR:-$default_dir}"
mkdir -p "$dir"
echo "== machine: $(nproc) cores; memory and disk:"
free -g | head -2
df -h "$dir" / /dev/shm 2>/dev/null || true
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader || true
smi=""
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 > "$out/gpu-mem.csv" 2>/dev/null &
  smi=$!
fi
set +e
node --max-old-space-size="$heap" "dist/bench/$name.js" --dir "$dir" --md "$out/results.md" "$@" 2>&1 | tee "$out/$name.log"
rc=${PIPESTATUS[0]}
set -e
if [ -n "$smi" ]; then
  kill "$smi" 2>/dev/null || true
  peak=$(sort -n "$out/gpu-mem.csv" | tail -1)
  echo "peak device memory (nvidia-smi, sampled every 0.5 s): ${peak} MiB" | tee -a "$out/$name.log"
  printf '\n- peak device memory (nvidia-smi, sampled every 0.5 s): %s MiB\n' "$peak" >> "$out/results.md"
fi
exit "$rc"
