#!/usr/bin/env bash
# The one runner of the 32 GiB device benches (porep32.sh, post32.sh, snap32.sh call it): on the GPU
# machine, prints the machine's memory and disk, samples the device's memory with nvidia-smi beside the
# bench (peak device memory: of the whole device, and of the bench process alone), and runs
# `node --max-old-space-size=HEAP dist/bench/NAME.js --dir DIR --md $OUT/results.md ARGS…`, logging to
# $OUT/NAME.log.
#   run-bench32.sh NAME HEAP_MB DEFAULT_DIR [ARGS…]    (KILN_BENCH_DIR overrides DEFAULT_DIR)
#
# A smaller card (proofs on 16-24 GiB GPUs): with KILN_GPU_LEAVE_GIB=N, native/cuda/.build/gpu-hold
# (scripts/device/build-gpu-hold.sh; built here when missing and nvcc is there) holds all but N GiB of
# device 0 while the bench runs, and its line goes to the log and results.md. Only the memory is that of
# a small card: bandwidth, SM count and clocks stay the big GPU's. The development setup (made once, when
# the parameters are missing) wants the whole GPU: make them first with --keep, then prove with the memory
# held (same KILN_BENCH_DIR), e.g.
#   bash scripts/device/snap32.sh --proofs 0 --keep       (porep32.sh too)
#   KILN_GPU_LEAVE_GIB=24 bash scripts/device/snap32.sh --proofs 2 --keep
# N GiB is what the bench finds free before its own CUDA context, as on an idle card (gpu-hold's context
# is outside it); an idle "24 GB" card has a little under 24 GiB free, so N = 24 is if anything generous.
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

# Background processes (gpu-hold, the nvidia-smi samplers, the bench and its tee): stopped on any exit.
hold="" held_line="" smi="" apps="" node_pid="" tee_pid="" fifo="" used_before="" peak=""
stop() {
  local p
  for p in "$node_pid" "$smi" "$apps" "$hold"; do
    if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; fi
  done
  node_pid="" smi="" apps="" hold=""
  [ -z "$tee_pid" ] || wait "$tee_pid" 2>/dev/null || true
  tee_pid=""
  [ -z "$fifo" ] || rm -f "$fifo"
  fifo=""
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# All but KILN_GPU_LEAVE_GIB GiB of the device held by gpu-hold (it prints one line once the memory is held).
if [ -n "${KILN_GPU_LEAVE_GIB:-}" ]; then
  tool=native/cuda/.build/gpu-hold
  [ -f "$tool" ] && [ ! -x "$tool" ] && chmod +x "$tool"
  [ -x "$tool" ] || bash scripts/device/build-gpu-hold.sh
  "$tool" --leave "$KILN_GPU_LEAVE_GIB" > "$out/gpu-hold.out" 2> "$out/gpu-hold.err" &
  hold=$!
  deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    grep -q '^gpu-hold:' "$out/gpu-hold.out" 2>/dev/null && break
    if ! kill -0 "$hold" 2>/dev/null; then
      rc=0; wait "$hold" || rc=$?; hold=""
      echo "run-bench32: gpu-hold failed (exit $rc): $(cat "$out/gpu-hold.err")" >&2
      exit 1
    fi
    sleep 0.1
  done
  held_line=$(grep -m1 '^gpu-hold:' "$out/gpu-hold.out" || true)
  if [ -z "$held_line" ]; then
    echo "run-bench32: gpu-hold printed no line within 60 s: $(cat "$out/gpu-hold.err")" >&2
    exit 1
  fi
  echo "$held_line"
  printf '\n- GPU memory held by gpu-hold: %s\n' "$held_line" >> "$out/results.md"
fi

if command -v nvidia-smi >/dev/null 2>&1; then
  used_before=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | sort -n | tail -1 || true)
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 > "$out/gpu-mem.csv" 2>/dev/null &
  smi=$!
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -lms 500 > "$out/gpu-apps.csv" 2>/dev/null &
  apps=$!
fi
# The bench in the background, its output through a fifo to tee: $! is node's own pid (for the
# compute-apps sampling), and the log is complete once tee is waited for.
fifo=$(mktemp -u "${TMPDIR:-/tmp}/kiln-bench32.XXXXXX")
mkfifo "$fifo"
printf '%s' "${held_line:+$held_line$'\n'}" > "$out/$name.log"   # the log starts with gpu-hold's line
tee -a "$out/$name.log" < "$fifo" &
tee_pid=$!
node --max-old-space-size="$heap" "dist/bench/$name.js" --dir "$dir" --md "$out/results.md" "$@" > "$fifo" 2>&1 &
node_pid=$!
bench_pid=$node_pid
rc=0
wait "$node_pid" || rc=$?
node_pid=""
wait "$tee_pid" || true
tee_pid=""
if [ -n "$smi" ]; then
  kill "$smi" "$apps" 2>/dev/null || true
  wait "$smi" "$apps" 2>/dev/null || true
  smi="" apps=""
  peak=$(sort -n "$out/gpu-mem.csv" | tail -1)
  echo "peak device memory (nvidia-smi, sampled every 0.5 s): ${peak} MiB" | tee -a "$out/$name.log"
  printf '\n- peak device memory (nvidia-smi, sampled every 0.5 s): %s MiB\n' "$peak" >> "$out/results.md"
  # The bench process alone (without gpu-hold and anything else on the device). nvidia-smi lists the
  # PIDs of the host's namespace: in a container node's pid may not appear; the whole-device peak less
  # the memory used just before the bench is given instead.
  own=$(awk -F', *' -v p="$bench_pid" '$1 == p && $2 + 0 > m { m = $2 + 0 } END { if (m > 0) print m }' "$out/gpu-apps.csv")
  line="peak device memory of the bench process (nvidia-smi compute-apps, every 0.5 s):"
  if [ -n "$own" ]; then
    line="$line $own MiB"
  elif [[ "$peak" =~ ^[0-9]+$ && "$used_before" =~ ^[0-9]+$ ]]; then
    line="$line pid $bench_pid not listed; whole-device peak less the $used_before MiB used before the bench: $(( peak - used_before )) MiB"
  else
    line="$line pid $bench_pid not listed"
  fi
  echo "$line" | tee -a "$out/$name.log"
  printf -- '- %s\n' "$line" >> "$out/results.md"
fi
stop
exit "$rc"
