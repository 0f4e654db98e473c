#!/usr/bin/env bash
# A bounded burst far above PlacePlan's capacity: first the closed-loop
# throughput with 16 clients, then BURST_CLIENTS clients for 20 s with a
# DEADLINE_MS deadline, then 16 clients again. Prints what was answered and
# refused (and how), placementd's peak RSS, and whether latency came back.
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
"$build/bench/plan_load" load --server "$server" --rpc plan --clients 16 --seconds 10 || true
echo "rss_before_kb=$(rss_kb)"

echo "== burst: $burst_clients clients, 20 s, $deadline_ms ms deadline"
peak=0
( while kill -0 "$pid" 2>/dev/null; do r=$(rss_kb); [ "$r" -gt "$peak" ] && peak=$r && echo "$peak" >"$work/peak"; sleep 0.2; done ) &
sampler=$!
"$build/bench/plan_load" load --server "$server" --rpc plan --clients "$burst_clients" \
  --seconds 20 --deadline_ms "$deadline_ms" || true
kill "$sampler" 2>/dev/null || true
echo "rss_peak_during_burst_kb=$(cat "$work/peak" 2>/dev/null || rss_kb) vm_hwm_kb=$(hwm_kb)"

echo "== after: 16 clients, 10 s"
"$build/bench/plan_load" load --server "$server" --rpc plan --clients 16 --seconds 10 || true
echo "rss_after_kb=$(rss_kb)"
kill -0 "$pid" && echo "placementd still running"
