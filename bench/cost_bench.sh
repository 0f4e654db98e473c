#!/usr/bin/env bash
# GetCostReport against its baseline, on one private PostgreSQL:
#   - RUNS runs over the last 90 days and SAMPLES step samples, bulk-loaded
#     with INSERT ... SELECT generate_series; their daily cost rollups built
#     with the statements migrations 0004, 0010 and 0013 backfill with (the same
#     sums the upload path adds run by run); then 1000 more runs through the real
#     UploadBenchmarkRun, which maintains the rollups itself;
#   - GetCostReport grouped by SKU and day over 90 days (placementd, gRPC,
#     served from cost_daily_sku_rollups);
#   - the equivalent raw GROUP BY over benchmark_runs (psql, same server).
# Prints both latencies (median of ITERATIONS calls after a warm-up), their
# ratio, and whether both give the same totals.
#
#   bench/cost_bench.sh [RUNS] [SAMPLES] [ITERATIONS]   (defaults 100000, 10000000, 30)
#
# PLACEMENT_BUILD=DIR uses an existing build (with bench/cost_load) instead
# of building build/release.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=${1:-100000}
samples=${2:-10000000}
iterations=${3:-30}
uploads=1000
days=90
build=${PLACEMENT_BUILD:-build/release}
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi

source bench/lib.sh
start_placementd

now() { date +%s.%N; }
"$build/bench/cost_load" pools --server "$server"

bulk=$((runs - uploads))
per_run=$(( (samples + bulk - 1) / bulk ))
echo "== bulk load: $bulk runs over $days days, $per_run samples a run"
start=$(now)
psql "$db" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT placement_ensure_sample_partitions(now() - interval '4 months', 5);
SELECT setseed(0.42);
$(bulk_runs_sql "$bulk" "$days")
-- $per_run samples a run, filed under the run's start (its partition).
INSERT INTO step_samples (run_id, partition_time, step, sample_time, step_time_s,
                          memory_allocated_gb, memory_reserved_gb, tokens, loss)
SELECT r.run_id, r.started_at, s, r.started_at + make_interval(secs => s),
       1.0, 30.5, 33.0, 8192, 2.5
FROM benchmark_runs r, generate_series(0, $per_run - 1) s;
$(cost_rollups_sql)
SQL
end=$(now)
printf 'bulk_load seconds=%.1f\n' "$(echo "$end - $start" | bc -l)"

echo "== $uploads more runs through UploadBenchmarkRun (rollups maintained by the upload path)"
"$build/bench/cost_load" upload --server "$server" --runs "$uploads" --days "$days"
psql "$db" -qc "VACUUM ANALYZE"
psql "$db" -qtAc "SELECT 'runs=' || (SELECT count(*) FROM benchmark_runs) ||
  ' step_samples=' || (SELECT count(*) FROM step_samples) ||
  ' cost_daily_rollups=' || (SELECT count(*) FROM cost_daily_rollups) ||
  ' rollup_size=' || pg_size_pretty(pg_total_relation_size('cost_daily_rollups')) ||
  ' runs_size=' || pg_size_pretty(pg_total_relation_size('benchmark_runs'))"

echo "== GetCostReport grouped by SKU and day over $days days ($iterations calls)"
"$build/bench/cost_load" report --server "$server" --days "$days" \
  --iterations "$iterations" | tee "$work/report.txt"

echo "== the equivalent raw GROUP BY over benchmark_runs ($iterations calls, psql)"
first=$(date -u -d "-$((days - 1)) days" +%Y-%m-%d)
after=$(date -u -d "+1 day" +%Y-%m-%d)
raw_ms=$(time_raw_cost_group_by "$db" "$first" "$after" "$iterations")
printf 'raw_group_by calls=%d median_ms=%.2f\n' "$iterations" "$raw_ms"
cat "$work/rawsum.txt"

report_ms=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' "$work/report.txt")
printf 'ratio raw_group_by/cost_report = %.1fx (the report from rollups is that much faster)\n' \
  "$(echo "$raw_ms / $report_ms" | bc -l)"
totals() { sed -n 's/.*\(runs=[0-9]* gpu_microseconds=[0-9]* wasted_gpu_microseconds=[0-9]* internal_cost_micros=[0-9]*\).*/\1/p' "$1"; }
if [ "$(totals "$work/report.txt")" = "$(totals "$work/rawsum.txt")" ]; then
  echo "totals: equal"
else
  echo "totals: DIFFER"; exit 1
fi
