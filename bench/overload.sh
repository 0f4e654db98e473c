#!/usr/bin/env bash
# A bounded burst far above PlacePlan's capacity, ROUNDS times on one seeded
# server: first the closed-loop throughput with 16 clients (the capacity),
# then BURST_CLIENTS clients for 20 s with a DEADLINE_MS deadline, then 16
# clients again. Prints, for each round, what was answered and refused (and
# how) as the clients saw it and as placementd counted it, the pushback it
# asked of refused callers, the load generator's CPU, placementd's peak RSS
# and the machine's load average; then goodput (plans answered in time per
# second during the burst) over the capacity measured just before it, and RSS
# after over RSS before; and, over the rounds, the median goodput ratio.
# placementd refuses what it cannot answer in time (RESOURCE_EXHAUSTED, with
# grpc-retry-pushback-ms) and the burst's clients wait as it asks
# (plan_load --honor_pushback).
#
#   bench/overload.sh [RUNS] [BURST_CLIENTS] [DEADLINE_MS] [ROUNDS]
#   (defaults: 20000 runs over 50 pools, 480 clients, 50 ms, 1 round)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=${1:-20000}
burst_clients=${2:-480}
deadline_ms=${3:-50}
rounds=${4:-1}
build=${PLACEMENT_BUILD:-build/release}  # an existing build: skip building
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi
source bench/lib.sh
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
echo "== $(date -u +%FT%TZ) $(nproc) cores, load average $(loadavg); $build/services/placementd built $(date -u -r "$build/services/placementd" +%FT%TZ)"
start_placementd
metrics="127.0.0.1:$(cut -d' ' -f2 "$work/ports")"
"$build/bench/plan_load" seed --server "$server" --pools 50 --runs "$runs" --clients 8
sleep 1

# PlacePlan's counters in placementd: outcomes and gRPC codes.
counters() {
  curl -s "http://$metrics/metrics" |
    grep -E '^(placement_plans_total|grpc_server_handled_total\{[^}]*PlacePlan)' |
    sed -e 's/grpc_server_handled_total{grpc_code="\([A-Za-z]*\)".*}/PlacePlan_code=\1/' \
        -e 's/placement_plans_total{objective="[A-Z_]*",outcome="\([a-z_]*\)"}/plans_outcome=\1/' |
    awk '{ sum[$1] += $2 } END { for (k in sum) print k, sum[k] }' | sort
}
calls_per_s() { sed -n 's/.* calls_per_s=\([0-9]*\) .*/\1/p' "$1" | head -1; }

: >"$work/ratios"
for round in $(seq "$rounds"); do
  echo "== round $round/$rounds: before: 16 clients, 10 s (load average $(loadavg))"
  "$build/bench/plan_load" load --server "$server" --rpc plan --clients 16 --seconds 10 |
    tee "$work/before.txt" || true
  rss_before=$(rss_kb)
  echo "rss_before_kb=$rss_before"

  echo "== round $round/$rounds: burst: $burst_clients clients, 20 s, $deadline_ms ms deadline (load average $(loadavg))"
  counters >"$work/counters0"
  echo 0 >"$work/peak"
  ( peak=0
    while kill -0 "$pid" 2>/dev/null; do
      r=$(rss_kb); [ "$r" -gt "$peak" ] && peak=$r && echo "$peak" >"$work/peak"; sleep 0.2
    done ) &
  sampler=$!
  "$build/bench/plan_load" load --server "$server" --rpc plan --clients "$burst_clients" \
    --seconds 20 --deadline_ms "$deadline_ms" | tee "$work/burst.txt" || true
  kill "$sampler" 2>/dev/null || true
  counters >"$work/counters1"
  echo "placementd's count over the burst:"
  awk 'NR == FNR { before[$1] = $2; next }
       { d = $2 - before[$1]; if (d > 0) printf "  %s %d\n", $1, d }' \
    "$work/counters0" "$work/counters1"
  echo "rss_peak_during_burst_kb=$(cat "$work/peak") vm_hwm_kb=$(hwm_kb) load_average_after_burst=$(loadavg | tr ' ' ,)"

  echo "== round $round/$rounds: after: 16 clients, 10 s"
  "$build/bench/plan_load" load --server "$server" --rpc plan --clients 16 --seconds 10 || true
  rss_after=$(rss_kb)
  echo "rss_after_kb=$rss_after"
  awk -v b="$(calls_per_s "$work/before.txt")" -v g="$(calls_per_s "$work/burst.txt")" \
    -v r0="$rss_before" -v r1="$rss_after" -v round="$round" 'BEGIN {
      printf "round %d: goodput_ratio=%.2f (burst %d / capacity %d plans/s; target >= 0.8) ", round, g / b, g, b
      printf "rss_after/before=%.2f (target <= 1.5)\n", r1 / r0
      printf "%.2f\n", g / b >> "'"$work/ratios"'" }'
done
echo "== $(date -u +%FT%TZ) load average $(loadavg)"
echo "goodput ratios: $(tr '\n' ' ' <"$work/ratios")"
echo "goodput_ratio_median=$(median <"$work/ratios") over $rounds round(s) (target >= 0.8)"
kill -0 "$pid" && echo "placementd still running"
