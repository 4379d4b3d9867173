#!/usr/bin/env bash
# Packs the production dependencies (npm ls --omit=dev) into .device/node_modules.tar.xz, which
# prepare-run.sh unpacks on the GPU machine (no npm there). Run after `npm ci` and
# ../shared/device/prepare.sh; carry ".device" in the run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm ls --omit=dev --parseable --all 2>/dev/null | tail -n +2 | sed "s|^$root/||" | sort -u | while read -r p; do
  mkdir -p "$tmp/$(dirname "$p")"
  cp -r "$p" "$tmp/$(dirname "$p")/"
done
mkdir -p .device
tar -C "$tmp" -cJf .device/node_modules.tar.xz node_modules
echo "packed $(du -sh "$tmp/node_modules" | cut -f1) of production modules into .device/node_modules.tar.xz ($(du -h .device/node_modules.tar.xz | cut -f1))"
