#!/usr/bin/env bash
# How PlacePlan, a replica's refresh, telemetry ingestion and the cost report
# grow with the fleet's history, on one private PostgreSQL (scripts/pg, its
# own unprivileged user, a temporary folder) and two placementd on it: a
# primary that answers and takes uploads, and a replica that only follows.
# History is seeded straight into the service's own tables (COPY and
# INSERT ... SELECT generate_series), growing from one size to the next:
#
#   1. evidence: for each (rollups, runs) size, evidence rollups (distinct
#      recipe keys x 7 SKUs, written by bench/growth_load with the service's
#      own rollup code) and runs over the last 90 days; both placementd
#      restarted on it; then
#      - PlacePlan p50/p99 and server CPU (placementd + PostgreSQL) per plan,
#        every request different so that every call misses the plan cache;
#      - the replica's CPU per change, over N uploads made one at a time
#        through the primary (each one change notification), from the
#        replica process's own CPU time;
#      - at the run counts of GROWTH_COST_RUNS: GetCostReport by SKU and day
#        over 90 days against the equivalent raw GROUP BY (psql), interleaved
#        round after round, totals compared (GROWTH_PARTS=cost: only this,
#        on the same seeded history);
#      then PlacePlan A/B: the smallest rollup count seeded into a second
#      database with its own placementd (A) beside this one at the largest
#      (B), and the same closed loop run on A and B in alternating rounds
#      (A B, B A, ...; the placementd not measured stopped meanwhile), so
#      that the machine's load weighs on both alike: the median over the
#      rounds of p50(B) / p50(A) is the target's figure (the sizes measured
#      one after the other above drift with the machine's load); with
#      GROWTH_PERF=1 and perf installed, one more run of each under perf
#      record, its top functions printed;
#      and, once for all sizes, bench/snapshot_bench (a replica's snapshot
#      alone: memory per rollup, refresh CPU per change);
#   2. ingestion: for each stored-sample size, samples seeded into the
#      partition the new ones go to and a checkpoint, then one
#      StreamStepSamples stream and one plain CSV COPY (psql) of the same
#      number of rows of the same shape into the same table, in turn,
#      GROWTH_INGEST_ROUNDS times.
#
# Prints each size's figures side by side, then each target of the growth
# goals with its ratio and whether it is met.
#
#   bench/growth.sh                 full sizes (an hour or more on 2 cores)
#   GROWTH_QUICK=1 bench/growth.sh  small sizes: a smoke run of a few minutes
#
# Sizes and counts (environment; defaults of the full run, quick in []):
#   GROWTH_ROLLUPS        "100 1000 10000 100000"   ["100 1000 5000"]
#   GROWTH_RUNS           "10000 100000 300000 1000000" (one per rollup size)
#                                                   ["10000 20000 50000"]
#   GROWTH_COST_RUNS      "100000 1000000"          ["20000 50000"]
#   GROWTH_SAMPLES        "1000000 10000000 100000000" ["200000 1000000 2000000"]
#   GROWTH_STREAM_SAMPLES 1000000 [200000]  rows a stream and a COPY write
#   GROWTH_INGEST_ROUNDS  3 [1]
#   GROWTH_PLAN_CLIENTS 4, GROWTH_PLAN_SECONDS 10 [4], GROWTH_CHANGES 10 [5],
#   GROWTH_COST_CALLS 10 [5] report calls a round, GROWTH_COST_ROUNDS 10 [3],
#   GROWTH_SNAPSHOT_CHANGES 200 [50]
#   GROWTH_PARTS          "evidence ingestion"      which parts to run (or
#                         "cost": the cost report alone)
#   GROWTH_PLAN_ROUNDS 8 [3], GROWTH_PLAN_ROUND_SECONDS 5 [3]: the A/B rounds
#   GROWTH_PERF           1: profile A and B once each with perf record
#   GROWTH_DIR            where the temporary folder goes (default /tmp)
#   PLACEMENT_BUILD=DIR   an existing build (with bench/) instead of building
#                         build/release
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
quick=${GROWTH_QUICK:-}
pick() { if [ -n "$quick" ]; then echo "$2"; else echo "$1"; fi; }
rollup_sizes=${GROWTH_ROLLUPS:-$(pick "100 1000 10000 100000" "100 1000 5000")}
run_sizes=${GROWTH_RUNS:-$(pick "10000 100000 300000 1000000" "10000 20000 50000")}
cost_runs=${GROWTH_COST_RUNS:-$(pick "100000 1000000" "20000 50000")}
sample_sizes=${GROWTH_SAMPLES:-$(pick "1000000 10000000 100000000" "200000 1000000 2000000")}
stream_samples=${GROWTH_STREAM_SAMPLES:-$(pick 1000000 200000)}
ingest_rounds=${GROWTH_INGEST_ROUNDS:-$(pick 3 1)}
plan_clients=${GROWTH_PLAN_CLIENTS:-4}
plan_seconds=${GROWTH_PLAN_SECONDS:-$(pick 10 4)}
changes=${GROWTH_CHANGES:-$(pick 10 5)}
cost_calls=${GROWTH_COST_CALLS:-$(pick 10 5)}
cost_rounds=${GROWTH_COST_ROUNDS:-$(pick 10 3)}
snapshot_changes=${GROWTH_SNAPSHOT_CHANGES:-$(pick 200 50)}
plan_rounds=${GROWTH_PLAN_ROUNDS:-$(pick 8 3)}
plan_round_seconds=${GROWTH_PLAN_ROUND_SECONDS:-$(pick 5 3)}
parts=${GROWTH_PARTS:-evidence ingestion}
days=90
read -r -a rollup_list <<<"$rollup_sizes"
read -r -a run_list <<<"$run_sizes"
if [ "${#rollup_list[@]}" != "${#run_list[@]}" ]; then
  echo "GROWTH_ROLLUPS and GROWTH_RUNS must list as many sizes" >&2
  exit 2
