-- The cost rollups recounted by one definition: rows that still count runs
-- stored before migration 0017 the way 0004 did (a failed run: no
-- successful steps, all of its GPU time wasted) are recounted by
-- cost_run_facts as it is now (0017: a failed run adds the steps its
-- checkpoints kept, and wastes its GPU time on the others), so that a report
-- over any range reads one definition. docs/FINANCE.md states it.
--
-- Which stored runs were counted the old way? What the schema recorded:
--   * Every release's upload inserts the run as the first statement of its
--     transaction, then adds the run's cost_run_facts row to the rollups in
--     the same transaction. 0017 replaced the view in a transaction that
--     first took SHARE ROW EXCLUSIVE on benchmark_runs and held it to its
--     commit. So a run was counted the old way exactly when its upload
--     inserted it before 0017 took that lock; an upload that began before
--     0017 but reached its INSERT after waited for the lock and was counted
--     the new way.
--   * schema_migrations.applied_at is now() of 0017's transaction: when it
--     BEGAN, and a run's accepted_at is when its upload began. Comparing
--     them misreads the uploads that straddled 0017: one begun just before
--     whose INSERT waited on the lock (counted new, accepted before), and
--     one begun between 0017's BEGIN and its LOCK (counted old, accepted
--     after).
--   * Transaction ids tell it exactly in a plain history: a run's
--     evidence_version (0008) is its upload's transaction id, assigned in
--     its INSERT, under the lock that conflicts with 0017's; 0017's own id
--     was assigned after it held its lock (at its first write) and is the
--     xmin of its schema_migrations row. Counted old <=> evidence_version
--     below that id, or NULL (stored before 0008). But xmin is 32 bits with
--     no epoch (ambiguous after 2^32 transactions, weeks of sample appends
--     on a large fleet), a dump and restore renumbers every xmin while the
--     runs keep their old cluster's ids, and a `migrate down` below 17 and
--     up again leaves no trace of the first 17 (runs stored under it would
--     read as old and be counted twice).
-- So this migration does not classify runs. It recounts the rollup rows
-- from their runs, which is right whichever way each run was counted, in
-- each of those histories, and gives the same rows when done twice:
--   * 0017 changed only successful_steps and wasted_gpu_microseconds, and
--     only for runs whose outcome is not SUCCEEDED; runs, retries, steps
--     attempted, GPU time and the money (each run's GPU time x the rates
--     when it was stored) are the same under both, and are not touched.
--   * A cost_daily_rollups row of a failed outcome sums exactly the stored
--     runs with its key (day, pool, SKU, recipe key, model, method, team,
--     outcome): runs are never deleted, and each is added once, in its own
--     transaction (0004 and 0016's rebuilds included). A row whose stored
--     runs are fewer than its `runs` (runs deleted by hand) cannot be
--     recounted and is left as it is.
--
-- How, in two backfill steps that `placementd migrate up` runs after this
-- migration and before it returns (storage/backfills.h), each batch one
-- short transaction with its cursor, so a rerun after a crash continues:
--   1. 0027_cost_recount_stage walks benchmark_runs by run_id and sums each
--      batch's failed runs, as cost_run_facts counts them now, per rollup
--      key into cost_recount_rows. It reads runs and writes only that table.
--   2. 0027_cost_recount_apply walks cost_recount_rows. Per batch: the keys
--      whose rollup row disagrees with the staged sums; their rollup rows
--      locked, then their (day, pool, SKU) rows, then their (day, SKU) rows,
--      each in key order (an upload locks one of each, in that order, so
--      the two never wait for each other in a cycle); then, under the
--      locks, a row whose `runs` equals the staged count holds exactly the
--      staged runs (every staged run is stored and in it) and takes the
--      staged sums; a row with more runs gained them during the backfill
--      and is summed afresh from all its runs, in a statement after its lock
--      was taken (an upload that has inserted a run of it waits for the
--      lock and adds its own figures, by the current view, after: its
--      uncommitted run is not in the sum). The trigger of 0016 carries each
--      change to the pool and SKU rows. The last batch empties the staging.
-- Uploads meanwhile, by any release of the window, add their runs by the
-- current view, as before: each is counted once, by its upload, and the
-- recount only ever sets a row to what its runs give.
--
-- Locks: none on a table; the row locks of one batch's rows, for that
-- batch (milliseconds). The rows recounted hold runs that ended before
-- 0017, which new uploads rarely add to. While the steps run, a report may
-- read some rows recounted and some not yet, as every report did before
-- them; a binary started after `migrate up` returned reads one definition.
--
-- schema_compatibility: unchanged (every binary built for 14 or later):
-- nothing any binary reads or writes changes shape.

CREATE TABLE cost_recount_rows (
  id                       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  day                      date NOT NULL,
  pool_name                text NOT NULL,
  sku_id                   text NOT NULL,
  recipe_key               text NOT NULL,
  model                    text NOT NULL,
  method                   text NOT NULL,
  team                     text NOT NULL,
  outcome                  text NOT NULL,
  runs                     bigint NOT NULL,
  successful_steps         bigint NOT NULL,
  wasted_gpu_microseconds  bigint NOT NULL,
  UNIQUE (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
);

-- Step 1: one batch of benchmark_runs after run_id `after`.
CREATE FUNCTION placement_cost_recount_stage(after text, batch_size integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
BEGIN
  IF after IS NULL THEN
    SELECT array_agg(run_id ORDER BY run_id) INTO ids
    FROM (SELECT run_id FROM benchmark_runs
          ORDER BY run_id LIMIT batch_size) b;
  ELSE
    SELECT array_agg(run_id ORDER BY run_id) INTO ids
    FROM (SELECT run_id FROM benchmark_runs WHERE run_id > after::uuid
          ORDER BY run_id LIMIT batch_size) b;
  END IF;
  IF ids IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO cost_recount_rows AS s (
    day, pool_name, sku_id, recipe_key, model, method, team, outcome, runs,
    successful_steps, wasted_gpu_microseconds)
  SELECT day, pool_name, sku_id, recipe_key, model, method, team, outcome,
         count(*), sum(successful_steps), sum(wasted_gpu_microseconds)
  FROM cost_run_facts
  WHERE run_id = ANY (ids) AND outcome <> 'SUCCEEDED'
  GROUP BY day, pool_name, sku_id, recipe_key, model, method, team, outcome
  ON CONFLICT (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
  DO UPDATE SET
    runs = s.runs + EXCLUDED.runs,
    successful_steps = s.successful_steps + EXCLUDED.successful_steps,
    wasted_gpu_microseconds =
      s.wasted_gpu_microseconds + EXCLUDED.wasted_gpu_microseconds;
  RETURN ids[array_upper(ids, 1)]::text;
END $$;

-- Step 2: one batch of cost_recount_rows after id `after`. Each statement
-- of a plpgsql function reads with its own snapshot (READ COMMITTED), so
-- the sums taken after the locks see every upload committed before them.
CREATE FUNCTION placement_cost_recount_apply(after text, batch_size integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  first_id bigint := coalesce(after::bigint, 0);
  last_id bigint;
BEGIN
  SELECT max(id) INTO last_id
  FROM (SELECT id FROM cost_recount_rows WHERE id > first_id
        ORDER BY id LIMIT batch_size) b;
  IF last_id IS NULL THEN
    TRUNCATE cost_recount_rows;
    RETURN NULL;
  END IF;

  CREATE TEMPORARY TABLE IF NOT EXISTS cost_recount_batch (
    day date, pool_name text, sku_id text, recipe_key text, model text,
    method text, team text, outcome text, runs bigint,
    successful_steps bigint, wasted_gpu_microseconds bigint
  ) ON COMMIT DELETE ROWS;
  INSERT INTO cost_recount_batch
  SELECT s.day, s.pool_name, s.sku_id, s.recipe_key, s.model, s.method,
         s.team, s.outcome, s.runs, s.successful_steps,
         s.wasted_gpu_microseconds
  FROM cost_recount_rows s
  JOIN cost_daily_rollups d
    USING (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
  WHERE s.id > first_id AND s.id <= last_id
    AND (d.runs, d.successful_steps, d.wasted_gpu_microseconds)
        IS DISTINCT FROM (s.runs, s.successful_steps, s.wasted_gpu_microseconds);
  IF NOT FOUND THEN
    RETURN last_id::text;
  END IF;

  PERFORM 1
  FROM cost_daily_rollups d
  JOIN cost_recount_batch b
    USING (day, pool_name, sku_id, recipe_key, model, method, team, outcome)
  ORDER BY d.day, d.pool_name, d.sku_id, d.recipe_key, d.model, d.method,
           d.team, d.outcome
  FOR UPDATE OF d;
  PERFORM 1 FROM cost_daily_pool_rollups
  WHERE (day, pool_name, sku_id) IN
        (SELECT day, pool_name, sku_id FROM cost_recount_batch)
  ORDER BY day, pool_name, sku_id
  FOR UPDATE;
  PERFORM 1 FROM cost_daily_sku_rollups
  WHERE (day, sku_id) IN (SELECT day, sku_id FROM cost_recount_batch)
  ORDER BY day, sku_id
  FOR UPDATE;

  -- Rows that hold exactly the staged runs.
  UPDATE cost_daily_rollups d
  SET successful_steps = b.successful_steps,
      wasted_gpu_microseconds = b.wasted_gpu_microseconds,
      updated_at = now()
  FROM cost_recount_batch b
  WHERE (d.day, d.pool_name, d.sku_id, d.recipe_key, d.model, d.method,
         d.team, d.outcome)
        = (b.day, b.pool_name, b.sku_id, b.recipe_key, b.model, b.method,
           b.team, b.outcome)
    AND d.runs = b.runs
    AND (d.successful_steps, d.wasted_gpu_microseconds)
        IS DISTINCT FROM (b.successful_steps, b.wasted_gpu_microseconds);
  DELETE FROM cost_recount_batch b
  USING cost_daily_rollups d
  WHERE (d.day, d.pool_name, d.sku_id, d.recipe_key, d.model, d.method,
         d.team, d.outcome)
        = (b.day, b.pool_name, b.sku_id, b.recipe_key, b.model, b.method,
           b.team, b.outcome)
    AND d.runs = b.runs;

  -- Rows that gained runs since they were staged: summed from all of their
  -- runs (rare: uploads of runs that ended on those days).
  UPDATE cost_daily_rollups d
  SET successful_steps = r.successful_steps,
      wasted_gpu_microseconds = r.wasted_gpu_microseconds,
      updated_at = now()
  FROM cost_recount_batch b,
       LATERAL (
         SELECT count(*) AS runs,
                coalesce(sum(f.successful_steps), 0) AS successful_steps,
                coalesce(sum(f.wasted_gpu_microseconds), 0)
                  AS wasted_gpu_microseconds
         FROM cost_run_facts f
         WHERE f.recipe_key = b.recipe_key AND f.sku_id = b.sku_id
           AND f.day = b.day AND f.pool_name = b.pool_name
           AND f.model = b.model AND f.method = b.method
           AND f.team = b.team AND f.outcome = b.outcome) r
  WHERE (d.day, d.pool_name, d.sku_id, d.recipe_key, d.model, d.method,
         d.team, d.outcome)
        = (b.day, b.pool_name, b.sku_id, b.recipe_key, b.model, b.method,
           b.team, b.outcome)
    AND d.runs = r.runs
    AND (d.successful_steps, d.wasted_gpu_microseconds)
        IS DISTINCT FROM (r.successful_steps, r.wasted_gpu_microseconds);
  RETURN last_id::text;
END $$;

INSERT INTO schema_backfills (name, migration, position, batch_function)
VALUES ('0027_cost_recount_stage', 27, 1, 'placement_cost_recount_stage'),
       ('0027_cost_recount_apply', 27, 2, 'placement_cost_recount_apply');
