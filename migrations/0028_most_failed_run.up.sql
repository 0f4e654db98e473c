-- One run's failures counted by its share of the evidence
-- (core/evidence/most_failed_run.h, which this mirrors; held to agree by
-- tests/storage/schema/failure_evidence_test.cc). Every failed attempt a
-- run reports counts (0022), so one run reporting many, each at the most
-- wall the API accepts, priced a pool of honest runs at up to 3x their
-- cost. Each rollup row keeps its run with the most failed attempts (its
-- failed attempts, those of the pool's nodes and fabric, its attempts, its
-- counted and lost microseconds and, in evidence_rollups, the start-up
-- bucket of a succeeded run) and the next run's count; the planner counts
-- the first's failed attempts at most twice the second's, and at least
-- two (core::MostFailedRun::ExcessFailedAttempts), in rollups of four runs
-- or more.
--
-- 1. The columns, on evidence_rollups (GPU-microseconds) and
--    pool_reliability_rollups (wall microseconds, the pool's causes only).
-- 2. placement_most_failed_merge (core::MostFailedRun::Merge) and its
--    aggregate, and a deferred constraint trigger that adds each stored run
--    at commit, named to run after 0022's (whose rows it updates).
-- 3. Two backfill steps recompute the columns of the rows stored before it
--    from their runs (each row locked, then set from every run visible, so
--    an upload that commits meanwhile is counted once: by the step when it
--    committed first, by its trigger when it commits after).
--
-- Locks: none long, taken in the order an upload takes them. An upload
-- holds benchmark_runs from its INSERT to its commit and writes the rollups
-- after it (0022's and this trigger at commit), so this transaction takes
-- SHARE ROW EXCLUSIVE on benchmark_runs first (CREATE TRIGGER needs it),
-- then the two rollup tables: the other way round, an upload between the
-- ALTERs and the CREATE TRIGGER waited for the rollups while this waited
-- for it, and PostgreSQL aborted one of the two
-- (tests/storage/schema/migration_lock_order_test.cc). The new columns have
-- constant defaults (no rewrite; ACCESS EXCLUSIVE on the two rollup tables
-- for the ALTER only), and the transaction is short.
-- schema_compatibility: unchanged; older binaries never read the columns,
-- and the trigger counts the runs they store.

LOCK TABLE benchmark_runs IN SHARE ROW EXCLUSIVE MODE;

ALTER TABLE evidence_rollups
  ADD COLUMN most_failed_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_node_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_fabric_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_run_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_counted_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_lost_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_startup_bucket integer NOT NULL DEFAULT -1,
  ADD COLUMN second_failed_attempts bigint NOT NULL DEFAULT 0;

ALTER TABLE pool_reliability_rollups
  ADD COLUMN most_failed_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_node_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_fabric_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_run_attempts bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_counted_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN most_failed_lost_microseconds bigint NOT NULL DEFAULT 0,
  ADD COLUMN second_failed_attempts bigint NOT NULL DEFAULT 0;

CREATE TYPE placement_most_failed AS (
  failed bigint,
  node bigint,
  fabric bigint,
  attempts bigint,
  counted_us bigint,
  lost_us bigint,
  startup_bucket integer,
  second bigint
);

-- core::MostFailedRun::Merge: the larger first, the next count second; a
-- tie keeps only the counts (no run stands out).
CREATE FUNCTION placement_most_failed_merge(a placement_most_failed,
                                            b placement_most_failed)
RETURNS placement_most_failed LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  m placement_most_failed := a;
BEGIN
  IF b.failed > a.failed THEN
    m := b;
    m.second := greatest(a.failed, b.second);
  ELSE
    m.second := greatest(a.second, b.failed, b.second);
  END IF;
  IF m.second >= m.failed THEN
    m := ROW(m.failed, 0, 0, 0, 0, 0, -1, m.second)::placement_most_failed;
  END IF;
  RETURN m;
END $$;

CREATE AGGREGATE placement_most_failed_of(placement_most_failed) (
  SFUNC = placement_most_failed_merge,
  STYPE = placement_most_failed,
  INITCOND = '(0,0,0,0,0,0,-1,0)'
);

-- One run as its rollups' MostFailedRun: in evidence_rollups every failed
-- attempt, in GPU-microseconds, with the start-up bucket of a succeeded run
-- (core::kStartupHistogram, as 0022's startup_hist counts it).
CREATE FUNCTION placement_most_failed_evidence(r placement_run_figures,
                                               a placement_run_attempts)
RETURNS placement_most_failed LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW(a.failed_attempts,
             a.preempted_attempts + a.hardware_error_attempts,
             a.collective_timeout_attempts, a.attempts,
             round(r.gpu_count * a.counted_us)::bigint,
             round(r.gpu_count * a.lost_us)::bigint,
             CASE WHEN r.outcome = 'SUCCEEDED'
                  THEN placement_log_bucket(greatest(0.5, round(a.startup_s)),
                                            1, 1.189207115, 64)
                  ELSE -1 END,
             0)::placement_most_failed
$$;

-- In pool_reliability_rollups the failed attempts of the pool's causes,
-- in wall microseconds, their share of the run's lost time.
CREATE FUNCTION placement_most_failed_pool(a placement_run_attempts)
RETURNS placement_most_failed LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW(a.preempted_attempts + a.hardware_error_attempts
               + a.collective_timeout_attempts,
             a.preempted_attempts + a.hardware_error_attempts,
             a.collective_timeout_attempts, a.attempts,
             round(a.counted_us)::bigint, round(a.pool_lost_us)::bigint, -1,
             0)::placement_most_failed
$$;

-- Merges `m` into the evidence row of (recipe_key, sku_id) or the pool row
-- of (pool_name, multi_gpu), or sets it (`replace`: a backfill's recount).
CREATE FUNCTION placement_set_most_failed_evidence(
    key_recipe text, key_sku text, m placement_most_failed, replace boolean)
RETURNS void LANGUAGE sql AS $$
  UPDATE evidence_rollups e
  SET (most_failed_attempts, most_failed_node_attempts,
       most_failed_fabric_attempts, most_failed_run_attempts,
       most_failed_counted_microseconds, most_failed_lost_microseconds,
       most_failed_startup_bucket, second_failed_attempts) =
      (SELECT (x).failed, (x).node, (x).fabric, (x).attempts, (x).counted_us,
              (x).lost_us, (x).startup_bucket, (x).second
       FROM (SELECT CASE WHEN replace THEN m
                         ELSE placement_most_failed_merge(
                           ROW(e.most_failed_attempts,
                               e.most_failed_node_attempts,
                               e.most_failed_fabric_attempts,
                               e.most_failed_run_attempts,
                               e.most_failed_counted_microseconds,
                               e.most_failed_lost_microseconds,
                               e.most_failed_startup_bucket,
                               e.second_failed_attempts)::placement_most_failed,
                           m) END AS x) s),
      updated_at = now()
  WHERE e.recipe_key = key_recipe AND e.sku_id = key_sku
$$;

CREATE FUNCTION placement_set_most_failed_pool(
    key_pool text, key_multi_gpu boolean, m placement_most_failed,
    replace boolean)
RETURNS void LANGUAGE sql AS $$
  UPDATE pool_reliability_rollups p
  SET (most_failed_attempts, most_failed_node_attempts,
       most_failed_fabric_attempts, most_failed_run_attempts,
       most_failed_counted_microseconds, most_failed_lost_microseconds,
       second_failed_attempts) =
      (SELECT (x).failed, (x).node, (x).fabric, (x).attempts, (x).counted_us,
              (x).lost_us, (x).second
       FROM (SELECT CASE WHEN replace THEN m
                         ELSE placement_most_failed_merge(
                           ROW(p.most_failed_attempts,
                               p.most_failed_node_attempts,
                               p.most_failed_fabric_attempts,
                               p.most_failed_run_attempts,
                               p.most_failed_counted_microseconds,
                               p.most_failed_lost_microseconds, -1,
                               p.second_failed_attempts)::placement_most_failed,
                           m) END AS x) s),
      updated_at = now()
  WHERE p.pool_name = key_pool AND p.multi_gpu = key_multi_gpu
$$;

CREATE FUNCTION benchmark_runs_add_most_failed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  f placement_run_figures := placement_run_figures_of(NEW);
  a placement_run_attempts := placement_run_attempts(f);
BEGIN
  IF NOT NEW.attempts_counted THEN RETURN NULL; END IF;  -- 0022's backfill
  -- Evidence row first, then the pool's: the order every upload takes.
  PERFORM placement_set_most_failed_evidence(
    f.recipe_key, f.sku_id, placement_most_failed_evidence(f, a), false);
  PERFORM placement_set_most_failed_pool(
    f.pool_name, f.gpu_count > 1, placement_most_failed_pool(a), false);
  RETURN NULL;
END $$;

-- Named to run after 0022's benchmark_runs_add_to_zz_attempts (deferred
-- triggers of one event fire in name order).
CREATE CONSTRAINT TRIGGER benchmark_runs_add_to_zzz_most_failed
  AFTER INSERT ON benchmark_runs
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION benchmark_runs_add_most_failed();

-- The backfill's steps: up to `batch_size` rows after the cursor (a JSON
-- array of the row's key), each locked in key order and set from its runs.
-- Returns the last row's cursor, NULL when none is left.
CREATE FUNCTION placement_backfill_most_failed_evidence(after text,
                                                        batch_size integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  k record;
  last_key text;
BEGIN
  FOR k IN SELECT recipe_key, sku_id FROM evidence_rollups
           WHERE after IS NULL
              OR (recipe_key, sku_id) > (after::json ->> 0, after::json ->> 1)
           ORDER BY recipe_key, sku_id LIMIT batch_size FOR UPDATE LOOP
    PERFORM placement_set_most_failed_evidence(
      k.recipe_key, k.sku_id,
      (SELECT placement_most_failed_of(placement_most_failed_evidence(f, a))
       FROM (SELECT placement_run_figures_of(r) AS f FROM benchmark_runs r
             WHERE r.recipe_key = k.recipe_key AND r.sku_id = k.sku_id
               AND r.attempts_counted) s,
            placement_run_attempts(s.f) AS a),
      true);
    last_key := json_build_array(k.recipe_key, k.sku_id)::text;
  END LOOP;
  RETURN last_key;
END $$;

CREATE FUNCTION placement_backfill_most_failed_pools(after text,
                                                     batch_size integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  k record;
  last_key text;
BEGIN
  FOR k IN SELECT pool_name, multi_gpu FROM pool_reliability_rollups
           WHERE after IS NULL
              OR (pool_name, multi_gpu) >
                 (after::json ->> 0, (after::json ->> 1)::boolean)
           ORDER BY pool_name, multi_gpu LIMIT batch_size FOR UPDATE LOOP
    PERFORM placement_set_most_failed_pool(
      k.pool_name, k.multi_gpu,
      (SELECT placement_most_failed_of(placement_most_failed_pool(a))
       FROM (SELECT placement_run_figures_of(r) AS f FROM benchmark_runs r
             WHERE r.pool_name = k.pool_name
               AND (r.gpu_count > 1) = k.multi_gpu
               AND r.attempts_counted) s,
            placement_run_attempts(s.f) AS a),
      true);
    last_key := json_build_array(k.pool_name, k.multi_gpu)::text;
  END LOOP;
  RETURN last_key;
END $$;

INSERT INTO schema_backfills (name, migration, position, batch_function)
VALUES ('0028_most_failed_evidence', 28, 1,
        'placement_backfill_most_failed_evidence'),
       ('0028_most_failed_pools', 28, 2,
        'placement_backfill_most_failed_pools');