fi
build=${PLACEMENT_BUILD:-build/release}
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi
# A database that takes bulk writes is given room for its WAL between
# checkpoints; everything else is scripts/pg's default (fsync on).
export PLACEMENT_PG_OPTIONS=${PLACEMENT_PG_OPTIONS:-"-c max_wal_size=4GB"}
export TMPDIR=${GROWTH_DIR:-${TMPDIR:-/tmp}}

source bench/lib.sh
replica_pid=
stop_replica() {
  if [ -n "$replica_pid" ]; then
    kill "$replica_pid" 2>/dev/null && wait "$replica_pid" 2>/dev/null || true
  fi
  replica_pid=
}
small_pid=
stop_small() {
  if [ -n "$small_pid" ]; then
    kill -CONT "$small_pid" 2>/dev/null || true
    kill "$small_pid" 2>/dev/null && wait "$small_pid" 2>/dev/null || true
  fi
  small_pid=
}
trap '[ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null; stop_replica; stop_small; cleanup' EXIT
start_replica() {
  rm -f "$work/replica_ports"
  "$build/services/placementd" \
    --database_url "$(scripts/pg socket-url "$work/pg" bench)" --auth=false \
    --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
    --port_file "$work/replica_ports" 2>"$work/replica.log" &
  replica_pid=$!
  for _ in $(seq 100); do [ -s "$work/replica_ports" ] && break; sleep 0.1; done
  sleep 1.5
}
restart_both() {
  stop_replica
  restart_placementd
  start_replica
}
postmaster_pid() { head -1 "$work/pg/data/postmaster.pid"; }
now() { date +%s.%N; }
field() { grep -oE "(^| )$1=[0-9.]+" | head -1 | sed 's/.*=//'; }
sql() { psql "$db" -q -v ON_ERROR_STOP=1 "$@"; }
results="$work/results"
: >"$results"
record() { echo "$*" >>"$results"; }

start_placementd
echo "== $(date -u +%FT%TZ) PostgreSQL $(psql "$db" -qtAc 'SHOW server_version'), options: $PLACEMENT_PG_OPTIONS"
echo "   machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------------------
# 1. Evidence: PlacePlan, refresh, cost report.
seed_rollups() {  # FROM TO RUNS_PER_ROLLUP
  "$build/bench/growth_load" rollups --from "$1" --to "$2" \
    --runs_per_rollup "$3" --out "$work/rollups.tsv"
  sql -c "\\copy evidence_rollups (recipe_key, sku_id, recipe, model, method, runs, successful_runs, offload_runs, retries, collective_runs, nvlink_runs, pcie_runs, host_memory_runs, steps_attempted, steps_succeeded, gpu_microseconds, max_peak_memory_gb, step_time_p50_hist, step_time_p95_hist, peak_memory_hist) FROM '$work/rollups.tsv'"
  rm -f "$work/rollups.tsv"
}

