DROP FUNCTION placement_ensure_sample_partitions(timestamptz, integer);
DROP TABLE step_samples;
DROP TABLE sample_streams;
DROP TABLE evidence_rollups;
DROP TABLE benchmark_runs;
DROP FUNCTION placement_add_counts(bigint[], bigint[]);
