#!/usr/bin/env bash
# npm run bench:mixed — on the GPU machine: a storage provider's mixed load at 32 GiB through the daemon
# (bench/mixed.ts: PoRep proofs back to back, WinningPoSt at random moments, a WindowPoSt deadline of several
# partitions; latency percentiles per kind, PoRep throughput against PoRep alone, the answer order), with the
# device's memory sampled by nvidia-smi beside it and the disk and memory of the machine printed first.
# Arguments go to bench/mixed.js. KILN_BENCH_DIR: where the inputs, the porep shape cache and the development
# parameters go (default /tmp/kiln-mixed): porep-32g's 47 GB + wpost-32g's 61 GB + the 7.6 GB porep shape, so
# ~120 GB of disk (more than the single H200's 64 GiB). Logs go to $OUT when set. Two calls on one warm machine:
#   bash scripts/device/mixed.sh --prepare                  (synthetic inputs, shapes, parameters: ~5 min)
#   bash scripts/device/mixed.sh --minutes 3 --keep         (PoRep alone, then 3 minutes of the mix)
set -euo pipefail
# wpost-32g's ~7 GB shape stays in memory rather than on the disk (as bench:post32)
export KILN_POST_SHAPE_CACHE="${KILN_POST_SHAPE_CACHE:-0}"
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-bench32.sh" mixed 16384 /tmp/kiln-mixed "$@"
