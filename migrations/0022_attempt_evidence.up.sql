-- Failures counted where they happen: per failed ATTEMPT (a run's retries
-- are failed attempts), and each run's wall time counted only as far as its
-- steps explain it (core/evidence/run_attempts.h, which this mirrors; the
-- two are held to agree by tests/storage/failure_evidence_test.cc).
--
-- 1. benchmark_runs.retry_outcomes: why each retried attempt failed, when
--    the run said (BenchmarkRun.retry_outcomes; NULL: not said, and each
--    retry takes the run's outcome as its cause, FAILED for a run that
--    succeeded).
-- 2. placement_run_attempts(run): one run as its attempts: attempts,
--    failed attempts by cause, the wall microseconds counted (at most the
--    steps' time plus 1800 s an attempt: a start-up, a relaunch and a
--    failure's detection), the start-up per attempt and the microseconds
--    lost to failed attempts (counted - kept, less one attempt's start-up
--    for a run that succeeded).
-- 3. evidence_rollups gains, per (recipe key, SKU): counted and lost
--    GPU-microseconds, the failed attempts of the pool's nodes (preempted,
--    hardware error) and of its fabric (collective timeout), the succeeded runs' attempts and counted
--    GPU-microseconds, a histogram of their
--    start-up per attempt (seconds, core::kStartupHistogram, weighted by
--    attempts) and one of every run's mean step time (core::kStepTimeHistogram,
--    one count a run). pool_reliability_rollups gains, per pool and GPU
--    scope: attempts, counted wall microseconds, failed attempts by the
--    pool's causes and the microseconds they lost (each run's lost time
--    shared over its failed attempts), and a histogram of each run's
--    counted hours with the exact microseconds of each bucket's runs
--    (core::PoolReliabilityRollup::ExposureHours bounds one run's weight
--    by them).
--    Both are added by deferred constraint triggers at commit, as 0017's
--    are (whichever binary stored the run: no binary writes them).
--
-- Locks: none long. The new columns have constant defaults (no rewrite;
-- ACCESS EXCLUSIVE on evidence_rollups and pool_reliability_rollups for
-- the ALTER only, ms). CREATE TRIGGER takes SHARE ROW EXCLUSIVE on
-- benchmark_runs, which waits for uploads in flight and holds new ones until
-- this transaction commits: it scans nothing. Runs stored before it are
-- marked (attempts_counted false: the column is added with DEFAULT false,
-- then its default is set to true for every later insert) and counted by
-- the backfill step 0022_attempt_evidence (placement_backfill_run_attempts,
-- storage/backfills.h), which `placementd migrate up` runs after the
-- migrations, batch by batch, each batch its own short transaction. A batch
-- counts a run and flips its mark in one statement, so nothing is counted
-- twice or missed, and a rerun from the start (after down and up) finds
-- only unmarked runs.
--
-- schema_compatibility: unchanged (14). Older binaries store runs without
-- retry_outcomes (their retries take the run's outcome, which is what they
-- knew) and read only 0017's columns, which 0017's triggers keep.

-- IF NOT EXISTS: 0022's down keeps the runs' retry causes (they exist
-- nowhere else the database can read), so an up after a down finds them.
ALTER TABLE benchmark_runs
  ADD COLUMN IF NOT EXISTS retry_outcomes text[],
  ADD COLUMN attempts_counted boolean NOT NULL DEFAULT false;
ALTER TABLE benchmark_runs ALTER COLUMN attempts_counted SET DEFAULT true;

-- What placement_run_attempts reads of a run (small: no upload bytes).
CREATE TYPE placement_run_figures AS (
  recipe_key text,
  sku_id text,
  pool_name text,
  gpu_count integer,
  retries integer,
  outcome text,
  retry_outcomes text[],
  gpu_microseconds bigint,
  steps_attempted bigint,
  steps_succeeded bigint,
  step_time_mean_s float8
);

CREATE FUNCTION placement_run_figures_of(r benchmark_runs)
RETURNS placement_run_figures LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW(r.recipe_key, r.sku_id, r.pool_name, r.gpu_count, r.retries,
             r.outcome, r.retry_outcomes, r.gpu_microseconds,
             r.steps_attempted, r.steps_succeeded,
             r.step_time_mean_s)::placement_run_figures
