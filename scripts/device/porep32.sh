#!/usr/bin/env bash
# npm run bench:porep32 — on the GPU machine: a 32 GiB PoRep C2 end to end through the daemon
# (bench/porep32.ts: synth-c1, shape, development setup + SRS upload, proofs back to back), with
# the device's memory sampled by nvidia-smi beside it (peak device memory) and the disk and memory
# of the machine printed first. Arguments go to bench/porep32.js (e.g. --proofs 3 --sector-size 32GiB).
# KILN_BENCH_DIR: where the C1, the shape cache and the ~47 GB of development parameters go
# (default /tmp/kiln-porep32). Logs go to $OUT when set.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bash scripts/device/prepare-run.sh
out="${OUT:-/tmp}"
dir="${KILN_BENCH_DIR:-/tmp/kiln-porep32}"
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
node --max-old-space-size=16384 dist/bench/porep32.js --dir "$dir" --md "$out/results.md" "$@" 2>&1 | tee "$out/porep32.log"
rc=${PIPESTATUS[0]}
set -e
if [ -n "$smi" ]; then
  kill "$smi" 2>/dev/null || true
  peak=$(sort -n "$out/gpu-mem.csv" | tail -1)
  echo "peak device memory (nvidia-smi, sampled every 0.5 s): ${peak} MiB" | tee -a "$out/porep32.log"
  printf '\n- peak device memory (nvidia-smi, sampled every 0.5 s): %s MiB\n' "$peak" >> "$out/results.md"
fi
exit "$rc"
