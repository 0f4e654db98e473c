-- Sums of cost_daily_pool_rollups per (UTC day, SKU), maintained in the same
-- transaction as each run insert (by the statement that adds the run to the
-- other two cost rollups). A cost report that neither filters nor groups by
-- pool or anything below it (by SKU and period: the fleet-wide view finance
-- reads most) is answered from here: one row a day and SKU, so a report by
-- SKU and day reads exactly its own rows, whatever the number of runs, pools,
-- recipes, teams and outcomes. The figures are the same exact sums.
--
-- The price: every upload of a SKU on one day updates one row, so concurrent
-- uploads of that SKU and day wait for each other's commit there (they
-- already do per pool and day in cost_daily_pool_rollups).
CREATE TABLE cost_daily_sku_rollups (
  day                           date NOT NULL,
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
  PRIMARY KEY (day, sku_id)
);

-- What is already rolled up, summed once more.
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

GRANT SELECT ON cost_daily_sku_rollups TO placement_dashboards;