# Runs FROM..TO-1 over the rollups (their recipe keys, models, methods and
# SKUs, on the pools of that SKU), ending over the last 90 days: 10 min to
# 4 h on 1-8 GPUs, 80% succeeded, 0-3 retries, four teams.
seed_runs() {  # FROM TO
  sql <<SQL
CREATE SCHEMA IF NOT EXISTS growth;
DROP TABLE IF EXISTS growth.rollups;
CREATE TABLE growth.rollups AS
  SELECT row_number() OVER (ORDER BY recipe_key, sku_id) - 1 AS ix, recipe_key,
         sku_id, model, method
  FROM evidence_rollups;
CREATE UNIQUE INDEX ON growth.rollups (ix);
CREATE TABLE IF NOT EXISTS growth.pools AS
  SELECT sku_id, array_agg(name ORDER BY name) AS names FROM pools GROUP BY sku_id;
INSERT INTO benchmark_runs (
  run_id, fingerprint, agent_id, pool_name, sku_id, team, recipe_key, model,
  method, gpu_count, started_at, ended_at, gpu_microseconds, steps_attempted,
  steps_succeeded, step_time_mean_s, step_time_p50_s, step_time_p95_s,
  tokens_per_second, peak_memory_gb, offload, interconnect, collectives_opened,
  retries, outcome, exclusive, upload)
SELECT md5('growth-run-' || x.i)::uuid, sha256(convert_to('growth-run-' || x.i, 'UTF8')),
       'growth-agent', gp.names[1 + (x.i / 7) % cardinality(gp.names)], r.sku_id, x.team,
       r.recipe_key, r.model, r.method,
       x.gpus, x.ended - make_interval(secs => x.wall_s), x.ended,
       x.gpus * x.wall_s * 1000000, x.wall_s * 9 / 10,
       CASE WHEN x.outcome = 'SUCCEEDED' THEN x.wall_s * 9 / 10 * (10 - x.retries) / 10
            ELSE x.wall_s * 9 / 20 END,
       1.0, 1.0, 1.2, 1000, 30, 'NONE',
       CASE WHEN x.gpus > 1 THEN 'NVLINK' ELSE 'NONE' END, x.gpus > 1,
       x.retries, x.outcome, true, '\\x'::bytea
FROM (
  SELECT i, (ARRAY['nlp', 'vision', 'speech', 'ml-platform'])[1 + i % 4] AS team,
         (ARRAY[1, 2, 4, 8])[1 + (i / 3) % 4] AS gpus,
         date_trunc('second', now()) - interval '1 hour'
           - make_interval(secs => floor(random() * ($days * 86400 - 7200))) AS ended,
         (600 + floor(random() * 14400))::bigint AS wall_s,
         floor(random() * 4)::int AS retries,
         CASE WHEN random() < 0.8 THEN 'SUCCEEDED'
              ELSE (ARRAY['FAILED', 'OUT_OF_MEMORY', 'COLLECTIVE_TIMEOUT', 'PREEMPTED',
                          'HARDWARE_ERROR'])[1 + floor(random() * 5)::int] END AS outcome
  FROM generate_series($1, $2 - 1) i
) x
JOIN growth.rollups r ON r.ix = x.i % (SELECT count(*) FROM growth.rollups)
JOIN growth.pools gp ON gp.sku_id = r.sku_id;
SQL
}

