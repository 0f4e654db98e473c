#!/usr/bin/env bash
# The web console's render time with RUNS runs stored, against its baseline
# in the same script: the same pages when only the seed is stored.
#   1. a private PostgreSQL and a placementd with its console (auth off:
#      tokens are not what is measured), seeded through the API
#      (tests/external/console_seed.py: three pools, ~60 runs over 6 days, a
#      plan with its bake-off carried out, standards, other plans);
#   2. baseline: every page timed (bench/console_render.py measure);
#   3. RUNS more runs over the last 90 days on the seed's pools, bulk-loaded
#      (INSERT ... SELECT generate_series) with their daily cost rollups
#      rebuilt by the statements the migrations backfill with, PLANS plans
#      and an outcome for every other run (what GetPlanAccuracy reads);
#   4. the same pages timed again.
# Prints each page's median server time (its Server-Timing: read and
# render on the database worker), client time, the time of the gRPC calls
# that answer the same data (the page's API baseline) and the time to a
# drawn page in Debian's headless Chromium, at both sizes; then the ratios
# of the loaded pages to the baseline pages and to their API calls. Goal:
# every page under 1 s server time and 2 s to a drawn page at 100,000
# runs.
#
#   bench/console_bench.sh [RUNS] [PLANS] [ITERATIONS]  (100000, 20000, 10)
#
# PLACEMENT_BUILD=DIR uses an existing build instead of building
# build/release.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=${1:-100000}
plans=${2:-20000}
iterations=${3:-10}
days=90
build=${PLACEMENT_BUILD:-build/release}
if [ -z "${PLACEMENT_BUILD:-}" ]; then
  scripts/build "$build" -DPLACEMENT_BUILD_BENCH=ON >/dev/null
fi

source bench/lib.sh
start_placementd --console_listen 127.0.0.1:0
console="127.0.0.1:$(cut -d' ' -f3 "$work/ports")"
export PYTHONPATH="$build/proto/python:$root/tests/support:$root/tests/external"
export PYTHONDONTWRITEBYTECODE=1
py=/usr/bin/python3
from_day=$(date -u -d "-$((days - 1)) days" +%F)

echo "== seed through the API"
plan=$($py bench/console_render.py seed --server "$server" |
  $py -c 'import json, sys; print(json.load(sys.stdin)["plan"])')
measure() {
  $py bench/console_render.py measure --console "$console" --server "$server" \
    --plan "$plan" --from_day "$from_day" --iterations "$iterations" --label "$1"
}
echo "== baseline: the seed only ($(psql "$db" -qtAc 'SELECT count(*) FROM benchmark_runs') runs)"
measure baseline | tee "$work/baseline.txt"

echo "== bulk load: $runs runs over $days days, $plans plans, an outcome every other run"
start=$(date +%s.%N)
psql "$db" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT setseed(0.37);
INSERT INTO benchmark_runs (
  run_id, fingerprint, agent_id, pool_name, sku_id, team, recipe_key, model,
  method, gpu_count, started_at, ended_at, gpu_microseconds, steps_attempted,
  steps_succeeded, step_time_mean_s, step_time_p50_s, step_time_p95_s,
  tokens_per_second, peak_memory_gb, offload, interconnect, collectives_opened,
  retries, outcome, exclusive, upload)
SELECT md5('console-run-' || x.i)::uuid,
       sha256(convert_to('console-run-' || x.i, 'UTF8')), 'bench-agent',
       p.name, p.sku_id, x.team, 'rk1-console-' || (x.i % 12), 'Mistral-7B',
       'LORA', x.gpus, x.ended - make_interval(secs => x.wall_s), x.ended,
       x.gpus * x.wall_s * 1000000, x.wall_s,
       CASE WHEN x.outcome = 'SUCCEEDED' THEN x.wall_s ELSE x.wall_s / 2 END,
       1.0, 1.0, 1.1, 3000, 24, 'NONE',
       CASE WHEN x.gpus > 1 THEN 'NVLINK' ELSE 'NONE' END, x.gpus > 1, 0,
       x.outcome, true, '\\x'::bytea