$$;

CREATE TYPE placement_run_attempts AS (
  attempts bigint,
  failed_attempts bigint,
  preempted_attempts bigint,
  hardware_error_attempts bigint,
  collective_timeout_attempts bigint,
  counted_us float8,
  startup_s float8,
  lost_us float8,
  pool_lost_us float8
);

CREATE FUNCTION placement_run_attempts(r placement_run_figures)
RETURNS placement_run_attempts LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  a placement_run_attempts;
  succeeded boolean := r.outcome = 'SUCCEEDED';
  -- The cause of a retry the run did not name.
  retry_cause text := CASE WHEN r.outcome = 'SUCCEEDED' THEN 'FAILED'
                           ELSE r.outcome END;
  causes text[];
  wall_us float8 := r.gpu_microseconds::float8 / r.gpu_count;
  busy_us float8;
  kept_us float8;
  pool_failures bigint;
BEGIN
  causes := CASE WHEN cardinality(r.retry_outcomes) > 0 THEN r.retry_outcomes
                 ELSE array_fill(retry_cause, ARRAY[r.retries]) END;
  IF NOT succeeded THEN causes := causes || r.outcome; END IF;
  a.attempts := r.retries + 1;
  a.failed_attempts := r.retries + (NOT succeeded)::int;
  SELECT count(*) FILTER (WHERE c = 'PREEMPTED'),
         count(*) FILTER (WHERE c = 'HARDWARE_ERROR'),
         count(*) FILTER (WHERE c = 'COLLECTIVE_TIMEOUT')
    INTO a.preempted_attempts, a.hardware_error_attempts,
         a.collective_timeout_attempts
    FROM unnest(causes) AS c;
  busy_us := least(wall_us, r.steps_attempted * r.step_time_mean_s * 1e6);
  a.counted_us := least(wall_us, busy_us + a.attempts * 1800e6);
  a.startup_s := (a.counted_us - busy_us) / a.attempts / 1e6;
  kept_us := least(busy_us, r.steps_succeeded * r.step_time_mean_s * 1e6);
  a.lost_us := CASE WHEN a.failed_attempts > 0
                    THEN greatest(0, a.counted_us - kept_us
                                     - CASE WHEN succeeded
                                            THEN a.startup_s * 1e6 ELSE 0 END)
                    ELSE 0 END;
  pool_failures := a.preempted_attempts + a.hardware_error_attempts
                   + a.collective_timeout_attempts;
  a.pool_lost_us := CASE WHEN a.failed_attempts > 0
                         THEN a.lost_us * pool_failures / a.failed_attempts
                         ELSE 0 END;
  RETURN a;
END $$;

-- The bucket of `value` in a core::LogHistogramSpec (core/evidence/evidence.cc,
-- LogHistogram::BucketOf), 0-based.
CREATE FUNCTION placement_log_bucket(value float8, lowest float8,
                                     growth float8, buckets int)
RETURNS int LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN value > lowest
              THEN least(buckets - 1,
                         greatest(0, floor(ln(value / lowest) / ln(growth))::int))
              ELSE 0 END
$$;

-- A 64-bucket count array with `weight` in `bucket` (0-based).
CREATE FUNCTION placement_one_count(bucket int, weight bigint)
RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_fill(0::bigint, ARRAY[bucket])
         || weight || array_fill(0::bigint, ARRAY[63 - bucket])
$$;

CREATE AGGREGATE placement_sum_counts(bigint[]) (
  SFUNC = placement_add_counts,
  STYPE = bigint[],
  INITCOND = '{0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}'
);

ALTER TABLE evidence_rollups
  ADD COLUMN counted_gpu_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN lost_gpu_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN node_failed_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN fabric_failed_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_counted_gpu_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN startup_hist bigint[] NOT NULL
    DEFAULT array_fill(0::bigint, ARRAY[64]),
  ADD COLUMN step_time_mean_hist bigint[] NOT NULL
    DEFAULT array_fill(0::bigint, ARRAY[64]);