# The cost report at RUNS runs: GetCostReport by SKU and day over 90 days and
# the equivalent raw GROUP BY, interleaved over GROWTH_COST_ROUNDS rounds (the
# median of GROWTH_COST_CALLS report calls, then one raw GROUP BY), so that
# the machine's load falls on both alike; each round's ratio, and the
# medians. Totals of both compared.
measure_cost() {  # RUNS
  echo "-- cost report at $1 runs: rollups rebuilt from the runs"
  sql -c "$(cost_rollups_sql)" >/dev/null
  sql -c "VACUUM ANALYZE benchmark_runs, cost_daily_rollups, cost_daily_pool_rollups, cost_daily_sku_rollups" >/dev/null
  psql "$db" -qtAc "SELECT '   cost_daily_rollups=' || (SELECT count(*) FROM cost_daily_rollups) ||
    ' cost_daily_pool_rollups=' || (SELECT count(*) FROM cost_daily_pool_rollups) ||
    ' cost_daily_sku_rollups=' || (SELECT count(*) FROM cost_daily_sku_rollups)"
  local first after round report_ms raw_ms
  first=$(date -u -d "-$((days - 1)) days" +%Y-%m-%d)
  after=$(date -u -d "+1 day" +%Y-%m-%d)
  # Warm-up of both, and the totals to compare.
  "$build/bench/cost_load" report --server "$server" --days "$days" \
    --iterations "$cost_calls" >"$work/report.txt"
  sed -n 's/^/   /; /^   cost_report rows/p' "$work/report.txt"
  time_raw_cost_group_by "$db" "$first" "$after" 1 >/dev/null
  sed 's/^/   /' "$work/rawsum.txt"
  : >"$work/cost_rounds.txt"
  for ((round = 1; round <= cost_rounds; ++round)); do
    "$build/bench/cost_load" report --server "$server" --days "$days" \
      --iterations "$cost_calls" >"$work/report_round.txt"
    report_ms=$(field median_ms <"$work/report_round.txt")
    raw_ms=$(time_raw_cost_group_by_once "$db" "$first" "$after")
    printf '   round %d: cost_report median_ms=%.2f (%d calls) raw_group_by ms=%.2f ratio=%.1f\n' \
      "$round" "$report_ms" "$cost_calls" "$raw_ms" "$(echo "$raw_ms / $report_ms" | bc -l)"
    echo "$report_ms $raw_ms $(echo "$raw_ms / $report_ms" | bc -l)" >>"$work/cost_rounds.txt"
  done
  report_ms=$(cut -d' ' -f1 "$work/cost_rounds.txt" | median)
  raw_ms=$(cut -d' ' -f2 "$work/cost_rounds.txt" | median)
  local ratio
  ratio=$(cut -d' ' -f3 "$work/cost_rounds.txt" | median)
  printf '   medians over %d rounds: cost_report_ms=%.2f raw_group_by_ms=%.2f ratio=%.1f\n' \
    "$cost_rounds" "$report_ms" "$raw_ms" "$ratio"
  totals() { sed -n 's/.*\(runs=[0-9]* gpu_microseconds=[0-9]* wasted_gpu_microseconds=[0-9]* internal_cost_micros=[0-9]*\).*/\1/p' "$1"; }
  local equal=DIFFER
  [ "$(totals "$work/report.txt")" = "$(totals "$work/rawsum.txt")" ] && equal=equal
  echo "   totals: $equal"
  record "cost $1 $report_ms $raw_ms $equal $ratio $cost_rounds"
}

start_small() {  # the placementd over database bench_small
  stop_small
  rm -f "$work/small_ports"
  "$build/services/placementd" \
    --database_url "$(scripts/pg socket-url "$work/pg" bench_small)" --auth=false \
    --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
    --port_file "$work/small_ports" 2>"$work/small.log" &
  small_pid=$!
  for _ in $(seq 100); do [ -s "$work/small_ports" ] && break; sleep 0.1; done
  small_server="127.0.0.1:$(cut -d' ' -f1 "$work/small_ports")"
  sleep 1.5
}

# PlacePlan over SMALL rollups (A: a database of its own, the same 50 pools,
# its rollups the first SMALL of this one's) against this database at LARGE
# (B), in alternating rounds; perf profiles with GROWTH_PERF=1.
plan_ab() {  # SMALL SMALL_RUNS LARGE
  local small_db per
  small_db="${db%/bench}/bench_small"
  echo "== PlacePlan A/B: $1 rollups (A, database bench_small) against $3 (B)," \
    "$plan_rounds rounds of $plan_round_seconds s each, alternating"
  psql "${db%/bench}/postgres" -qc "CREATE DATABASE bench_small"
  "$build/services/placementd" migrate up --database_url "$small_db" >/dev/null
  start_small
  "$build/bench/plan_load" seed --server "$small_server" --pools 50 --runs 0 >/dev/null
  per=$(( $2 / $1 )); [ "$per" -ge 1 ] || per=1; [ "$per" -le 200 ] || per=200
  db=$small_db seed_rollups 0 "$1" "$per"
  psql "$small_db" -qc "VACUUM ANALYZE evidence_rollups"
  start_small  # loads the seeded rollups at start-up
  echo "   A: $(psql "$small_db" -qtAc "SELECT 'rollups=' || count(*) || ' pools=' ||
    (SELECT count(*) FROM pools) FROM evidence_rollups")," \
    "B: $(psql "$db" -qtAc "SELECT 'rollups=' || count(*) || ' pools=' ||
    (SELECT count(*) FROM pools) FROM evidence_rollups")"
  "$build/bench/growth_load" plan_ab --server "$small_server" \
    --pids "$small_pid,$(postmaster_pid)" --other_server "$server" \
    --other_pids "$pid,$(postmaster_pid)" --pause_pids "$small_pid,$pid" \
    --clients "$plan_clients" --seconds "$plan_round_seconds" --rounds "$plan_rounds" |
    tee "$work/plan_ab.txt" | sed 's/^/   /'
  local last
  last=$(grep 'median_p50_ratio=' "$work/plan_ab.txt")
  record "planab $1 $3 $(field median_p50_ratio <<<"$last") $(field median_cpu_ratio <<<"$last")" \
    "$(field rounds <<<"$last") $(field min_p50_ratio <<<"$last") $(field max_p50_ratio <<<"$last")"
  if [ -n "${GROWTH_PERF:-}" ] && command -v perf >/dev/null 2>&1; then
    local side spid sserver
    for side in A B; do
      if [ "$side" = A ]; then spid=$small_pid sserver=$small_server; kill -STOP "$pid"
      else spid=$pid sserver=$server; kill -CONT "$pid"; kill -STOP "$small_pid"; fi
      echo "-- perf record of placementd $side ($spid), $plan_round_seconds s of the same load"
      perf record -F 999 -g -p "$spid" -o "$work/perf.$side" -- sleep "$((plan_round_seconds + 1))" \
        >/dev/null 2>&1 &
      local perf_pid=$!
      "$build/bench/growth_load" plan --server "$sserver" --pids "$spid,$(postmaster_pid)" \
        --clients "$plan_clients" --seconds "$plan_round_seconds" | sed 's/^/   /'
      wait "$perf_pid" || true
      # The 15 functions with the most samples (placementd's own threads;
      # PostgreSQL's backends are other processes).
      { perf report -i "$work/perf.$side" --stdio --no-children -g none \
          --sort dso,symbol 2>/dev/null || true; } |
        awk '/^ +[0-9.]+%/ && n < 15 { n++; $1 = $1; print "   " $0 }'
    done
    kill -CONT "$small_pid" "$pid" 2>/dev/null || true
  fi
  stop_small
}

