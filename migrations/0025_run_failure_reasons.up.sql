-- Each stored run's failure reason (BenchmarkRun.failure_reason, at most
-- 4,096 characters), so that GetBakeOffStatus and WriteStandard judge a
-- plan's bake-off from columns alone, never loading the uploads themselves
-- (each up to the message limit). Everything else they read is a column of
-- benchmark_runs already.
--
-- Written by the binary in the run's transaction, after the benchmark_runs
-- row, only when the reason is not empty. No backfill: the reasons of runs
-- stored before this migration (or by a release built before it) exist
-- only in their upload bytes, which SQL cannot read; a bake-off reads such
-- a run's upload only when it may carry a reason (not a SUCCEEDED run
-- without retries) and the upload is small (storage/bake_off_store.h).
--
-- A new table: no lock on any existing one. schema_compatibility:
-- unchanged (no release before this one reads or writes it).

CREATE TABLE run_failure_reasons (
  run_id         uuid PRIMARY KEY REFERENCES benchmark_runs (run_id)
                 ON DELETE CASCADE,
  failure_reason text NOT NULL CHECK (failure_reason <> '')
);