ALTER TABLE pool_reliability_rollups
  ADD COLUMN attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN counted_run_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN preempted_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN hardware_error_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN collective_timeout_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN attempt_lost_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN run_hours_hist bigint[] NOT NULL
    DEFAULT array_fill(0::bigint, ARRAY[64]),
  ADD COLUMN run_microseconds_by_bucket bigint[] NOT NULL
    DEFAULT array_fill(0::bigint, ARRAY[64]);

-- What a set of runs of one (recipe key, SKU), or of one pool and GPU
-- scope, adds: the trigger adds one run, a backfill batch many.
CREATE FUNCTION evidence_rollups_add_attempts(runs placement_run_figures[])
RETURNS void LANGUAGE sql AS $$
  UPDATE evidence_rollups e
  SET counted_gpu_microseconds = e.counted_gpu_microseconds + d.counted,
      lost_gpu_microseconds = e.lost_gpu_microseconds + d.lost,
      node_failed_attempts = e.node_failed_attempts + d.node,
      fabric_failed_attempts = e.fabric_failed_attempts + d.fabric,
      succeeded_attempts = e.succeeded_attempts + d.succeeded_attempts,
      succeeded_counted_gpu_microseconds =
        e.succeeded_counted_gpu_microseconds + d.succeeded_counted,
      startup_hist = placement_add_counts(e.startup_hist, d.startup),
      step_time_mean_hist = placement_add_counts(e.step_time_mean_hist, d.step),
      updated_at = now()
  FROM (
    SELECT min((r).recipe_key) AS recipe_key, min((r).sku_id) AS sku_id,
           coalesce(sum(round((r).gpu_count * (a).counted_us)), 0)::bigint
             AS counted,
           coalesce(sum(round((r).gpu_count * (a).lost_us)), 0)::bigint AS lost,
           coalesce(sum((a).preempted_attempts + (a).hardware_error_attempts),
                    0) AS node,
           coalesce(sum((a).collective_timeout_attempts), 0) AS fabric,
           coalesce(sum((a).attempts) FILTER (WHERE (r).outcome = 'SUCCEEDED'),
                    0) AS succeeded_attempts,
           coalesce(sum(round((r).gpu_count * (a).counted_us))
                      FILTER (WHERE (r).outcome = 'SUCCEEDED'), 0)::bigint
             AS succeeded_counted,
           coalesce(placement_sum_counts(placement_one_count(
             placement_log_bucket(greatest(0.5, round((a).startup_s)),
                                  1, 1.189207115, 64),
             (a).attempts)) FILTER (WHERE (r).outcome = 'SUCCEEDED'),
             array_fill(0::bigint, ARRAY[64])) AS startup,
           coalesce(placement_sum_counts(placement_one_count(
             placement_log_bucket((r).step_time_mean_s, 0.01, 1.189207115, 64),
             1)) FILTER (WHERE (r).steps_attempted > 0),
             array_fill(0::bigint, ARRAY[64])) AS step
    FROM (SELECT x AS r, placement_run_attempts(x) AS a
          FROM unnest(runs) AS x) t
  ) d
  WHERE e.recipe_key = d.recipe_key AND e.sku_id = d.sku_id
$$;

