-- The per-(day, pool, SKU) and per-(day, SKU) cost rollups (migrations 0010,
-- 0013) derived by the database itself from cost_daily_rollups, whichever
-- binary stored the run: a binary older than those migrations writes only
-- cost_daily_rollups, and each backfill ran once, so every run such a binary
-- stored afterwards was missing from them for ever (cost by SKU no longer
-- equalled cost by recipe). From here on:
--   * a trigger on cost_daily_rollups adds each row's change (NEW - OLD) to
--     its pool and SKU rows, in the same transaction;
--   * what a binary writes to the two derived tables directly (every binary
--     up to this one does, in the statement that stores a run) is skipped by
--     a guard trigger, so no run is counted twice;
--   * both derived tables are rebuilt here from cost_daily_rollups, which
--     repairs whatever drifted before.
-- The rebuild holds SHARE ROW EXCLUSIVE on the three tables (uploads wait,
-- reads do not) for as long as it takes to sum cost_daily_rollups: rows are
-- days x pools x recipes x teams x outcomes, not runs.
--
-- schema_compatibility records which binaries read and write this schema
-- correctly (docs/RELIABILITY.md "Schema upgrades"): every binary built for
-- version 14 or later (14 added the tombstone horizon their catalog reads
-- need), since the rollups no longer depend on the writer.
CREATE TABLE schema_compatibility (
  only_row               boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  oldest_binary_version  integer NOT NULL
);
INSERT INTO schema_compatibility (oldest_binary_version) VALUES (14);

LOCK TABLE cost_daily_rollups, cost_daily_pool_rollups, cost_daily_sku_rollups
  IN SHARE ROW EXCLUSIVE MODE;

-- Adds one detail row's figures, times `sign`, to its pool and SKU rows.
CREATE FUNCTION cost_rollups_add(r cost_daily_rollups, sign integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO cost_daily_pool_rollups AS c (
    day, pool_name, sku_id, runs, successful_runs, retries, steps_attempted,
    successful_steps, gpu_microseconds, wasted_gpu_microseconds,
    internal_rate_x_gpu_us, list_price_x_gpu_us, list_priced_gpu_microseconds)
  VALUES (r.day, r.pool_name, r.sku_id, sign * r.runs,
          sign * r.successful_runs, sign * r.retries,
          sign * r.steps_attempted, sign * r.successful_steps,
          sign * r.gpu_microseconds, sign * r.wasted_gpu_microseconds,
          sign * r.internal_rate_x_gpu_us, sign * r.list_price_x_gpu_us,
          sign * r.list_priced_gpu_microseconds)
  ON CONFLICT (day, pool_name, sku_id) DO UPDATE SET
    runs = c.runs + EXCLUDED.runs,
    successful_runs = c.successful_runs + EXCLUDED.successful_runs,
    retries = c.retries + EXCLUDED.retries,
    steps_attempted = c.steps_attempted + EXCLUDED.steps_attempted,
    successful_steps = c.successful_steps + EXCLUDED.successful_steps,
    gpu_microseconds = c.gpu_microseconds + EXCLUDED.gpu_microseconds,
    wasted_gpu_microseconds =
      c.wasted_gpu_microseconds + EXCLUDED.wasted_gpu_microseconds,
    internal_rate_x_gpu_us =
      c.internal_rate_x_gpu_us + EXCLUDED.internal_rate_x_gpu_us,
    list_price_x_gpu_us = c.list_price_x_gpu_us + EXCLUDED.list_price_x_gpu_us,
    list_priced_gpu_microseconds =
      c.list_priced_gpu_microseconds + EXCLUDED.list_priced_gpu_microseconds,
    updated_at = now();
  INSERT INTO cost_daily_sku_rollups AS c (
    day, sku_id, runs, successful_runs, retries, steps_attempted,
    successful_steps, gpu_microseconds, wasted_gpu_microseconds,
    internal_rate_x_gpu_us, list_price_x_gpu_us, list_priced_gpu_microseconds)
  VALUES (r.day, r.sku_id, sign * r.runs, sign * r.successful_runs,
          sign * r.retries, sign * r.steps_attempted,
          sign * r.successful_steps, sign * r.gpu_microseconds,
          sign * r.wasted_gpu_microseconds, sign * r.internal_rate_x_gpu_us,
          sign * r.list_price_x_gpu_us, sign * r.list_priced_gpu_microseconds)
  ON CONFLICT (day, sku_id) DO UPDATE SET
    runs = c.runs + EXCLUDED.runs,
    successful_runs = c.successful_runs + EXCLUDED.successful_runs,
    retries = c.retries + EXCLUDED.retries,
    steps_attempted = c.steps_attempted + EXCLUDED.steps_attempted,
    successful_steps = c.successful_steps + EXCLUDED.successful_steps,
    gpu_microseconds = c.gpu_microseconds + EXCLUDED.gpu_microseconds,
    wasted_gpu_microseconds =
      c.wasted_gpu_microseconds + EXCLUDED.wasted_gpu_microseconds,
    internal_rate_x_gpu_us =
      c.internal_rate_x_gpu_us + EXCLUDED.internal_rate_x_gpu_us,
    list_price_x_gpu_us = c.list_price_x_gpu_us + EXCLUDED.list_price_x_gpu_us,
    list_priced_gpu_microseconds =
      c.list_priced_gpu_microseconds + EXCLUDED.list_priced_gpu_microseconds,
    updated_at = now();
END $$;

CREATE FUNCTION cost_rollups_derive() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM cost_rollups_add(OLD, -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM cost_rollups_add(NEW, 1);
  END IF;
  RETURN NULL;
END $$;

-- A write to a derived table straight from a statement (trigger depth 1)
-- is skipped; one from cost_rollups_derive (depth 2) goes through.
CREATE FUNCTION cost_rollups_only_derived() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() < 2 THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END $$;

-- The rebuild, before the triggers exist: both tables summed afresh from
-- cost_daily_rollups, as 0010 and 0013 did once.
DELETE FROM cost_daily_pool_rollups;
DELETE FROM cost_daily_sku_rollups;
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
FROM cost_daily_rollups
GROUP BY day, sku_id;

CREATE TRIGGER cost_daily_rollups_derive
  AFTER INSERT OR UPDATE OR DELETE ON cost_daily_rollups
  FOR EACH ROW EXECUTE FUNCTION cost_rollups_derive();
CREATE TRIGGER cost_daily_pool_rollups_only_derived
  BEFORE INSERT OR UPDATE ON cost_daily_pool_rollups
  FOR EACH ROW EXECUTE FUNCTION cost_rollups_only_derived();
CREATE TRIGGER cost_daily_sku_rollups_only_derived
  BEFORE INSERT OR UPDATE ON cost_daily_sku_rollups
  FOR EACH ROW EXECUTE FUNCTION cost_rollups_only_derived();
