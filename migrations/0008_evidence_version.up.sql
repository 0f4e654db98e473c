-- The id of the transaction that stored each run (pg_current_xact_id()):
-- the evidence version an upload's acknowledgement carries, so that a plan
-- on any replica can wait until its evidence includes that run. NULL for
-- runs stored before versions were kept (they answer 0).
ALTER TABLE benchmark_runs ADD COLUMN evidence_version bigint;
