#!/usr/bin/env bash
# PlacePlan latency on one replica, with and without a steady upload load on
# the same replica. Every upload that replica acknowledges makes its next
# plans wait for a snapshot that includes it (read your writes), so the
# uploads show what those waits cost. Prints PlacePlan's p50/p99 in both
# conditions, and their ratios. Bounded: about 3 x SECONDS plus seeding.
#
#   bench/ryw_latency.sh [CLIENTS] [SECONDS] [RATE] [RUNS]
#       defaults: 8 clients, 10 s, 20 uploads/s, 2000 seeded runs
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
clients=${1:-8}
seconds=${2:-10}
rate=${3:-20}
runs=${4:-2000}
build=${PLACEMENT_BUILD:-build/release}  # an existing build: skip building
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi

source bench/lib.sh
start_placementd

echo "== seeding 10 pools and $runs runs through the public API"
"$build/bench/plan_load" seed --server "$server" --pools 10 --runs "$runs" --clients 4
"$build/bench/ingest_load" pool --server "$server"
sleep 1  # the last rollups reach the replica's memory

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$2"; }

echo "== PlacePlan alone: $clients clients, $seconds s"
"$build/bench/plan_load" load --server "$server" --clients "$clients" \
  --seconds "$seconds" | tee "$work/quiet.txt"

echo "== PlacePlan with $rate uploads/s on the same replica"
uploads=$(printf '%.0f' "$(echo "$rate * ($seconds + 2)" | bc -l)")
"$build/bench/ingest_load" runs --server "$server" --runs "$uploads" \
  --clients 4 --rate "$rate" >"$work/uploads.txt" &
uploader=$!
sleep 1  # the uploads are under way
"$build/bench/plan_load" load --server "$server" --clients "$clients" \
  --seconds "$seconds" | tee "$work/loaded.txt"
wait "$uploader"
cat "$work/uploads.txt"

for p in p50 p99; do
  quiet=$(field "${p}_ms" "$work/quiet.txt")
  loaded=$(field "${p}_ms" "$work/loaded.txt")
  printf '%s: %.3f ms alone, %.3f ms with uploads, ratio %.2f\n' "$p" \
    "$quiet" "$loaded" "$(echo "$loaded / $quiet" | bc -l)"
done
