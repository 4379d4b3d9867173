#!/usr/bin/env bash
# npm run bench:snap32 — on the GPU machine: SnapDeals (EmptySectorUpdate) at 32 GiB through the daemon
# (bench/snap32.ts: synth-snap, shape and witness program, development setup + SRS upload, proofs back to back), with
# the device's memory sampled by nvidia-smi beside it (peak device memory) and the disk and memory
# of the machine printed first. Arguments go to bench/snap32.js (e.g. --proofs 2 --sector-size 32GiB).
# KILN_BENCH_DIR: where the vanilla files, the shape cache and the development parameters (~30 GB for snap-32g) go
# (default /tmp/kiln-snap32). Logs go to $OUT when set.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-bench32.sh" snap32 65536 /tmp/kiln-snap32 "$@"