FROM (
  SELECT i, i % 3 AS pool_ix,
         (ARRAY['nlp', 'vision', 'speech', 'ml-platform', 'research'])[1 + i % 5] AS team,
         (ARRAY[1, 2])[1 + (i / 3) % 2] AS gpus,
         date_trunc('second', now()) - interval '1 hour'
           - make_interval(secs => floor(random() * ($days * 86400 - 7200))) AS ended,
         (600 + floor(random() * 7200))::bigint AS wall_s,
         CASE WHEN random() < 0.85 THEN 'SUCCEEDED'
              ELSE (ARRAY['FAILED', 'OUT_OF_MEMORY', 'COLLECTIVE_TIMEOUT', 'PREEMPTED',
                          'HARDWARE_ERROR'])[1 + floor(random() * 5)::int] END AS outcome
  FROM generate_series(1, $runs) i
) x
JOIN (SELECT name, sku_id, row_number() OVER (ORDER BY name) - 1 AS ix FROM pools) p
  ON p.ix = x.pool_ix;
$(cost_rollups_sql)
-- Plans: the seeded bake-off plan's request and answer, under new ids.
INSERT INTO placements (plan_id, team, recipe_key, objective, chosen_pool,
                        chosen_sku, request, result_hash, evidence_time,
                        warnings, created_at)
SELECT md5('console-plan-' || i)::uuid, t.team, t.recipe_key, t.objective,
       t.chosen_pool, t.chosen_sku, t.request, t.result_hash, t.evidence_time,
       t.warnings, t.created_at - make_interval(secs => i)
FROM generate_series(1, $plans) i,
     (SELECT * FROM placements WHERE plan_id = '$plan') t;
-- An outcome for every other bulk run, predicted within about 15%.
INSERT INTO plan_outcomes (run_id, plan_id, pool_name, sku_id, basis,
                           predicted_peak_memory_gb, observed_peak_memory_gb,
                           predicted_gpu_hours_per_successful_step,
                           observed_gpu_hours_per_successful_step,
                           prior_peak_memory_gb,
                           prior_gpu_hours_per_successful_step, recorded_at)
SELECT r.run_id, '$plan', r.pool_name, r.sku_id, 'MEASURED',
       r.peak_memory_gb * (0.85 + random() * 0.3), r.peak_memory_gb,
       r.gpu_count / 3600.0 * (0.85 + random() * 0.3),
       CASE WHEN r.steps_succeeded > 0
            THEN r.gpu_microseconds / 3.6e9 / r.steps_succeeded END,
       r.peak_memory_gb * 1.2, r.gpu_count / 3600.0 * 1.3, r.ended_at
FROM benchmark_runs r
WHERE r.agent_id = 'bench-agent' AND get_byte(r.fingerprint, 0) % 2 = 0;
SQL
printf 'bulk_load seconds=%.1f\n' "$(echo "$(date +%s.%N) - $start" | bc -l)"
psql "$db" -qc "VACUUM ANALYZE"
psql "$db" -qtAc "SELECT 'runs=' || (SELECT count(*) FROM benchmark_runs) ||
  ' plans=' || (SELECT count(*) FROM placements) ||
  ' outcomes=' || (SELECT count(*) FROM plan_outcomes) ||
  ' cost_daily_rollups=' || (SELECT count(*) FROM cost_daily_rollups)"

echo "== the same pages with $runs more runs"
measure loaded | tee "$work/loaded.txt"

echo "== ratios (loaded / baseline) and the goal (1 s server, 2 s drawn)"
$py - "$work/baseline.txt" "$work/loaded.txt" <<'PY'
import re
import sys

def read(path):
    pages = {}
    for line in open(path):
        m = re.search(r"page='([^']+)' server_ms=([\d.]+) client_ms=([\d.]+) "
                      r"api_ms=([\d.na]+) drawn_ms=([\d.na]+)", line)
        if m:
            pages[m.group(1)] = [float(v) for v in m.groups()[1:]]
    return pages

base, loaded = read(sys.argv[1]), read(sys.argv[2])
met = True
for page, (server, client, api, drawn) in loaded.items():
    b = base[page]
    ok = server < 1000 and (drawn != drawn or drawn < 2000)
    met &= ok
    print(f"{page:14s} server {server:6.1f} ms ({server / b[0]:5.1f}x the "
          f"baseline page, {server / api:4.2f}x its API calls)  client "
          f"{client:6.1f} ms  drawn {drawn:6.1f} ms  "
          f"{'meets' if ok else 'MISSES'} the goal")
print("every page meets the goal" if met else "a page MISSES the goal")
PY
