-- The audit of every plan, what each distinct plan result predicted for each
-- candidate pool, and how runs that carried out a plan compared with the
-- prediction.

-- Distinct planner results. Many plans share one (the same recipe and
-- constraints against the same evidence), so the large part of an answer is
-- stored once, keyed by its sha256.
CREATE TABLE plan_results (
  result_hash    bytea PRIMARY KEY,
  -- placement.v1.PlacePlanResponse without the per-plan fields (plan_id,
  -- create_time, evidence_time, warnings).
  response       bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- One row per ranked candidate of a result.
CREATE TABLE plan_predictions (
  result_hash                             bytea NOT NULL REFERENCES plan_results ON DELETE CASCADE,
  pool_name                               text NOT NULL,
  sku_id                                  text NOT NULL,
  rank                                    integer NOT NULL,
  basis                                   text NOT NULL,
  predicted_peak_memory_gb                double precision NOT NULL,
  predicted_gpu_hours_per_successful_step double precision NOT NULL,
  PRIMARY KEY (result_hash, pool_name)
);

-- Every plan answered: who asked what, when, and which result they got.
CREATE TABLE placements (
  plan_id        uuid PRIMARY KEY,
  -- Idempotency key of the PlacePlan call, if the caller gave one.
  request_id     text UNIQUE,
  team           text NOT NULL DEFAULT '',
  recipe_key     text NOT NULL,
  objective      text NOT NULL,
  chosen_pool    text,
  chosen_sku     text,
  -- placement.v1.PlacePlanRequest as asked.
  request        bytea NOT NULL,
  result_hash    bytea NOT NULL REFERENCES plan_results,
  evidence_time  timestamptz NOT NULL,
  warnings       text[] NOT NULL DEFAULT '{}',
  created_at     timestamptz NOT NULL
);

CREATE INDEX placements_created_idx ON placements (created_at);

-- Filled in the same transaction as a run that names a plan_id, when the
-- plan had predicted the run's pool.
CREATE TABLE plan_outcomes (
  run_id                                  uuid PRIMARY KEY REFERENCES benchmark_runs ON DELETE CASCADE,
  plan_id                                 uuid NOT NULL,
  pool_name                               text NOT NULL,
  sku_id                                  text NOT NULL,
  basis                                   text NOT NULL,
  predicted_peak_memory_gb                double precision NOT NULL,
  observed_peak_memory_gb                 double precision NOT NULL,
  predicted_gpu_hours_per_successful_step double precision NOT NULL,
  -- NULL when the run completed no step.
  observed_gpu_hours_per_successful_step  double precision,
  recorded_at                             timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX plan_outcomes_sku_idx ON plan_outcomes (sku_id, recorded_at);
