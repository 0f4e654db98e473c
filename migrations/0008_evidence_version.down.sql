ALTER TABLE benchmark_runs DROP COLUMN evidence_version;