if [[ " $parts " == *" evidence "* ]]; then
  echo "== pools: 50 over 7 SKUs, through the API"
  "$build/bench/plan_load" seed --server "$server" --pools 50 --runs 0 >/dev/null
  prev_rollups=0
  prev_runs=0
  for ix in "${!rollup_list[@]}"; do
    rollups=${rollup_list[$ix]}
    runs=${run_list[$ix]}
    echo "== size: $rollups evidence rollups, $runs runs"
    start=$(now)
    if [ "$rollups" -gt "$prev_rollups" ]; then
      per=$(( runs / rollups )); [ "$per" -ge 1 ] || per=1; [ "$per" -le 200 ] || per=200
      seed_rollups "$prev_rollups" "$rollups" "$per"
    fi
    if [ "$runs" -gt "$prev_runs" ]; then seed_runs "$prev_runs" "$runs"; fi
    sql -c "VACUUM ANALYZE evidence_rollups, benchmark_runs" >/dev/null
    printf -- '-- seeded in %.0f s: %s\n' "$(echo "$(now) - $start" | bc -l)" \
      "$(psql "$db" -qtAc "SELECT 'rollups=' || (SELECT count(*) FROM evidence_rollups) ||
        ' recipe_keys=' || (SELECT count(DISTINCT recipe_key) FROM evidence_rollups) ||
        ' runs=' || (SELECT count(*) FROM benchmark_runs) ||
        ' rollups_size=' || pg_size_pretty(pg_total_relation_size('evidence_rollups')) ||
        ' runs_size=' || pg_size_pretty(pg_total_relation_size('benchmark_runs'))")"
    prev_rollups=$rollups
    prev_runs=$runs
    restart_both  # both load the whole snapshot at start-up
    "$build/bench/growth_load" plan --server "$server" --pids "$pid,$(postmaster_pid)" \
      --clients "$plan_clients" --seconds "$plan_seconds" | tee "$work/plan.txt" | sed 's/^/   /'
    "$build/bench/growth_load" refresh --server "$server" --replica_pid "$replica_pid" \
      --changes "$changes" | tee "$work/refresh.txt" | sed 's/^/   /'
    echo "   replica rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$replica_pid/status")"
    record "evidence $rollups $runs $(field p50_ms <"$work/plan.txt") $(field p99_ms <"$work/plan.txt")" \
      "$(field server_cpu_us_per_plan <"$work/plan.txt") $(field plans_per_s <"$work/plan.txt")" \
      "$(field median <"$work/refresh.txt")" \
      "$(awk '/^VmRSS/ {print $2}' "/proc/$replica_pid/status")"
    if [[ " $cost_runs " == *" $runs "* ]]; then measure_cost "$runs"; fi
  done
  stop_replica
  plan_ab "${rollup_list[0]}" "${run_list[0]}" "${rollup_list[-1]}"
  echo "== bench/snapshot_bench: the snapshot alone at the same rollup counts"
  PLACEMENT_TEST_DATABASE_URL="${db%/bench}/postgres" "$build/bench/snapshot_bench" \
    --sizes "$(echo "$rollup_sizes" | tr ' ' ',')" --changes "$snapshot_changes" |
    tee "$work/snapshot.txt" | sed 's/^/   /'
  while read -r line; do
    record "snapshot $(field rollups <<<"$line") $(field bytes_per_rollup <<<"$line")" \
      "$(field update_refresh_cpu_us <<<"$line") $(field insert_refresh_cpu_us <<<"$line")" \
      "$(field full_read_cpu_ms <<<"$line")"
  done < <(grep '^snapshot_bench ' "$work/snapshot.txt")
