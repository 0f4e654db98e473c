#!/usr/bin/env bash
# CI smoke run of the fleet replay: a short trace of two worlds and of a
# queue world (the ideal-forecasts policy too) completes, the tables name
# every policy, the verdict is printed, and the service refuses none of the
# run records of these honest agents (one world reports as placement-agent
# does, the other each attempt apart). No timing or ratio is asserted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$("$here/replay.sh" --jobs 8 --queue-policies ideal-forecasts \
  "$here/worlds/flaky-pool-agent.json" "$here/worlds/memory-above-prior.json" \
  "$here/worlds/queues-busy.json")
echo "$out"
for policy in "service, time-aware" "service, time-blind (today)" \
  "oracle (knows the queues)" "service, ideal start forecasts"; do
  if ! grep -qF "| queues-busy | $policy |" <<<"$out"; then
    echo "FAIL: no row for queues-busy / $policy" >&2
    exit 1
  fi
done
for policy in "service, bake-offs run" "service, rank 1 only" \
  "list price x est. time" "internal rate x prior" "hindsight oracle"; do
  for world in flaky-pool-agent memory-above-prior; do
    if ! grep -qF "| $world | $policy |" <<<"$out"; then
      echo "FAIL: no row for $world / $policy" >&2
      exit 1
    fi
  done
done
# The first table's "run records / with retries / refused" column: the 11th
# cell of a row.
refused=$(awk -F'|' '/^\| (flaky-pool-agent|memory-above-prior) \| .* \| [0-9.]+ \|$/ {
  if ($12 !~ / 0 *$/) print $2 $3 $12 }' <<<"$out")
if [ -n "$refused" ]; then
  echo "FAIL: honest run records refused: $refused" >&2
  exit 1
fi
if ! grep -q "^Overall: as advised / oracle" <<<"$out"; then
  echo "FAIL: no verdict" >&2
  exit 1
fi
echo "fleet replay smoke: every policy reported, no honest record refused"
