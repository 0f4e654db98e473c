# Shared by the bench/ scripts: a private PostgreSQL and a placementd on
# loopback, stopped on exit. Source it after setting `build`.
#   start_placementd [placementd flags...]   sets $server, $db, $pid, $work
#   restart_placementd [placementd flags...] the same database, new flags
#   stop_placementd                          stops it, the database kept
work=$(mktemp -d /tmp/placement-bench.XXXXXX)
chmod 755 "$work"
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  scripts/pg destroy "$work/pg" || true
  rm -rf "$work"
}
trap cleanup EXIT

start_placementd() {
  scripts/pg create "$work/pg"
  local admin
  admin=$(scripts/pg start "$work/pg")
  psql "$admin" -qc "CREATE DATABASE bench"
  db="${admin%/postgres}/bench"
  "$build/services/placementd" migrate up --database_url "$db" >/dev/null
  launch_placementd "$@"
}

# Stops placementd and starts it again on the same database with `flags...`.
restart_placementd() {
  stop_placementd
  launch_placementd "$@"
}

stop_placementd() {
  kill "$pid" && wait "$pid" 2>/dev/null || true
  pid=
}

launch_placementd() {
  rm -f "$work/ports"
  # PostgreSQL is on this machine: placementd reaches it through its Unix
  # socket, as a one-machine deployment would (loopback TCP costs both ends
  # a TCP stack per round trip). Tokens are not what the benchmarks measure.
  "$build/services/placementd" \
    --database_url "$(scripts/pg socket-url "$work/pg" bench)" --auth=false \
    --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 \
    --port_file "$work/ports" "$@" 2>"$work/placementd.log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$work/ports" ] && break; sleep 0.1; done
  server="127.0.0.1:$(cut -d' ' -f1 "$work/ports")"
  sleep 1.5  # health SERVING
}

# Resident memory (kB) and open file descriptors of placementd, and the
# database connections it holds.
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$pid/status"; }
open_fds() { ls "/proc/$pid/fd" | wc -l; }
db_connections() {
  psql "$db" -qtAc "SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench' AND pid <> pg_backend_pid()"
}

# The raw GROUP BY equivalent to GetCostReport grouped by SKU and UTC day
# over [FIRST, AFTER) (dates): the same figures straight over benchmark_runs
# joined with pools. The runs are read through cost_run_facts, the one place
# that defines what a run adds (its successful steps and wasted GPU time,
# docs/FINANCE.md): a view, expanded into the query, so this is still one
# scan of benchmark_runs, and it counts by the definition the rollups count
# by whatever a later migration makes of it.
raw_cost_group_by() {
  cat <<SQL
SELECT f.sku_id, f.day, count(*) AS runs,
  sum(f.successful_runs) AS successful_runs, sum(f.retries) AS retries,
  sum(f.steps_attempted) AS steps_attempted,
  sum(f.successful_steps) AS successful_steps,
  sum(f.gpu_microseconds) AS gpu_us,
  sum(f.wasted_gpu_microseconds) AS wasted_us,
  round(sum(f.gpu_microseconds::numeric * p.internal_rate_micros_per_gpu_hour) / 3.6e9) AS cost_micros,
  round(sum(f.gpu_microseconds::numeric * p.list_price_micros_per_gpu_hour) / 3.6e9) AS list_micros
FROM cost_run_facts f JOIN pools p ON p.name = f.pool_name
WHERE f.day >= '$1' AND f.day < '$2'
GROUP BY 1, 2 ORDER BY 1, 2
SQL
}

