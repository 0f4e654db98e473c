#!/usr/bin/env bash
# CI smoke run of the fleet replay: a short trace of two worlds completes
# and the table names every policy. No timing or ratio is asserted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$("$here/replay.sh" --jobs 8 "$here/worlds/flaky-pool.json" \
  "$here/worlds/memory-above-prior.json")
echo "$out"
for policy in "service, bake-offs run" "service, rank 1 only" \
  "list price x est. time" "internal rate x prior" "hindsight oracle"; do
  for world in flaky-pool memory-above-prior; do
    if ! grep -qF "| $world | $policy |" <<<"$out"; then
      echo "FAIL: no row for $world / $policy" >&2
      exit 1
    fi
  done
done
echo "fleet replay smoke: every policy reported"
