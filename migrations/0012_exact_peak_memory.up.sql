-- Exact peak memory per evidence rollup. The planner fits with the largest
-- peak of a succeeded run; reading it back from peak_memory_hist (12% wide
-- buckets) put it up to half a bucket off. Kept per (recipe key, SKU), over
-- the succeeded runs: a count, a sum (for the mean) and a maximum of
-- peak_memory_gb, and of the allocator's allocated and reserved peaks of
-- the runs that reported them. Maintained by the same upsert as the rest of
-- the row, in the run insert's transaction.
ALTER TABLE evidence_rollups
  ADD COLUMN succeeded_peak_runs bigint NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_peak_sum_gb double precision NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_peak_max_gb double precision NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_allocated_runs bigint NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_allocated_sum_gb double precision NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_allocated_max_gb double precision NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_reserved_runs bigint NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_reserved_sum_gb double precision NOT NULL DEFAULT 0,
  ADD COLUMN succeeded_reserved_max_gb double precision NOT NULL DEFAULT 0;

-- The allocator's peaks of each run, as uploaded (NULL: not reported, or
-- stored before this migration; the upload bytes still hold them).
ALTER TABLE benchmark_runs
  ADD COLUMN peak_memory_allocated_gb double precision
    CHECK (peak_memory_allocated_gb > 0),
  ADD COLUMN peak_memory_reserved_gb double precision
    CHECK (peak_memory_reserved_gb > 0);

-- Backfill from the stored runs: every run keeps its peak_memory_gb and
-- outcome, so the succeeded-peak figures of existing rollups are exact.
-- Allocated and reserved peaks were kept only inside the upload bytes, so
-- they start at zero runs (not reported) and count runs stored from now on.
-- A rollup with no stored runs left keeps zero counts, and the planner falls
-- back to its histogram (core::Summarize).
UPDATE evidence_rollups AS e
SET succeeded_peak_runs = s.runs,
    succeeded_peak_sum_gb = s.sum_gb,
    succeeded_peak_max_gb = s.max_gb
FROM (SELECT recipe_key, sku_id, count(*) AS runs,
             sum(peak_memory_gb) AS sum_gb, max(peak_memory_gb) AS max_gb
      FROM benchmark_runs
      WHERE outcome = 'SUCCEEDED' AND peak_memory_gb > 0
      GROUP BY recipe_key, sku_id) AS s
WHERE e.recipe_key = s.recipe_key AND e.sku_id = s.sku_id;
