#!/usr/bin/env bash
# A bounded burst far above PlacePlan's capacity: first the closed-loop
# throughput with 16 clients, then BURST_CLIENTS clients for 20 s with a
# DEADLINE_MS deadline, then 16 clients again. Prints what was answered and
# refused (and how), placementd's peak RSS, and whether latency came back;
# then goodput (plans answered in time per second during the burst) over the
# closed-loop capacity measured first, and RSS after over RSS before.
# placementd refuses what it cannot answer in time (RESOURCE_EXHAUSTED) and
# the burst's clients back off on it (plan_load --backoff_ms).
#
#   bench/overload.sh [RUNS] [BURST_CLIENTS] [DEADLINE_MS]
#   (defaults: 20000 runs over 50 pools, 480 clients, 50 ms)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=${1:-20000}
burst_clients=${2:-480}
deadline_ms=${3:-50}
build=${PLACEMENT_BUILD:-build/release}  # an existing build: skip building
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi
source bench/lib.sh
start_placementd
"$build/bench/plan_load" seed --server "$server" --pools 50 --runs "$runs" --clients 8
sleep 1

echo "== before: 16 clients, 10 s"
"$build/bench/plan_load" load --server "$server" --rpc plan --clients 16 --seconds 10 |
  tee "$work/before.txt" || true
rss_before=$(rss_kb)
echo "rss_before_kb=$rss_before"

echo "== burst: $burst_clients clients, 20 s, $deadline_ms ms deadline"
peak=0
( while kill -0 "$pid" 2>/dev/null; do r=$(rss_kb); [ "$r" -gt "$peak" ] && peak=$r && echo "$peak" >"$work/peak"; sleep 0.2; done ) &
sampler=$!
"$build/bench/plan_load" load --server "$server" --rpc plan --clients "$burst_clients" \
  --seconds 20 --deadline_ms "$deadline_ms" | tee "$work/burst.txt" || true
kill "$sampler" 2>/dev/null || true
echo "rss_peak_during_burst_kb=$(cat "$work/peak" 2>/dev/null || rss_kb) vm_hwm_kb=$(hwm_kb)"

echo "== after: 16 clients, 10 s"
"$build/bench/plan_load" load --server "$server" --rpc plan --clients 16 --seconds 10 || true
rss_after=$(rss_kb)
echo "rss_after_kb=$rss_after"
calls_per_s() { sed -n 's/.* calls_per_s=\([0-9]*\) .*/\1/p' "$1" | head -1; }
awk -v b="$(calls_per_s "$work/before.txt")" -v g="$(calls_per_s "$work/burst.txt")" \
  -v r0="$rss_before" -v r1="$rss_after" 'BEGIN {
    printf "goodput_ratio=%.2f (burst %d / capacity %d plans/s; target >= 0.5) ", g / b, g, b
    printf "rss_after/before=%.2f (target <= 1.5)\n", r1 / r0 }'
kill -0 "$pid" && echo "placementd still running"
