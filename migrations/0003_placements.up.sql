-- The audit of every plan, what each plan predicted for each candidate pool,
-- and how runs that carried out a plan compared with the prediction. Plus
-- change notifications that keep every replica's in-memory evidence fresh.

CREATE TABLE placements (
  plan_id        uuid PRIMARY KEY,
  -- Idempotency key of the PlacePlan call, if the caller gave one.
  request_id     text UNIQUE,
  team           text NOT NULL DEFAULT '',
  recipe_key     text NOT NULL,
  objective      text NOT NULL,
  chosen_pool    text,
  chosen_sku     text,
  -- placement.v1.PlacePlanRequest / PlacePlanResponse, as asked and answered.
  request        bytea NOT NULL,
  response       bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX placements_created_idx ON placements (created_at);

-- One row per ranked candidate of a plan.
CREATE TABLE plan_predictions (
  plan_id                                 uuid NOT NULL REFERENCES placements ON DELETE CASCADE,
  pool_name                               text NOT NULL,
  sku_id                                  text NOT NULL,
  rank                                    integer NOT NULL,
  basis                                   text NOT NULL,
  predicted_peak_memory_gb                double precision NOT NULL,
  predicted_gpu_hours_per_successful_step double precision NOT NULL,
  PRIMARY KEY (plan_id, pool_name)
);

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

-- Replicas LISTEN on placement_changes and re-read pools and evidence when
-- either changes (notifications are delivered at commit, once per
-- transaction and table).
CREATE FUNCTION placement_notify_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('placement_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

CREATE TRIGGER evidence_rollups_changed
AFTER INSERT OR UPDATE OR DELETE ON evidence_rollups
FOR EACH STATEMENT EXECUTE FUNCTION placement_notify_change();

CREATE TRIGGER pools_changed
AFTER INSERT OR UPDATE OR DELETE ON pools
FOR EACH STATEMENT EXECUTE FUNCTION placement_notify_change();
