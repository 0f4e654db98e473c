ALTER TABLE step_samples DROP CONSTRAINT step_samples_pkey;
ALTER TABLE step_samples
  ADD CONSTRAINT step_samples_pkey PRIMARY KEY (run_id, partition_time, step);
