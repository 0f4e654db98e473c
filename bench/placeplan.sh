#!/usr/bin/env bash
# PlacePlan throughput against an empty RPC on the same server, with the same
# closed-loop load: 50 pools and 100,000 runs uploaded through the public API
# first. Rounds of the empty RPC (grpc.health.v1.Health/Check) and of
# PlacePlan alternate on the same connections, so that whatever else the
# machine does weighs on both alike. Prints both throughputs, their ratio
# (overall and per round) and PlacePlan's p50/p99: first with durable plan
# records (the default), then with placementd restarted with
# --plan_records=deferred on the same database.
#
#   bench/placeplan.sh [CLIENTS] [SECONDS] [RUNS] [ROUNDS]
#       defaults: 16 clients, 4 s a round, 100000 runs, 10 rounds of each;
#       CLIENTS may list several counts, e.g. 16,32,64: one comparison each
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
clients=${1:-16}
seconds=${2:-4}
runs=${3:-100000}
rounds=${4:-10}
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

compare_all() {
  for n in ${clients//,/ }; do
    echo "== $1: closed loop, $n clients, $rounds rounds of $seconds s of each RPC"
    "$build/bench/plan_load" compare --server "$server" --clients "$n" \
      --seconds "$seconds" --rounds "$rounds"
  done
}

compare_all "durable records (the default: each plan committed before its answer)"
plans_before=$(psql "$db" -qtAc "SELECT count(*) FROM placements")
echo "plans recorded=$plans_before"

restart_placementd --plan_records=deferred
compare_all "deferred records (--plan_records=deferred: answered, then committed in groups)"
restart_placementd  # a clean stop writes what is still queued
psql "$db" -qtAc "SELECT 'plans recorded=' || count(*) - $plans_before FROM placements"
