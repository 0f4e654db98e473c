#!/usr/bin/env bash
# PlacePlan throughput against an empty RPC on the same server, with the same
# closed-loop load: 50 pools and 100,000 runs uploaded through the public API
# first. Prints both throughputs, their ratio and PlacePlan's p50/p99.
#
#   bench/placeplan.sh [CLIENTS] [SECONDS] [RUNS]   (defaults 16, 10, 100000)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
clients=${1:-16}
seconds=${2:-10}
runs=${3:-100000}
build=${PLACEMENT_BUILD:-build/release}  # an existing build: skip building
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi

source bench/lib.sh
start_placementd

echo "== seeding 50 pools and $runs runs through the public API"
"$build/bench/plan_load" seed --server "$server" --pools 50 --runs "$runs" --clients 8
sleep 1  # the last rollups reach the replica's memory
psql "$db" -qtAc "SELECT 'rollups=' || count(*) || ' runs=' || sum(runs) FROM evidence_rollups"

echo "== closed loop, $clients clients, $seconds s each"
"$build/bench/plan_load" load --server "$server" --rpc empty --clients "$clients" --seconds "$seconds" | tee "$work/empty.txt"
"$build/bench/plan_load" load --server "$server" --rpc plan --clients "$clients" --seconds "$seconds" | tee "$work/plan.txt"
rate() { sed -n 's/.*calls_per_s=\([0-9]*\).*/\1/p' "$1"; }
printf 'ratio PlacePlan/empty = %.2f (target >= 0.5)\n' \
  "$(echo "$(rate "$work/plan.txt") / $(rate "$work/empty.txt")" | bc -l)"
