-- Back to 0027: the most-failed run's figures go (they are derived: 0028 up
-- recomputes them from the stored runs).
DROP TRIGGER benchmark_runs_add_to_zzz_most_failed ON benchmark_runs;
DROP FUNCTION benchmark_runs_add_most_failed();
DELETE FROM schema_backfills
WHERE name IN ('0028_most_failed_evidence', '0028_most_failed_pools');
DROP FUNCTION placement_backfill_most_failed_pools(text, integer);
DROP FUNCTION placement_backfill_most_failed_evidence(text, integer);
DROP FUNCTION placement_set_most_failed_pool(text, boolean,
                                             placement_most_failed, boolean);
DROP FUNCTION placement_set_most_failed_evidence(text, text,
                                                 placement_most_failed, boolean);
DROP FUNCTION placement_most_failed_pool(placement_run_attempts);
DROP FUNCTION placement_most_failed_evidence(placement_run_figures,
                                             placement_run_attempts);
DROP AGGREGATE placement_most_failed_of(placement_most_failed);
DROP FUNCTION placement_most_failed_merge(placement_most_failed,
                                          placement_most_failed);
DROP TYPE placement_most_failed;
ALTER TABLE pool_reliability_rollups
  DROP COLUMN most_failed_attempts,
  DROP COLUMN most_failed_node_attempts,
  DROP COLUMN most_failed_fabric_attempts,
  DROP COLUMN most_failed_run_attempts,
  DROP COLUMN most_failed_counted_microseconds,
  DROP COLUMN most_failed_lost_microseconds,
  DROP COLUMN second_failed_attempts;
ALTER TABLE evidence_rollups
  DROP COLUMN most_failed_attempts,
  DROP COLUMN most_failed_node_attempts,
  DROP COLUMN most_failed_fabric_attempts,
  DROP COLUMN most_failed_run_attempts,
  DROP COLUMN most_failed_counted_microseconds,
  DROP COLUMN most_failed_lost_microseconds,
  DROP COLUMN most_failed_startup_bucket,
  DROP COLUMN second_failed_attempts;
