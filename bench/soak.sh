#!/usr/bin/env bash
# A mixed workload for SECONDS (default 600): PlacePlan (4 clients), runs
# uploaded by 4 clients, sample streams, and cost reports, while placementd's
# RSS, open file descriptors and database connections are sampled every
# second into a CSV. Prints first/last-minute averages and the maxima.
#
#   bench/soak.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
seconds=${1:-600}
build=${PLACEMENT_BUILD:-build/release}  # an existing build: skip building
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi
source bench/lib.sh
start_placementd
"$build/bench/plan_load" seed --server "$server" --pools 50 --runs 5000 --clients 8 >/dev/null

end=$((SECONDS + seconds))
loads=()
"$build/bench/plan_load" load --server "$server" --rpc plan --clients 4 \
  --seconds "$seconds" >"$work/plan.txt" &
loads+=($!)
( while [ $SECONDS -lt $end ]; do
    "$build/bench/ingest_load" runs --server "$server" --runs 400 --clients 4 >/dev/null || true
  done ) &
loads+=($!)
( while [ $SECONDS -lt $end ]; do
    "$build/bench/ingest_load" samples --server "$server" --samples 20000 --streams 2 --batch 500 >/dev/null || true
  done ) &
loads+=($!)
( while [ $SECONDS -lt $end ]; do
    "$build/clients/placectl" --server "$server" cost --group_by sku,day >/dev/null 2>&1 || true
    sleep 1
  done ) &
loads+=($!)

echo "second,rss_kb,open_fds,db_connections" >"$work/soak.csv"
for ((i = 0; i < seconds; i++)); do
  echo "$i,$(rss_kb),$(open_fds),$(db_connections)" >>"$work/soak.csv"
  sleep 1
done
for p in "${loads[@]}"; do wait "$p" || true; done
cat "$work/plan.txt"
cp "$work/soak.csv" /tmp/placement-soak.csv
awk -F, -v n="$seconds" 'NR > 1 {
    i = $1; if (i < 60) { r0 += $2; f0 += $3; c0 += $4; k0++ }
    if (i >= n - 60) { r1 += $2; f1 += $3; c1 += $4; k1++ }
    if ($2 > mr) mr = $2; if ($3 > mf) mf = $3; if ($4 > mc) mc = $4 }
  END {
    printf "rss_kb first_minute=%.0f last_minute=%.0f max=%d\n", r0/k0, r1/k1, mr
    printf "open_fds first_minute=%.1f last_minute=%.1f max=%d\n", f0/k0, f1/k1, mf
    printf "db_connections first_minute=%.1f last_minute=%.1f max=%d\n", c0/k0, c1/k1, mc
  }' "$work/soak.csv"
echo "samples: /tmp/placement-soak.csv"
