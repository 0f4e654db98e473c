-- Back to 0016: no busy or pool failure figures, and the cost report's
-- counting of 0004 for runs stored from here on (cost rollup rows stored
-- meanwhile keep what they were stored with). Binaries built for 14 to 16
-- serve this schema; this one refuses writes on it.
DROP TRIGGER benchmark_runs_add_to_pool_reliability ON benchmark_runs;
DROP TRIGGER benchmark_runs_add_to_evidence_busy ON benchmark_runs;
DROP FUNCTION pool_reliability_add_run();
DROP FUNCTION evidence_rollups_add_run_busy();
DROP TABLE pool_reliability_rollups;
ALTER TABLE evidence_rollups
  DROP COLUMN busy_gpu_microseconds,
  DROP COLUMN succeeded_gpu_microseconds,
  DROP COLUMN succeeded_busy_gpu_microseconds;
DROP FUNCTION placement_run_failure_lost_us(benchmark_runs);
DROP FUNCTION placement_run_busy_gpu_us(benchmark_runs);

CREATE OR REPLACE VIEW cost_run_facts AS
SELECT run_id,
       (ended_at AT TIME ZONE 'UTC')::date AS day,
       pool_name, sku_id, recipe_key, model, method, team, outcome,
       (outcome = 'SUCCEEDED')::int AS successful_runs,
       retries, steps_attempted,
       CASE WHEN outcome = 'SUCCEEDED' THEN steps_succeeded ELSE 0 END AS successful_steps,
       gpu_microseconds,
       CASE
         WHEN outcome <> 'SUCCEEDED' THEN gpu_microseconds
         WHEN steps_attempted = 0 THEN 0
         ELSE round(gpu_microseconds::numeric * (steps_attempted - steps_succeeded)
                    / steps_attempted)::bigint
       END AS wasted_gpu_microseconds
FROM benchmark_runs;
