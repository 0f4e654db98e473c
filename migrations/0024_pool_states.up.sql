-- Pool state reported by orchestrators (PoolStateService.ReportPoolState):
-- one row per pool, replaced by each report, holding the last report as it
-- arrived and what the pool's reports taught, each series bounded (the
-- binary keeps the newest 512 run times and waits, 256 forecast checks, and
-- one forecast per waiting job). The planner's snapshot reads the rows that
-- changed (change_xid, as migration 0009's tables) and every report of a
-- pool replaces its row: a few hundred kilobytes for a pool with thousands
-- of jobs, tens of bytes a job.
--
-- A new table: no lock on any existing one. No backfill.
--
-- schema_compatibility: unchanged. A binary built before 24 never reads or
-- writes this table: it plans without pool state (every wait unknown) and
-- stores a run's submit_time in the upload bytes only, which is the state
-- before this migration.

CREATE TABLE pool_states (
  pool_name            text PRIMARY KEY REFERENCES pools (name) ON DELETE CASCADE,
  -- The last report: when observed (the reporter's clock), when it arrived
  -- (the database's clock: a report's age is counted from here), the
  -- SHA-256 of its bytes (a retry of the same report is recognized by it),
  -- and the serialized placement.v1.PoolState as reported. NULL until the
  -- first report (a row may hold only uploaded waits before it).
  observed_at          timestamptz,
  received_at          timestamptz,
  fingerprint          bytea,
  report               bytea,
  CHECK ((observed_at IS NULL) = (report IS NULL)
         AND (observed_at IS NULL) = (received_at IS NULL)
         AND (observed_at IS NULL) = (fingerprint IS NULL)),
  -- The run time this service's plans expected of the reported jobs that
  -- carry a plan_id (median and p90, seconds), by job id.
  planned_job_ids      text[] NOT NULL DEFAULT '{}',
  planned_median_s     float8[] NOT NULL DEFAULT '{}',
  planned_p90_s        float8[] NOT NULL DEFAULT '{}',
  -- Run times of finished jobs and the time limit each had (0: none),
  -- waits (start less submission), and where each forecast start fell in
  -- its forecast (PIT, [0, 1]); oldest first.
  durations_s          float8[] NOT NULL DEFAULT '{}',
  limits_s             float8[] NOT NULL DEFAULT '{}',
  waits_s              float8[] NOT NULL DEFAULT '{}',
  start_pits           float8[] NOT NULL DEFAULT '{}',
  -- The start forecast of each waiting job, made when it was first seen
  -- waiting: the report's observed time (microseconds since the epoch) and
  -- 21 levels of the delay after it (0, 0.05, ..., 1), flattened. Read only
  -- by the next report.
  prediction_job_ids   text[] NOT NULL DEFAULT '{}',
  prediction_origins   bigint[] NOT NULL DEFAULT '{}',
  prediction_delays_s  float8[] NOT NULL DEFAULT '{}',
  change_xid           bigint NOT NULL DEFAULT 0
);

CREATE INDEX pool_states_change_xid_idx ON pool_states (change_xid);
CREATE TRIGGER pool_states_stamp_change BEFORE INSERT OR UPDATE ON pool_states
  FOR EACH ROW EXECUTE FUNCTION placement_stamp_change();
CREATE TRIGGER pool_states_note_removal AFTER DELETE ON pool_states
  FOR EACH ROW EXECUTE FUNCTION placement_note_removal('pool_name');
