-- What the planner prices start-up and failures from (core/evidence:
-- EvidenceRollup's busy and succeeded GPU time, PoolReliabilityRollup), and
-- the cost report counting successful steps the way the planner does.
--
-- 1. evidence_rollups gains, per (recipe key, SKU), in GPU-microseconds:
--      busy_gpu_microseconds: sum over runs of
--        least(gpu_microseconds, gpu_count x steps_attempted x
--              step_time_mean_s x 1e6), each run rounded to a microsecond;
--      succeeded_gpu_microseconds, succeeded_busy_gpu_microseconds: the
--        same two sums (GPU time, busy GPU time) over succeeded runs only.
--    (EvidenceRollup::Add; the planner reads them / 3.6e9 as hours.)
-- 2. pool_reliability_rollups, one row per pool and GPU scope (multi_gpu:
--    gpu_count > 1): runs, run_microseconds (wall time, ended - started),
--    the PREEMPTED, HARDWARE_ERROR and COLLECTIVE_TIMEOUT runs, and over
--    those failed runs failure_lost_microseconds = wall time - steps_succeeded
--    x step_time_mean_s, floored at 0 (PoolReliabilityRollup::Add).
--
-- Both are derived BY THE DATABASE from each benchmark_runs insert, whichever
-- binary stored the run (docs/RELIABILITY.md "Schema upgrades": binaries
-- built for 14 to 16 know nothing of them and must stay correct), and no
-- binary writes them:
--   * pool_reliability_rollups: an upsert per run;
--   * the evidence_rollups columns: an UPDATE of the run's (recipe key, SKU)
--     row. That row is created or updated by the binary's own upsert, which
--     comes AFTER the run insert in its transaction, so a plain AFTER INSERT
--     trigger would find no row for a new key. Both triggers are therefore
--     DEFERRABLE INITIALLY DEFERRED constraint triggers: they run at COMMIT,
--     after the binary's statements, once per run actually inserted (a retry
--     that hits ON CONFLICT DO NOTHING inserts nothing and adds nothing).
--     Under concurrent uploads of the same key this is exact: the binary's
--     upsert already holds the rollup row's lock, so the deferred UPDATE
--     waits for no one and adds to the version that upsert wrote; a second
--     upload of the key waits on that lock until the first commits and then
--     (READ COMMITTED) upserts and adds to the committed row. Nothing is lost
--     or counted twice, and no new lock order appears (every transaction
--     takes benchmark_runs, then its evidence row, then the cost rows, then,
--     at commit, its pool row). A trigger on evidence_rollups instead could
--     not tell which run an upsert was for. Deferring the pool upsert to
--     COMMIT also keeps the one row per pool locked for the commit only, not
--     for the whole upload.
--
-- 3. cost_run_facts (what every binary's cost rollup statement reads) counts
--    successful steps one way with the planner: successful_steps is
--    steps_succeeded of EVERY run (steps a failed run kept through its
--    checkpoints count; a failed run that kept none adds 0, as before), and a
--    failed run's wasted GPU time is its GPU time on steps that did not
--    succeed, gpu_us x (attempted - succeeded) / attempted (all of it when it
--    attempted none), as a succeeded run's already was. successful_runs is
--    still by outcome. Cost rollup rows already stored are NOT recomputed:
--    runs stored before this migration keep the old counting (no successful
--    steps and all-wasted GPU time for failed runs).
--
-- Locks: SHARE ROW EXCLUSIVE on benchmark_runs from the start (uploads wait,
-- reads do not), so that every run is either summed by the backfill or
-- counted by the triggers, never both and never neither. The backfill's scan
-- of benchmark_runs runs into a temporary table BEFORE evidence_rollups is
-- altered, so the ACCESS EXCLUSIVE lock that ADD COLUMN takes on
-- evidence_rollups (no rewrite: constant defaults) is held only while its
-- rows (keys, not runs) are updated; replicas' refreshes wait that long or
-- time out and retry, and keep serving their last snapshot meanwhile. The
-- scan itself is one pass over benchmark_runs: on a very large table, apply
-- in a quiet hour (uploads wait for it, and answer UNAVAILABLE past their
-- 2 s lock timeout, which agents retry).
--
-- schema_compatibility: still every binary built for 14 or later, since the
-- new figures do not depend on the writer.

LOCK TABLE benchmark_runs IN SHARE ROW EXCLUSIVE MODE;

UPDATE schema_compatibility SET oldest_binary_version = 14;

-- One run's figures in GPU-microseconds (pool figures in wall microseconds).
-- gpu_count > 0, step_time_mean_s > 0, 0 <= steps_succeeded <=
-- steps_attempted and ended_at >= started_at are CHECKs of benchmark_runs.
CREATE FUNCTION placement_run_busy_gpu_us(r benchmark_runs)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT round(least(r.gpu_microseconds::float8,
                     r.gpu_count::float8 * r.steps_attempted
                       * r.step_time_mean_s * 1e6))::bigint
$$;

CREATE FUNCTION placement_run_failure_lost_us(r benchmark_runs)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN r.outcome IN ('PREEMPTED', 'HARDWARE_ERROR',
                                 'COLLECTIVE_TIMEOUT')
         THEN round(greatest(0, (r.gpu_microseconds / r.gpu_count)::float8
                                - r.steps_succeeded * r.step_time_mean_s
                                  * 1e6))::bigint
         ELSE 0 END
$$;

CREATE TEMPORARY TABLE evidence_busy_backfill ON COMMIT DROP AS
SELECT recipe_key, sku_id,
       sum(placement_run_busy_gpu_us(r)) AS busy,
       sum(CASE WHEN outcome = 'SUCCEEDED' THEN gpu_microseconds ELSE 0 END)
         AS succeeded,
       sum(CASE WHEN outcome = 'SUCCEEDED'
                THEN placement_run_busy_gpu_us(r) ELSE 0 END)
         AS succeeded_busy
FROM benchmark_runs r
GROUP BY recipe_key, sku_id;

CREATE TEMPORARY TABLE pool_reliability_backfill ON COMMIT DROP AS
SELECT pool_name, gpu_count > 1 AS multi_gpu, count(*) AS runs,
       sum(gpu_microseconds / gpu_count) AS run_us,
       count(*) FILTER (WHERE outcome = 'PREEMPTED') AS preempted,
       count(*) FILTER (WHERE outcome = 'HARDWARE_ERROR') AS hardware_error,
       count(*) FILTER (WHERE outcome = 'COLLECTIVE_TIMEOUT')
         AS collective_timeout,
       sum(placement_run_failure_lost_us(r)) AS lost_us
FROM benchmark_runs r
GROUP BY pool_name, gpu_count > 1;

ALTER TABLE evidence_rollups
  ADD COLUMN busy_gpu_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_gpu_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_busy_gpu_microseconds bigint NOT NULL DEFAULT 0;

-- Rollups whose runs are no longer all stored get what the stored runs give
-- (as 0012's peaks did); the UPDATE stamps change_xid, so replicas re-read
-- these rows on their next incremental refresh.
UPDATE evidence_rollups AS e
SET busy_gpu_microseconds = b.busy,
    succeeded_gpu_microseconds = b.succeeded,
    succeeded_busy_gpu_microseconds = b.succeeded_busy
FROM evidence_busy_backfill b
WHERE e.recipe_key = b.recipe_key AND e.sku_id = b.sku_id;

-- Tiny: pools x 2 rows. Replicas read it whole on every refresh.
CREATE TABLE pool_reliability_rollups (
  pool_name                  text NOT NULL,
  multi_gpu                  boolean NOT NULL,
  runs                       bigint NOT NULL,
  run_microseconds           bigint NOT NULL,
  preempted_runs             bigint NOT NULL,
  hardware_error_runs        bigint NOT NULL,
  collective_timeout_runs    bigint NOT NULL,
  failure_lost_microseconds  bigint NOT NULL,
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pool_name, multi_gpu)
);

INSERT INTO pool_reliability_rollups (
  pool_name, multi_gpu, runs, run_microseconds, preempted_runs,
  hardware_error_runs, collective_timeout_runs, failure_lost_microseconds)
SELECT pool_name, multi_gpu, runs, run_us, preempted, hardware_error,
       collective_timeout, lost_us
FROM pool_reliability_backfill;

CREATE FUNCTION evidence_rollups_add_run_busy() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  busy_us bigint := placement_run_busy_gpu_us(NEW);
  succeeded boolean := NEW.outcome = 'SUCCEEDED';
BEGIN
  UPDATE evidence_rollups
  SET busy_gpu_microseconds = busy_gpu_microseconds + busy_us,
      succeeded_gpu_microseconds = succeeded_gpu_microseconds
        + CASE WHEN succeeded THEN NEW.gpu_microseconds ELSE 0 END,
      succeeded_busy_gpu_microseconds = succeeded_busy_gpu_microseconds
        + CASE WHEN succeeded THEN busy_us ELSE 0 END,
      updated_at = now()
  WHERE recipe_key = NEW.recipe_key AND sku_id = NEW.sku_id;
  RETURN NULL;
END $$;

CREATE FUNCTION pool_reliability_add_run() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pool_reliability_rollups AS p (
    pool_name, multi_gpu, runs, run_microseconds, preempted_runs,
    hardware_error_runs, collective_timeout_runs, failure_lost_microseconds)
  VALUES (NEW.pool_name, NEW.gpu_count > 1, 1,
          NEW.gpu_microseconds / NEW.gpu_count,
          (NEW.outcome = 'PREEMPTED')::int,
          (NEW.outcome = 'HARDWARE_ERROR')::int,
          (NEW.outcome = 'COLLECTIVE_TIMEOUT')::int,
          placement_run_failure_lost_us(NEW))
  ON CONFLICT (pool_name, multi_gpu) DO UPDATE SET
    runs = p.runs + EXCLUDED.runs,
    run_microseconds = p.run_microseconds + EXCLUDED.run_microseconds,
    preempted_runs = p.preempted_runs + EXCLUDED.preempted_runs,
    hardware_error_runs = p.hardware_error_runs + EXCLUDED.hardware_error_runs,
    collective_timeout_runs =
      p.collective_timeout_runs + EXCLUDED.collective_timeout_runs,
    failure_lost_microseconds =
      p.failure_lost_microseconds + EXCLUDED.failure_lost_microseconds,
    updated_at = now();
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER benchmark_runs_add_to_evidence_busy
  AFTER INSERT ON benchmark_runs
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION evidence_rollups_add_run_busy();
CREATE CONSTRAINT TRIGGER benchmark_runs_add_to_pool_reliability
  AFTER INSERT ON benchmark_runs
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION pool_reliability_add_run();

-- Same columns, names and types as 0004's (CREATE OR REPLACE keeps the
-- dashboards role's grant).
CREATE OR REPLACE VIEW cost_run_facts AS
SELECT run_id,
       (ended_at AT TIME ZONE 'UTC')::date AS day,
       pool_name, sku_id, recipe_key, model, method, team, outcome,
       (outcome = 'SUCCEEDED')::int AS successful_runs,
       retries, steps_attempted,
       steps_succeeded AS successful_steps,
       gpu_microseconds,
       CASE
         WHEN steps_attempted = 0 AND outcome <> 'SUCCEEDED'
           THEN gpu_microseconds
         WHEN steps_attempted = 0 THEN 0
         ELSE round(gpu_microseconds::numeric * (steps_attempted - steps_succeeded)
                    / steps_attempted)::bigint
       END AS wasted_gpu_microseconds
FROM benchmark_runs;
