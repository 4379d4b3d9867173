#!/usr/bin/env bash
# npm run bench:post32 — on the GPU machine: WindowPoSt + WinningPoSt at 32 GiB through the daemon
# (bench/post32.ts: synth-post, shapes, development setup + SRS upload, proofs back to back), with
# the device's memory sampled by nvidia-smi beside it (peak device memory) and the disk and memory
# of the machine printed first. Arguments go to bench/post32.js (e.g. --window 2 --winning 3 --sector-size 32GiB).
# KILN_BENCH_DIR: where the vanilla files, the shape cache and the ~61 GB of development parameters go
# (default /tmp/kiln-post32). Logs go to $OUT when set.
set -euo pipefail
# wpost-32g's development parameters are ~61 GB: on the lent H200's 64 GiB disk its ~7 GB shape stays in memory
export KILN_POST_SHAPE_CACHE="${KILN_POST_SHAPE_CACHE:-0}"
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-bench32.sh" post32 16384 /tmp/kiln-post32 "$@"