fi

# ---------------------------------------------------------------------------
# 1b. The cost report alone (GROWTH_PARTS without evidence): the same pools,
# evidence rollups and runs as the evidence part seeds, grown to each size of
# GROWTH_COST_RUNS, and nothing but the cost report measured.
if [[ " $parts " == *" cost "* && " $parts " != *" evidence "* ]]; then
  echo "== pools: 50 over 7 SKUs, through the API"
  "$build/bench/plan_load" seed --server "$server" --pools 50 --runs 0 >/dev/null
  prev_rollups=0
  prev_runs=0
  for runs in $cost_runs; do
    rollups=1000  # the evidence part's rollup count at this run count
    for ix in "${!run_list[@]}"; do
      [ "${run_list[$ix]}" -le "$runs" ] && rollups=${rollup_list[$ix]}
    done
    echo "== size: $rollups evidence rollups, $runs runs"
    start=$(now)
    if [ "$rollups" -gt "$prev_rollups" ]; then
      per=$(( runs / rollups )); [ "$per" -ge 1 ] || per=1; [ "$per" -le 200 ] || per=200
      seed_rollups "$prev_rollups" "$rollups" "$per"
      prev_rollups=$rollups
    fi
    if [ "$runs" -gt "$prev_runs" ]; then seed_runs "$prev_runs" "$runs"; prev_runs=$runs; fi
    printf -- '-- seeded in %.0f s: %s\n' "$(echo "$(now) - $start" | bc -l)" \
      "$(psql "$db" -qtAc "SELECT 'rollups=' || (SELECT count(*) FROM evidence_rollups) ||
        ' runs=' || (SELECT count(*) FROM benchmark_runs) ||
        ' runs_size=' || pg_size_pretty(pg_total_relation_size('benchmark_runs'))")"
    measure_cost "$runs"
  done
fi

# ---------------------------------------------------------------------------
# 2. Ingestion: one stream against plain CSV COPY, as samples pile up.
if [[ " $parts " == *" ingestion "* ]]; then
  seeded_runs=0
  samples_a_run=10000
  for size in $sample_sizes; do
    stored=$(psql "$db" -qtAc "SELECT count(*) FROM step_samples")
    want_runs=$(( (size - stored + samples_a_run - 1) / samples_a_run ))
    echo "== ingestion with $size samples stored"
    start=$(now)
    if [ "$want_runs" -gt 0 ]; then
      # Into the partition the streamed rows go to (their runs start two
      # days ago), run after run of 10,000 steps, as agents would have sent
      # them; 20 million rows a statement.
      for ((r = seeded_runs; r < seeded_runs + want_runs; r += 2000)); do
        last=$(( r + 2000 < seeded_runs + want_runs ? r + 2000 : seeded_runs + want_runs ))
        sql <<SQL
INSERT INTO sample_streams (run_id, partition_time, max_step, committed_through_step, samples)
SELECT md5('growth-samples-' || r)::uuid, date_trunc('second', now()) - interval '2 days',
       $samples_a_run - 1, $samples_a_run - 1, $samples_a_run
FROM generate_series($r, $last - 1) r;
INSERT INTO step_samples (run_id, partition_time, step, sample_time, step_time_s,
                          memory_allocated_gb, memory_reserved_gb, tokens, loss)
SELECT md5('growth-samples-' || r)::uuid, t.p, s, t.p + s * interval '50 ms',
       0.25 + (s % 13) * 0.001, 30.5 + (s % 5) * 0.125, 33.0, 8192,
       2.5 - (s % 1000) * 0.0005
