-- Every row is a copy of a stored upload's failure_reason (the upload keeps
-- it, and GetBenchmarkRun serves it): dropping the table loses nothing.
DROP TABLE run_failure_reasons;
