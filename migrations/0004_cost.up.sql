-- Cost per successful step for finance: a daily rollup of the runs,
-- maintained in the same transaction as each run insert, the views BI tools
-- read, and a read-only role for dashboards. docs/FINANCE.md defines every
-- figure.

-- What each run contributes to cost, derived from the run alone (no money:
-- rates come from the pool when the run is stored, see cost_daily_rollups).
--   day: the UTC calendar day of ended_at; a run counts once, on the day it
--        ended.
--   wasted_gpu_microseconds: all GPU time of a run that did not succeed; for
--        a run that succeeded, the share of its GPU time spent on steps that
--        did not succeed (re-run after a retry, or lost):
--        gpu_us x (attempted - succeeded) / attempted, rounded half up to a
--        whole GPU-microsecond (exact numeric arithmetic, then summed as
--        integers).
--   successful_steps: the steps that succeeded in runs that succeeded. A run
--        that failed adds GPU-hours but no successful steps, whatever it
--        reported: its work is not what anyone paid for.
CREATE VIEW cost_run_facts AS
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

-- Sums over benchmark_runs per (UTC day, pool, SKU, recipe key, model,
-- method, team, outcome): every filter and grouping of
-- CostService.GetCostReport is answered from here, never from raw runs.
--
-- Money is snapshotted when each run is stored: the products below use the
-- pool's rates at that moment, so a later rate change never rewrites past
-- cost. They are exact integers (numeric): cost in micro-units is
-- internal_rate_x_gpu_us / 3.6e9, rounded once, when reported.
CREATE TABLE cost_daily_rollups (
  day                           date NOT NULL,
  pool_name                     text NOT NULL REFERENCES pools (name),
  sku_id                        text NOT NULL REFERENCES skus (sku_id),
  recipe_key                    text NOT NULL,
  model                         text NOT NULL,
  method                        text NOT NULL,
  team                          text NOT NULL,
  outcome                       text NOT NULL,
  runs                          bigint NOT NULL,
  successful_runs               bigint NOT NULL,
  retries                       bigint NOT NULL,
  steps_attempted               bigint NOT NULL,
  successful_steps              bigint NOT NULL,
  gpu_microseconds              bigint NOT NULL,
  wasted_gpu_microseconds       bigint NOT NULL,
  -- Sum of gpu_microseconds x internal_rate_micros_per_gpu_hour.
  internal_rate_x_gpu_us        numeric NOT NULL,
  -- Sum of gpu_microseconds x list_price_micros_per_gpu_hour over the runs
  -- whose pool had a list price, and the GPU time of those runs.
  list_price_x_gpu_us           numeric NOT NULL,
  list_priced_gpu_microseconds  bigint NOT NULL,
  updated_at                    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
);

CREATE INDEX cost_daily_rollups_pool_day_idx ON cost_daily_rollups (pool_name, day);

-- The runs already stored (before this migration) are rolled up at the
-- pools' current rates: the best snapshot there is.
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

-- Money of a rollup row (or a sum of them) in currency units, exact numeric:
-- micro-units x GPU-microseconds / (1e6 x 3.6e9), rounded half up to 1e-6
-- (a whole micro-unit) for totals and to 1e-9 for per-step figures.

-- Cost per successful step per (UTC day, SKU, pool, recipe key, model,
-- method, team), all outcomes together: the failures and retries of a day are
-- in the denominator of that day's cost per successful step.
CREATE VIEW cost_per_successful_step_daily AS
SELECT day, sku_id, pool_name, recipe_key, model, method, team,
       sum(runs) AS runs,
       sum(successful_runs) AS successful_runs,
       sum(runs) - sum(successful_runs) AS failed_runs,
       sum(retries) AS retries,
       sum(steps_attempted) AS steps_attempted,
       sum(successful_steps) AS successful_steps,
       round(sum(gpu_microseconds) / 3.6e9, 6) AS gpu_hours,
       round(sum(wasted_gpu_microseconds) / 3.6e9, 6) AS wasted_gpu_hours,
       round(sum(gpu_microseconds) / (3.6e6 * nullif(sum(successful_steps), 0)), 6)
         AS gpu_hours_per_1k_successful_steps,
       round(sum(internal_rate_x_gpu_us) / 3.6e15, 6) AS internal_cost,
       round(sum(internal_rate_x_gpu_us) / (3.6e15 * nullif(sum(successful_steps), 0)), 9)
         AS internal_cost_per_successful_step,
       CASE WHEN sum(list_priced_gpu_microseconds) = sum(gpu_microseconds)
            THEN round(sum(list_price_x_gpu_us) / 3.6e15, 6) END AS list_price_cost,
       CASE WHEN sum(list_priced_gpu_microseconds) = sum(gpu_microseconds)
            THEN round(sum(list_price_x_gpu_us)
                       / (3.6e15 * nullif(sum(successful_steps), 0)), 9)
       END AS list_price_cost_per_successful_step,
       CASE WHEN sum(list_priced_gpu_microseconds) = sum(gpu_microseconds)
            THEN round(sum(internal_rate_x_gpu_us) / nullif(sum(list_price_x_gpu_us), 0), 6)
       END AS observed_over_list_price_ratio