FROM (SELECT date_trunc('second', now()) - interval '2 days' AS p) t,
     generate_series($r, $last - 1) r, generate_series(0, $samples_a_run - 1) s;
SQL
      done
      seeded_runs=$(( seeded_runs + want_runs ))
      sql -c "VACUUM ANALYZE step_samples, sample_streams" >/dev/null
    fi
    # The seeding's dirty pages written out now, not by a checkpoint that
    # would fall in (and slow) whichever measurement runs during it.
    sql -c "CHECKPOINT"
    printf -- '-- seeded in %.0f s: %s\n' "$(echo "$(now) - $start" | bc -l)" \
      "$(psql "$db" -qtAc "SELECT 'step_samples=' || (SELECT count(*) FROM step_samples) ||
        ' size=' || pg_size_pretty(pg_total_relation_size('step_samples')) ||
        ' (' || string_agg(c.relname || ' ' || pg_size_pretty(pg_total_relation_size(c.oid)), ', ') || ')'
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'step_samples'::regclass AND pg_total_relation_size(c.oid) > 65536")"
    stream_total=0; stream_s=0; copy_total=0; copy_s=0
    for ((round = 0; round < ingest_rounds; ++round)); do
      "$build/bench/ingest_load" samples --server "$server" --samples "$stream_samples" \
        --streams 1 --batch 2000 >"$work/stream.txt"
      sed 's/^/   /' "$work/stream.txt"
      stream_s=$(echo "$stream_s + $(field seconds <"$work/stream.txt")" | bc -l)
      stream_total=$(( stream_total + stream_samples ))
      # New run ids each round: the file is the same shape, not the same
      # keys. Written after the stream, so that its run is the newest, as the
      # stream's was: both append at the right edge of the primary key.
      "$build/bench/ingest_load" csv --samples "$stream_samples" --streams 1 --out "$work/samples.csv"
      start=$(now)
      sql -c "\\copy step_samples (run_id, partition_time, step, sample_time, step_time_s, memory_allocated_gb, memory_reserved_gb, tokens, loss) FROM '$work/samples.csv' WITH (FORMAT csv)"
      seconds=$(echo "$(now) - $start" | bc -l)
      printf '   plain_copy samples=%d seconds=%.3f samples_per_s=%.0f\n' "$stream_samples" \
        "$seconds" "$(echo "$stream_samples / $seconds" | bc -l)"
      copy_s=$(echo "$copy_s + $seconds" | bc -l)
      copy_total=$(( copy_total + stream_samples ))
    done
    rm -f "$work/samples.csv"
    record "ingestion $size $(echo "$stream_total / $stream_s" | bc -l) $(echo "$copy_total / $copy_s" | bc -l)"
  done
fi

# ---------------------------------------------------------------------------
echo
echo "== summary ($(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg))"
verdict() {  # VALUE OP TARGET
  if [ "$(echo "$1 $2 $3" | bc -l)" = 1 ]; then echo met; else echo "NOT met"; fi
}
if grep -q '^evidence ' "$results"; then
  echo
  printf '%-9s %-9s %-10s %-10s %-13s %-9s %-20s %s\n' rollups runs "p50 ms" "p99 ms" \
    "CPU/plan µs" plans/s "replica CPU/change ms" "replica RSS MB"
  while read -r _ rollups runs p50 p99 cpu rate refresh rss; do
    printf '%-9s %-9s %-10s %-10s %-13s %-9s %-20s %.0f\n' "$rollups" "$runs" "$p50" "$p99" \
      "$cpu" "$rate" "$refresh" "$(echo "$rss / 1024" | bc -l)"
  done < <(grep '^evidence ' "$results")
  read -r _ r0 _ p50_0 _ _ _ refresh_0 _ < <(grep '^evidence ' "$results" | head -1)
  read -r _ r1 _ p50_1 _ _ _ refresh_1 _ < <(grep '^evidence ' "$results" | tail -1)
  ratio=$(echo "$p50_1 / $p50_0" | bc -l)
  printf 'PlacePlan p50 at %s rollups / at %s, sizes measured one after the other: %.2f\n' \
    "$r1" "$r0" "$ratio"
  if grep -q '^planab ' "$results"; then
    read -r _ a b ab_ratio ab_cpu ab_rounds ab_min ab_max < <(grep '^planab ' "$results" | tail -1)
    printf 'PlacePlan A/B, %s rounds alternating: per-round p50 ratio %.2f..%.2f, server CPU per plan ratio (median) %.2f\n' \
      "$ab_rounds" "$ab_min" "$ab_max" "$ab_cpu"
    printf 'target: PlacePlan p50 at %s rollups / at %s, median of %s alternating rounds = %.2f (<= 1.25): %s\n' \
      "$b" "$a" "$ab_rounds" "$ab_ratio" "$(verdict "$ab_ratio" "<=" 1.25)"
  else
    printf 'target: PlacePlan p50 at %s rollups / at %s = %.2f (<= 1.25): %s\n' "$r1" "$r0" \
      "$ratio" "$(verdict "$ratio" "<=" 1.25)"
  fi
  refresh_ratio=$(echo "$refresh_1 / ($refresh_0 + 0.0001)" | bc -l)
  printf 'target: replica process CPU per change at %s rollups / at %s = %.2f (<= 1.5): %s\n' \
    "$r1" "$r0" "$refresh_ratio" "$(verdict "$refresh_ratio" "<=" 1.5)"