# The median milliseconds of CALLS runs of the raw GROUP BY over [FIRST,
# AFTER) on DB, after one unmeasured run; its totals line is written to
# $work/rawsum.txt.
time_raw_cost_group_by() {
  local db=$1 first=$2 after=$3 calls=$4 raw
  raw=$(raw_cost_group_by "$first" "$after")
  {
    echo '\timing on'
    for _ in $(seq 0 "$calls"); do echo "$raw;"; done
  } | psql "$db" -q -o /dev/null >"$work/raw.txt"
  psql "$db" -qtAc "SELECT 'raw_group_by rows=' || count(*) || ' runs=' || sum(runs) ||
    ' gpu_microseconds=' || sum(gpu_us) || ' wasted_gpu_microseconds=' || sum(wasted_us) ||
    ' internal_cost_micros=' || sum(cost_micros) FROM ($raw) g" >"$work/rawsum.txt"
  sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$work/raw.txt" | tail -n +2 | sort -g |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# SQL that rebuilds the daily cost rollups from the stored runs, with the
# statements migrations 0004, 0010 and 0013 backfill with (the same sums the
# upload path adds run by run). They read cost_run_facts as the schema
# defines it now (migration 0017's counting), as the upload path does.
cost_rollups_sql() {
  cat <<'SQL'
TRUNCATE cost_daily_rollups, cost_daily_pool_rollups, cost_daily_sku_rollups;
INSERT INTO cost_daily_rollups (
  day, pool_name, sku_id, recipe_key, model, method, team, outcome, runs,
  successful_runs, retries, steps_attempted, successful_steps, gpu_microseconds,
  wasted_gpu_microseconds, internal_rate_x_gpu_us, list_price_x_gpu_us,
  list_priced_gpu_microseconds)
SELECT f.day, f.pool_name, f.sku_id, f.recipe_key, f.model, f.method, f.team,
       f.outcome, count(*), sum(f.successful_runs), sum(f.retries),
       sum(f.steps_attempted), sum(f.successful_steps), sum(f.gpu_microseconds),
       sum(f.wasted_gpu_microseconds),
       sum(f.gpu_microseconds::numeric * p.internal_rate_micros_per_gpu_hour),
       coalesce(sum(f.gpu_microseconds::numeric * p.list_price_micros_per_gpu_hour), 0),
       sum(CASE WHEN p.list_price_micros_per_gpu_hour IS NULL THEN 0
                ELSE f.gpu_microseconds END)
FROM cost_run_facts f JOIN pools p ON p.name = f.pool_name
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
INSERT INTO cost_daily_pool_rollups (
  day, pool_name, sku_id, runs, successful_runs, retries, steps_attempted,
  successful_steps, gpu_microseconds, wasted_gpu_microseconds,
  internal_rate_x_gpu_us, list_price_x_gpu_us, list_priced_gpu_microseconds)
SELECT day, pool_name, sku_id, sum(runs), sum(successful_runs), sum(retries),
       sum(steps_attempted), sum(successful_steps), sum(gpu_microseconds),
       sum(wasted_gpu_microseconds), sum(internal_rate_x_gpu_us),
       sum(list_price_x_gpu_us), sum(list_priced_gpu_microseconds)
FROM cost_daily_rollups
GROUP BY day, pool_name, sku_id;
INSERT INTO cost_daily_sku_rollups (
  day, sku_id, runs, successful_runs, retries, steps_attempted,
  successful_steps, gpu_microseconds, wasted_gpu_microseconds,
  internal_rate_x_gpu_us, list_price_x_gpu_us, list_priced_gpu_microseconds)
SELECT day, sku_id, sum(runs), sum(successful_runs), sum(retries),
       sum(steps_attempted), sum(successful_steps), sum(gpu_microseconds),
       sum(wasted_gpu_microseconds), sum(internal_rate_x_gpu_us),
       sum(list_price_x_gpu_us), sum(list_priced_gpu_microseconds)
FROM cost_daily_pool_rollups
GROUP BY day, sku_id;
SQL
}

# The milliseconds of one run of the raw GROUP BY over [FIRST, AFTER) on DB
# (psql's \timing), for measurements that interleave it with the report.
time_raw_cost_group_by_once() {
  local db=$1 first=$2 after=$3
  { echo '\timing on'; echo "$(raw_cost_group_by "$first" "$after");"; } |
    psql "$db" -q -o /dev/null | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}

# The median of the numbers on stdin, one a line.
median() {
  sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# SQL that inserts N runs ended over the last DAYS days (arguments; a third,
# FIRST, numbers them from FIRST on, 1 by default: several calls load more),
# as the cost and backfill benches make them: runs of 10 min to 4 h with 1-s steps
# on 1, 2, 4 or 8 GPUs of four pools (`cost_load pools`), 12 recipe keys,
# 0-3 retries; 80% succeed, the rest fail half-way. Seeded by the caller
# (SELECT setseed(...)). The triggers count each into its evidence and pool
# reliability rollups as it is stored.
bulk_runs_sql() {
  cat <<SQL
-- Runs of 10 min to 4 h with 1-s steps on 1, 2, 4 or 8 GPUs; 80% succeed
-- (re-running a tenth of their steps per retry), the rest fail half-way.
INSERT INTO benchmark_runs (
  run_id, fingerprint, agent_id, pool_name, sku_id, team, recipe_key, model,
  method, gpu_count, started_at, ended_at, gpu_microseconds, steps_attempted,
  steps_succeeded, step_time_mean_s, step_time_p50_s, step_time_p95_s,
  tokens_per_second, peak_memory_gb, offload, interconnect, collectives_opened,
  retries, outcome, exclusive, upload)
SELECT md5('bench-run-' || x.i)::uuid, sha256(convert_to('bench-run-' || x.i, 'UTF8')),
       'bench-agent', p.name, p.sku_id, x.team, x.recipe_key, x.model, x.method,
       x.gpus, x.ended - make_interval(secs => x.wall_s), x.ended,
       x.gpus * x.wall_s * 1000000, x.wall_s * 9 / 10,
       CASE WHEN x.outcome = 'SUCCEEDED' THEN x.wall_s * 9 / 10 * (10 - x.retries) / 10
            ELSE x.wall_s * 9 / 20 END,
       1.0, 1.0, 1.2, 1000, 30, 'NONE',
       CASE WHEN x.gpus > 1 THEN 'NVLINK' ELSE 'NONE' END, x.gpus > 1,
       x.retries, x.outcome, true, '\\x'::bytea
FROM (
  SELECT i, i % 4 AS pool_ix,
         (ARRAY['nlp', 'vision', 'speech', 'ml-platform'])[1 + i % 4] AS team,
         'rk1-bench-' || (i % 12) AS recipe_key,
         (ARRAY['Llama-3.1-8B', 'Llama-2-7B', 'Llama-3.1-70B'])[1 + i % 3] AS model,
         (ARRAY['LORA', 'QLORA', 'FULL'])[1 + (i / 3) % 3] AS method,
         (ARRAY[1, 2, 4, 8])[1 + (i / 7) % 4] AS gpus,
         date_trunc('second', now()) - interval '1 hour'
           - make_interval(secs => floor(random() * ($2 * 86400 - 7200))) AS ended,
         (600 + floor(random() * 14400))::bigint AS wall_s,
         floor(random() * 4)::int AS retries,
         CASE WHEN random() < 0.8 THEN 'SUCCEEDED'
              ELSE (ARRAY['FAILED', 'OUT_OF_MEMORY', 'COLLECTIVE_TIMEOUT', 'PREEMPTED',
                          'HARDWARE_ERROR'])[1 + floor(random() * 5)::int] END AS outcome
  FROM generate_series(${3:-1}, ${3:-1} + $1 - 1) i
) x
JOIN (SELECT name, sku_id, row_number() OVER (ORDER BY name) - 1 AS ix FROM pools) p
  ON p.ix = x.pool_ix;
SQL
}

# SQL that writes, for each (recipe key, SKU) bulk_runs_sql stores runs of,
# the evidence rollup row the upload path would have created, its figures
# zero: the triggers add each run's attempts and failures to it as the run
# is stored (a row must exist for them to). Before bulk_runs_sql.
bulk_evidence_rows_sql() {
  cat <<'SQL'
INSERT INTO evidence_rollups (
  recipe_key, sku_id, recipe, model, method, runs, successful_runs,
  offload_runs, retries, collective_runs, nvlink_runs, pcie_runs,
  host_memory_runs, steps_attempted, steps_succeeded, gpu_microseconds,
  max_peak_memory_gb, step_time_p50_hist, step_time_p95_hist, peak_memory_hist)
SELECT 'rk1-bench-' || (i % 12), p.sku_id, '\x'::bytea, 'Llama-3.1-8B', 'LORA',
       0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', '{}', '{}'
FROM generate_series(0, 11) i
JOIN (SELECT name, sku_id, row_number() OVER (ORDER BY name) - 1 AS ix FROM pools) p
  ON p.ix = i % 4
ON CONFLICT DO NOTHING;
SQL
}
