-- The evals of uploaded runs (BenchmarkRun.evals: an export-and-eval of the
-- fine-tuned weights on a serving SKU in a serving precision), one row per
-- eval, so that a plan's serve_what_you_evaluated requirement can say
-- whether an eval meets it, and ListEvalResults can list them.
--
-- Written by the binary in the transaction that inserts the run (only when
-- the run is new), after the benchmark_runs row: serving_sku_id is the SKU id
-- the upload's serving SKU resolved to, serving_precision the core enum's
-- text ("BF16"), recorded_at the run's accepted_at.
--
-- No backfill: runs stored before this migration keep their evals only in
-- the upload bytes (a serialized protobuf, which SQL cannot read), so they
-- are not here; a plan whose only eval is such a run says the eval is
-- missing (the safe direction: re-upload the eval with a new run).
--
-- schema_compatibility: still 14. A binary built for 14 to 17 stores runs
-- correctly at this schema but writes no eval rows; its runs' evals are then
-- missing here the same way. Raising oldest_binary_version instead would
-- refuse the previous release's uploads for the whole rolling upgrade. A
-- later migration that needs every eval here raises it past 17 and has the
-- binary rebuild the rows from the uploads.

CREATE TABLE eval_results (
  run_id            uuid NOT NULL REFERENCES benchmark_runs (run_id),
  ordinal           integer NOT NULL CHECK (ordinal >= 0),  -- in run.evals
  recipe_key        text NOT NULL,
  serving_sku_id    text NOT NULL,
  serving_precision text NOT NULL,
  metric            text NOT NULL,
  score             float8 NOT NULL,
  recorded_at       timestamptz NOT NULL,
  -- The inserting transaction (migration 0009's change stamps): what a
  -- replica's refresh reads. Rows are never updated.
  change_xid        bigint NOT NULL DEFAULT pg_current_xact_id()::text::bigint,
  PRIMARY KEY (run_id, ordinal)
);

CREATE INDEX eval_results_target_idx
  ON eval_results (recipe_key, serving_sku_id, serving_precision);
CREATE INDEX eval_results_listing_idx
  ON eval_results (recorded_at DESC, run_id DESC, ordinal DESC);
CREATE INDEX eval_results_change_xid_idx ON eval_results (change_xid);
