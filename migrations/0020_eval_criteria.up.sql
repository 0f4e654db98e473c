-- Eval criteria (CatalogService.SetEvalCriterion): what a team counts as a
-- passing eval for the weights trained on one pool, or on every pool that
-- carries a label. A plan's eval requirement is met only by evals that pass
-- every criterion that applies to the candidate's pool.
--
-- A new table, read whole by each replica's catalog refresh (it holds tens
-- of rows, so it needs no change stamps or tombstones). No lock on any
-- existing table. Binaries built for 14 to 19 never read it: they plan as
-- if no criterion were declared, so schema_compatibility is unchanged.

CREATE TABLE eval_criteria (
  name        text PRIMARY KEY,
  -- Exactly one selector: a pool (deleted with it), or a label.
  pool_name   text REFERENCES pools (name) ON DELETE CASCADE,
  label_key   text,
  label_value text,
  metric      text NOT NULL,
  min_score   float8,
  max_score   float8,
  update_time timestamptz NOT NULL DEFAULT now(),
  CHECK ((pool_name IS NULL) <> (label_key IS NULL)),
  CHECK ((label_key IS NULL) = (label_value IS NULL)),
  CHECK (min_score IS NOT NULL OR max_score IS NOT NULL),
  CHECK (min_score IS NULL OR max_score IS NULL OR min_score <= max_score)
);