FROM cost_daily_rollups
GROUP BY day, sku_id, pool_name, recipe_key, model, method, team;

-- The same per calendar month (UTC) and SKU, pool and team.
CREATE VIEW cost_per_successful_step_monthly AS
SELECT date_trunc('month', day::timestamp)::date AS month, sku_id, pool_name, team,
       sum(runs) AS runs,
       sum(successful_runs) AS successful_runs,
       sum(runs) - sum(successful_runs) AS failed_runs,
       sum(retries) AS retries,
       sum(successful_steps) AS successful_steps,
       round(sum(gpu_microseconds) / 3.6e9, 6) AS gpu_hours,
       round(sum(wasted_gpu_microseconds) / 3.6e9, 6) AS wasted_gpu_hours,
       round(sum(gpu_microseconds) / (3.6e6 * nullif(sum(successful_steps), 0)), 6)
         AS gpu_hours_per_1k_successful_steps,
       round(sum(internal_rate_x_gpu_us) / 3.6e15, 6) AS internal_cost,
       round(sum(internal_rate_x_gpu_us) / (3.6e15 * nullif(sum(successful_steps), 0)), 9)
         AS internal_cost_per_successful_step,
       CASE WHEN sum(list_priced_gpu_microseconds) = sum(gpu_microseconds)
            THEN round(sum(list_price_x_gpu_us) / 3.6e15, 6) END AS list_price_cost,
       CASE WHEN sum(list_priced_gpu_microseconds) = sum(gpu_microseconds)
            THEN round(sum(list_price_x_gpu_us)
                       / (3.6e15 * nullif(sum(successful_steps), 0)), 9)
       END AS list_price_cost_per_successful_step,
       CASE WHEN sum(list_priced_gpu_microseconds) = sum(gpu_microseconds)
            THEN round(sum(internal_rate_x_gpu_us) / nullif(sum(list_price_x_gpu_us), 0), 6)
       END AS observed_over_list_price_ratio
FROM cost_daily_rollups
GROUP BY 1, sku_id, pool_name, team;

-- GPU-hours wasted per day, SKU, pool and outcome (which failures cost most).
CREATE VIEW wasted_gpu_hours_daily AS
SELECT day, sku_id, pool_name, outcome,
       sum(runs) AS runs,
       sum(retries) AS retries,
       round(sum(gpu_microseconds) / 3.6e9, 6) AS gpu_hours,
       round(sum(wasted_gpu_microseconds) / 3.6e9, 6) AS wasted_gpu_hours,
       round(sum(wasted_gpu_microseconds)::numeric / nullif(sum(gpu_microseconds), 0), 6)
         AS wasted_share
FROM cost_daily_rollups
GROUP BY day, sku_id, pool_name, outcome;

-- Occupancy per pool and UTC day: the share of the pool's GPU-hours (its
-- current size x 24 h) that ran work ending that day, and the internal cost
-- per successful step when the pool's idle hours are charged too (the rate
-- amortized over the used hours). A long run counts on the day it ended, so
-- a single day can exceed 1; over longer windows use sums of the columns.
CREATE VIEW pool_occupancy_daily AS
SELECT r.day, r.pool_name, r.sku_id,
       p.node_count * p.gpus_per_node AS pool_gpus,
       24 * p.node_count * p.gpus_per_node AS available_gpu_hours,
       round(sum(r.gpu_microseconds) / 3.6e9, 6) AS used_gpu_hours,
       round(sum(r.gpu_microseconds) / (8.64e10 * p.node_count * p.gpus_per_node), 6)
         AS occupancy,
       sum(r.successful_steps) AS successful_steps,
       round(sum(r.internal_rate_x_gpu_us) / (3.6e15 * nullif(sum(r.successful_steps), 0)), 9)
         AS internal_cost_per_successful_step,
       round(sum(r.internal_rate_x_gpu_us) * 8.64e10 * p.node_count * p.gpus_per_node
             / (3.6e15 * nullif(sum(r.gpu_microseconds), 0)
                * nullif(sum(r.successful_steps), 0)), 9)
         AS amortized_cost_per_successful_step
FROM cost_daily_rollups r JOIN pools p ON p.name = r.pool_name
GROUP BY r.day, r.pool_name, r.sku_id, p.node_count, p.gpus_per_node;

-- A read-only role for dashboards (Grafana, Metabase) that read PostgreSQL
-- directly. NOLOGIN: grant it to a login role (docs/FINANCE.md). Roles belong
-- to the whole cluster, so several databases (and concurrent migrations)
-- share it.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'placement_dashboards') THEN
    BEGIN
      CREATE ROLE placement_dashboards NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL;  -- created meanwhile by a migration of another database
    END;
  END IF;
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO placement_dashboards',
                 current_database());
END
$$;
GRANT USAGE ON SCHEMA public TO placement_dashboards;
GRANT SELECT ON cost_per_successful_step_daily, cost_per_successful_step_monthly,
                wasted_gpu_hours_daily, pool_occupancy_daily, cost_daily_rollups,
                skus, pools
  TO placement_dashboards;
