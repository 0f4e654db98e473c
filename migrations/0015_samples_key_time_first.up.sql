-- The samples' primary key, ordered by the run's partition_time first.
-- With run_id first, every run's rows went into the middle of the index (at
-- the place of its random UUID), so each inserted row descended the whole
-- btree and touched pages spread over all of it: the cost of an insert grew
-- with the samples stored, once the index outgrew the buffer cache. A run's
-- partition_time is the time of its first sample, so new runs sort at the
-- right end: a stream's rows append at the index's right edge (PostgreSQL's
-- rightmost-leaf fast path skips the descent) and the pages written are the
-- recent ones, whatever is stored. Lookups are unchanged: every query gives
-- both run_id and partition_time.
ALTER TABLE step_samples DROP CONSTRAINT step_samples_pkey;
ALTER TABLE step_samples
  ADD CONSTRAINT step_samples_pkey PRIMARY KEY (partition_time, run_id, step);
