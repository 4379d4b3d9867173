#!/usr/bin/env bash
# npm run bench:snap32 — on the GPU machine: SnapDeals (EmptySectorUpdate) at 32 GiB through the daemon
# (bench/snap32.ts: synth-snap, shape and witness program, development setup + SRS upload, proofs back to back), with
# the device's memory sampled by nvidia-smi beside it (peak device memory) and the disk and memory
# of the machine printed first. Arguments go to bench/snap32.js (e.g. --proofs 2 --sector-size 32GiB).
# KILN_BENCH_DIR: where the vanilla files, the shape cache and the development parameters (~30 GB for snap-32g) go
# (default /tmp/kiln-snap32). Logs go to $OUT when set.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bash scripts/device/prepare-run.sh
out="${OUT:-/tmp}"
dir="${KILN_BENCH_DIR:-/tmp/kiln-snap32}"
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
node --max-old-space-size=65536 dist/bench/snap32.js --dir "$dir" --md "$out/results.md" "$@" 2>&1 | tee "$out/snap32.log"
rc=${PIPESTATUS[0]}
set -e
if [ -n "$smi" ]; then
  kill "$smi" 2>/dev/null || true
  peak=$(sort -n "$out/gpu-mem.csv" | tail -1)
  echo "peak device memory (nvidia-smi, sampled every 0.5 s): ${peak} MiB" | tee -a "$out/snap32.log"
  printf '\n- peak device memory (nvidia-smi, sampled every 0.5 s): %s MiB\n' "$peak" >> "$out/results.md"
fi
exit "$rc"
