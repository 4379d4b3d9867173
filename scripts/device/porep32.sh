#!/usr/bin/env bash
# npm run bench:porep32 — on the GPU machine: a 32 GiB PoRep C2 end to end through the daemon
# (bench/porep32.ts: synth-c1, shape, development setup + SRS upload, proofs back to back), with
# the device's memory sampled by nvidia-smi beside it (peak device memory) and the disk and memory
# of the machine printed first. Arguments go to bench/porep32.js (e.g. --proofs 3 --sector-size 32GiB).
# KILN_BENCH_DIR: where the C1, the shape cache and the ~47 GB of development parameters go
# (default /tmp/kiln-porep32). Logs go to $OUT when set.
# At 24 or 16 GiB free (a stand-in for a smaller card): KILN_GPU_LEAVE_GIB=N holds all but N GiB
# of the GPU with native/cuda/.build/gpu-hold while the bench runs (run-bench32.sh). The development setup
# wants the whole GPU, so make the parameters first and keep them:
#   bash scripts/device/porep32.sh --proofs 0 --keep
#   KILN_GPU_LEAVE_GIB=24 bash scripts/device/porep32.sh --proofs 5 --keep    (then 16)
# NI-PoRep (registered proof 18/19, 126 partitions of the same circuit, docs/ni-porep.md): add --ni, e.g.
#   bash scripts/device/porep32.sh --ni --proofs 1 --keep
# (the same parameters as the interactive run in the same KILN_BENCH_DIR; its synthetic C1 is 649 MB wrapped,
# made once into the directory, and proved with INSECURE stated challenges, in process: see bench/porep32.ts)
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-bench32.sh" porep32 16384 /tmp/kiln-porep32 "$@"
