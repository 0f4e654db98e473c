#!/usr/bin/env bash
# Migration 0028's backfill at size (docs/RELIABILITY.md, "Backfills"): RUNS
# runs bulk-loaded as bench/cost_bench.sh makes them, each counted into its
# evidence and pool reliability rollups by the triggers as it is stored;
# then, for each BATCH size, 0028 taken down and `placementd migrate up`
# again. Prints how long the migration and its two backfill steps took,
# their batches, the longest a batch of one rollup row holds its row lock
# (each step's batch function called row by row, as psql times it), and how
# many rollup rows' most-failed columns differ from what the triggers kept.
#
#   bench/backfill_bench.sh [RUNS] [BATCH...]   (defaults 100000; 500 2000)
#
# PLACEMENT_BUILD=DIR uses an existing build instead of building
# build/release.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=${1:-100000}
shift || true
batch_sizes=${*:-500 2000}
build=${PLACEMENT_BUILD:-build/release}
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi

source bench/lib.sh
start_placementd
"$build/bench/cost_load" pools --server "$server"
# Only the migrator touches the database from here.
stop_placementd

now() { date +%s.%N; }
echo "== bulk load: $runs runs over 90 days"
start=$(now)
psql "$db" -q -v ON_ERROR_STOP=1 -c "$(bulk_evidence_rows_sql)" >/dev/null
# In transactions of 2,000 runs: the triggers update the same few rollup
# rows for every run, and one transaction updating a row 100,000 times
# walks an ever longer chain of its versions.
for ((first = 1; first <= runs; first += 2000)); do
  psql "$db" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT setseed(0.42 * $first / $runs);
$(bulk_runs_sql "$((runs - first + 1 < 2000 ? runs - first + 1 : 2000))" 90 "$first")
SQL
done
printf 'bulk_load seconds=%.1f\n' "$(echo "$(now) - $start" | bc -l)"
psql "$db" -qc "VACUUM ANALYZE"
psql "$db" -qtAc "SELECT 'runs=' || (SELECT count(*) FROM benchmark_runs) ||
  ' failed_attempts=' || (SELECT sum(retries + (outcome <> 'SUCCEEDED')::int) FROM benchmark_runs) ||
  ' evidence_rollups=' || (SELECT count(*) FROM evidence_rollups) ||
  ' pool_reliability_rollups=' || (SELECT count(*) FROM pool_reliability_rollups)"

most_failed_columns="most_failed_attempts, most_failed_node_attempts,
  most_failed_fabric_attempts, most_failed_run_attempts,
  most_failed_counted_microseconds, most_failed_lost_microseconds,
  second_failed_attempts"
evidence_rows="SELECT recipe_key, sku_id, most_failed_startup_bucket,
  $most_failed_columns FROM evidence_rollups"
pool_rows="SELECT pool_name, multi_gpu, $most_failed_columns
  FROM pool_reliability_rollups"
psql "$db" -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE kept_evidence AS $evidence_rows;
CREATE TABLE kept_pools AS $pool_rows;
SQL
psql "$db" -qtAc "SELECT 'kept by the triggers: evidence rows with a most-failed run=' ||
  (SELECT count(*) FROM kept_evidence WHERE most_failed_attempts > 0) ||
  ' pool rows with one=' || (SELECT count(*) FROM kept_pools WHERE most_failed_attempts > 0)"
differing() {
  psql "$db" -qtAc "SELECT (SELECT count(*) FROM (($evidence_rows EXCEPT TABLE kept_evidence)
      UNION ALL (TABLE kept_evidence EXCEPT $evidence_rows)) d)
    || ' ' || (SELECT count(*) FROM (($pool_rows EXCEPT TABLE kept_pools)
      UNION ALL (TABLE kept_pools EXCEPT $pool_rows)) d)"
}

migrate() {
  "$build/services/placementd" migrate "$@" --database_url "$db"
}
for batch in $batch_sizes; do
  echo "== 0028 down, then migrate up at $batch rows a batch"
  migrate down 1 >/dev/null
  # Every column it adds is gone: what the backfill then rebuilds is only
  # what it reads from the runs.
  start=$(now)
  migrate up --backfill_batch_size "$batch" >/dev/null
  seconds=$(echo "$(now) - $start" | bc -l)
  psql "$db" -qtAc "SELECT string_agg(name || ' batches=' || batches || ' seconds=' ||
      round(extract(epoch FROM done_at - lag) :: numeric, 2), '  ' ORDER BY position)
    FROM (SELECT name, position, batches, done_at,
                 coalesce(lag(done_at) OVER (ORDER BY position), registered_at) AS lag
          FROM schema_backfills WHERE migration = 28) s"
  read -r evidence_off pools_off <<<"$(differing)"
  printf 'migrate_up batch=%s seconds=%.2f evidence_rows_off=%s pool_rows_off=%s\n' \
    "$batch" "$seconds" "$evidence_off" "$pools_off"
done

echo "== one rollup row a batch: the longest a batch holds its lock"
for step in evidence pools; do
  table=evidence_rollups
  [ "$step" = pools ] && table=pool_reliability_rollups
  rows=$(psql "$db" -qtAc "SELECT count(*) FROM $table")
  {
    echo '\timing on'
    echo "SELECT placement_backfill_most_failed_$step(NULL, 1) AS cursor \\gset"
    for _ in $(seq 2 "$rows"); do
      echo "SELECT placement_backfill_most_failed_$step(:'cursor', 1) AS cursor \\gset"
    done
  } | psql "$db" -q -v ON_ERROR_STOP=1 >"$work/rows.txt"
  sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$work/rows.txt" | sort -g |
    awk -v step="$step" '{ v[NR] = $1; s += $1 }
      END { printf "row_batches step=%s rows=%d median_ms=%.1f max_ms=%.1f total_ms=%.0f\n",
            step, NR, v[int((NR + 1) / 2)], v[NR], s }'
done
read -r evidence_off pools_off <<<"$(differing)"
echo "after the row-by-row pass: evidence_rows_off=$evidence_off pool_rows_off=$pools_off"
