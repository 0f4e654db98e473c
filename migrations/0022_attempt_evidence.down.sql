-- Back to 0021: the per-attempt figures go (they are derived: 0022 up
-- recomputes them from the stored runs). The runs' retry causes stay in
-- benchmark_runs.retry_outcomes (binaries of 21 do not know the column and
-- leave it NULL): they exist nowhere else the database can read, and 0022
-- up again counts them. 0017's per-run figures were kept all along.
DROP TRIGGER benchmark_runs_add_to_zz_attempts ON benchmark_runs;
DROP FUNCTION benchmark_runs_add_attempts();
DELETE FROM schema_backfills WHERE name = '0022_attempt_evidence';
DROP FUNCTION placement_backfill_run_attempts(text, integer);
DROP FUNCTION pool_reliability_add_attempts(placement_run_figures[]);
DROP FUNCTION evidence_rollups_add_attempts(placement_run_figures[]);
ALTER TABLE pool_reliability_rollups
  DROP COLUMN attempts,
  DROP COLUMN counted_run_microseconds,
  DROP COLUMN preempted_attempts,
  DROP COLUMN hardware_error_attempts,
  DROP COLUMN collective_timeout_attempts,
  DROP COLUMN attempt_lost_microseconds,
  DROP COLUMN run_hours_hist,
  DROP COLUMN run_microseconds_by_bucket;
ALTER TABLE evidence_rollups
  DROP COLUMN counted_gpu_microseconds,
  DROP COLUMN lost_gpu_microseconds,
  DROP COLUMN node_failed_attempts,
  DROP COLUMN fabric_failed_attempts,
  DROP COLUMN succeeded_attempts,
  DROP COLUMN succeeded_counted_gpu_microseconds,
  DROP COLUMN startup_hist,
  DROP COLUMN step_time_mean_hist;
DROP AGGREGATE placement_sum_counts(bigint[]);
DROP FUNCTION placement_one_count(int, bigint);
DROP FUNCTION placement_log_bucket(float8, float8, float8, int);
DROP FUNCTION placement_run_attempts(placement_run_figures);
DROP TYPE placement_run_attempts;
DROP FUNCTION placement_run_figures_of(benchmark_runs);
DROP TYPE placement_run_figures;
ALTER TABLE benchmark_runs DROP COLUMN attempts_counted;
