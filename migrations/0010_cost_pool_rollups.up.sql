-- Sums of cost_daily_rollups per (UTC day, pool, SKU), maintained in the same
-- transaction as each run insert (by the same statement that adds the run to
-- cost_daily_rollups). A cost report that neither filters nor groups by
-- recipe key, model, method, team or outcome (by SKU, pool and period: what
-- finance reads most) is answered from here: its rows are bounded by
-- days x pools, whatever the number of runs or of distinct recipes, teams
-- and outcomes a day. The figures are the same sums as cost_daily_rollups'
-- (exact integers, money snapshotted when each run was stored).
CREATE TABLE cost_daily_pool_rollups (
  day                           date NOT NULL,
  pool_name                     text NOT NULL REFERENCES pools (name),
  sku_id                        text NOT NULL REFERENCES skus (sku_id),
  runs                          bigint NOT NULL,
  successful_runs               bigint NOT NULL,
  retries                       bigint NOT NULL,
  steps_attempted               bigint NOT NULL,
  successful_steps              bigint NOT NULL,
  gpu_microseconds              bigint NOT NULL,
  wasted_gpu_microseconds       bigint NOT NULL,
  internal_rate_x_gpu_us        numeric NOT NULL,
  list_price_x_gpu_us           numeric NOT NULL,
  list_priced_gpu_microseconds  bigint NOT NULL,
  updated_at                    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (day, pool_name, sku_id)
);

CREATE INDEX cost_daily_pool_rollups_pool_day_idx ON cost_daily_pool_rollups (pool_name, day);

-- What is already rolled up, summed once more.
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

GRANT SELECT ON cost_daily_pool_rollups TO placement_dashboards;