CREATE FUNCTION pool_reliability_add_attempts(runs placement_run_figures[])
RETURNS void LANGUAGE sql AS $$
  INSERT INTO pool_reliability_rollups AS p (
    pool_name, multi_gpu, runs, run_microseconds, preempted_runs,
    hardware_error_runs, collective_timeout_runs, failure_lost_microseconds,
    attempts, counted_run_microseconds, preempted_attempts,
    hardware_error_attempts, collective_timeout_attempts,
    attempt_lost_microseconds, run_hours_hist, run_microseconds_by_bucket)
  SELECT min((r).pool_name), min((r).gpu_count) > 1, 0, 0, 0, 0, 0, 0,
         coalesce(sum((a).attempts), 0),
         coalesce(sum(round((a).counted_us)), 0),
         coalesce(sum((a).preempted_attempts), 0),
         coalesce(sum((a).hardware_error_attempts), 0),
         coalesce(sum((a).collective_timeout_attempts), 0),
         coalesce(sum(round((a).pool_lost_us)), 0),
         placement_sum_counts(placement_one_count(bucket, 1)),
         placement_sum_counts(
           placement_one_count(bucket, round((a).counted_us)::bigint))
  FROM (SELECT x AS r, a,
               -- core::kRunHoursHistogram: 1 minute, 2^(1/4).
               placement_log_bucket((a).counted_us / 3.6e9, 1.0 / 60,
                                    1.189207115, 64) AS bucket
        FROM unnest(runs) AS x, placement_run_attempts(x) AS a) t
  HAVING count(*) > 0
  ON CONFLICT (pool_name, multi_gpu) DO UPDATE SET
    attempts = p.attempts + EXCLUDED.attempts,
    counted_run_microseconds =
      p.counted_run_microseconds + EXCLUDED.counted_run_microseconds,
    preempted_attempts = p.preempted_attempts + EXCLUDED.preempted_attempts,
    hardware_error_attempts =
      p.hardware_error_attempts + EXCLUDED.hardware_error_attempts,
    collective_timeout_attempts =
      p.collective_timeout_attempts + EXCLUDED.collective_timeout_attempts,
    attempt_lost_microseconds =
      p.attempt_lost_microseconds + EXCLUDED.attempt_lost_microseconds,
    run_hours_hist = placement_add_counts(p.run_hours_hist,
                                          EXCLUDED.run_hours_hist),
    run_microseconds_by_bucket = placement_add_counts(
      p.run_microseconds_by_bucket, EXCLUDED.run_microseconds_by_bucket),
    updated_at = now()
$$;

CREATE FUNCTION benchmark_runs_add_attempts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT NEW.attempts_counted THEN RETURN NULL; END IF;  -- the backfill's
  PERFORM evidence_rollups_add_attempts(ARRAY[placement_run_figures_of(NEW)]);
  PERFORM pool_reliability_add_attempts(ARRAY[placement_run_figures_of(NEW)]);
  RETURN NULL;
END $$;

-- Named to run after 0017's (deferred triggers of one event fire in name
-- order): 0017's pool upsert creates the row this one adds to, and the
-- binary's own evidence upsert created the evidence row before commit.
CREATE CONSTRAINT TRIGGER benchmark_runs_add_to_zz_attempts
  AFTER INSERT ON benchmark_runs
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION benchmark_runs_add_attempts();

-- One batch of the backfill: up to `batch_size` runs after `after` (a
-- run_id) are looked at; those stored before this migration are counted
-- and marked. Returns the last run_id looked at, NULL when none is left.
-- Each call is one transaction (the runner's); concurrent uploads wait only
-- for the rollup rows a batch touches, for the batch's duration.
CREATE FUNCTION placement_backfill_run_attempts(after text, batch_size integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  last_id uuid;
  marked placement_run_figures[];
  g record;
BEGIN
  SELECT run_id INTO last_id
  FROM (SELECT run_id FROM benchmark_runs
        WHERE after IS NULL OR run_id > after::uuid
        ORDER BY run_id LIMIT batch_size) s
  ORDER BY run_id DESC LIMIT 1;
  IF last_id IS NULL THEN RETURN NULL; END IF;
  WITH m AS (
    UPDATE benchmark_runs r SET attempts_counted = true
    WHERE (after IS NULL OR r.run_id > after::uuid) AND r.run_id <= last_id
      AND NOT r.attempts_counted
    RETURNING placement_run_figures_of(r) AS f)
  SELECT array_agg(f) INTO marked FROM m;
  -- Evidence rows first, then pools: the order every upload takes them in.
  FOR g IN SELECT array_agg(x) AS runs FROM unnest(marked) AS x
           GROUP BY x.recipe_key, x.sku_id ORDER BY x.recipe_key, x.sku_id LOOP
    PERFORM evidence_rollups_add_attempts(g.runs);
  END LOOP;
  FOR g IN SELECT array_agg(x) AS runs FROM unnest(marked) AS x
           GROUP BY x.pool_name, x.gpu_count > 1
           ORDER BY x.pool_name, x.gpu_count > 1 LOOP
    PERFORM pool_reliability_add_attempts(g.runs);
  END LOOP;
  RETURN last_id::text;
END $$;

INSERT INTO schema_backfills (name, migration, position, batch_function)
VALUES ('0022_attempt_evidence', 22, 1, 'placement_backfill_run_attempts');