fi
if grep -q '^snapshot ' "$results"; then
  echo
  printf '%-9s %-16s %-26s %-26s %s\n' rollups "heap B/rollup" "refresh CPU µs (update)" \
    "refresh CPU µs (insert)" "full read CPU ms"
  while read -r _ rollups bytes update insert full; do
    printf '%-9s %-16s %-26s %-26s %s\n' "$rollups" "$bytes" "$update" "$insert" "$full"
  done < <(grep '^snapshot ' "$results")
  read -r _ r0 _ u0 i0 _ < <(grep '^snapshot ' "$results" | head -1)
  read -r _ r1 _ u1 i1 _ < <(grep '^snapshot ' "$results" | tail -1)
  for kind in update insert; do
    if [ "$kind" = update ]; then a=$u0; b=$u1; else a=$i0; b=$i1; fi
    ratio=$(echo "$b / $a" | bc -l)
    printf 'target: snapshot refresh CPU per change (%s) at %s rollups / at %s = %.2f (<= 1.5): %s\n' \
      "$kind" "$r1" "$r0" "$ratio" "$(verdict "$ratio" "<=" 1.5)"
  done
fi
if grep -q '^cost ' "$results"; then
  echo
  printf '%-9s %-18s %-18s %-22s %s\n' runs "GetCostReport ms" "raw GROUP BY ms" \
    "raw/report (rounds)" totals
  while read -r _ runs report raw equal ratio rounds; do
    printf '%-9s %-18s %-18s %-22s %s\n' "$runs" "$report" "$raw" \
      "$(printf '%.1f (%d)' "$ratio" "$rounds")" "$equal"
  done < <(grep '^cost ' "$results")
  read -r _ c0 report_0 _ _ _ _ < <(grep '^cost ' "$results" | head -1)
  read -r _ c1 report_1 _ _ speedup rounds_1 < <(grep '^cost ' "$results" | tail -1)
  printf 'target: raw GROUP BY / GetCostReport at %s runs = %.1fx, median of %d interleaved rounds (>= 100): %s\n' \
    "$c1" "$speedup" "$rounds_1" "$(verdict "$speedup" ">=" 100)"
  flat=$(echo "$report_1 / $report_0" | bc -l)
  printf 'target: GetCostReport latency at %s runs / at %s = %.2f (<= 1.5): %s\n' "$c1" "$c0" \
    "$flat" "$(verdict "$flat" "<=" 1.5)"
fi
if grep -q '^ingestion ' "$results"; then
  echo
  printf '%-12s %-24s %-22s %s\n' stored "StreamStepSamples /s" "plain CSV COPY /s" "stream/COPY"
  while read -r _ size stream copy; do
    printf '%-12s %-24.0f %-22.0f %.2f\n' "$size" "$stream" "$copy" "$(echo "$stream / $copy" | bc -l)"
  done < <(grep '^ingestion ' "$results")
  read -r _ s0 stream_0 copy_0 < <(grep '^ingestion ' "$results" | head -1)
  read -r _ s1 stream_1 copy_1 < <(grep '^ingestion ' "$results" | tail -1)
  worst=$(awk '/^ingestion / { r = $3 / $4; if (w == "" || r < w) w = r } END { print w }' "$results")
  printf 'target: one stream / plain CSV COPY, lowest over the sizes = %.2f (>= 1.0): %s\n' \
    "$worst" "$(verdict "$worst" ">=" 1.0)"
  kept=$(echo "$stream_1 / $stream_0" | bc -l)
  printf 'target: stream rate with %s stored / with %s = %.2f (>= 0.9): %s\n' "$s1" "$s0" \
    "$kept" "$(verdict "$kept" ">=" 0.9)"
fi
