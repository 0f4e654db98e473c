-- Measured runs, their per-step samples, and the evidence rollup per
-- (recipe key, SKU) that plans are ranked by.

-- Element-wise sum of two count arrays (histogram buckets).
CREATE FUNCTION placement_add_counts(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY i), '{}')
  FROM unnest(a, b) WITH ORDINALITY AS t(x, y, i)
$$;

CREATE TABLE benchmark_runs (
  run_id                 uuid PRIMARY KEY,
  -- sha256 of the run as uploaded (deterministic protobuf): a retry with the
  -- same run_id must carry the same content.
  fingerprint            bytea NOT NULL,
  agent_id               text NOT NULL,
  pool_name              text NOT NULL REFERENCES pools (name),
  sku_id                 text NOT NULL REFERENCES skus (sku_id),
  team                   text NOT NULL DEFAULT '',
  recipe_key             text NOT NULL,
  model                  text NOT NULL,
  method                 text NOT NULL,
  gpu_count              integer NOT NULL CHECK (gpu_count > 0),
  started_at             timestamptz NOT NULL,
  ended_at               timestamptz NOT NULL CHECK (ended_at >= started_at),
  -- gpu_count x wall time, in GPU-microseconds: summed exactly.
  gpu_microseconds       bigint NOT NULL CHECK (gpu_microseconds >= 0),
  steps_attempted        bigint NOT NULL CHECK (steps_attempted >= 0),
  steps_succeeded        bigint NOT NULL
                         CHECK (steps_succeeded >= 0 AND steps_succeeded <= steps_attempted),
  step_time_mean_s       double precision NOT NULL CHECK (step_time_mean_s > 0),
  step_time_p50_s        double precision NOT NULL CHECK (step_time_p50_s > 0),
  step_time_p95_s        double precision NOT NULL CHECK (step_time_p95_s > 0),
  tokens_per_second      double precision NOT NULL CHECK (tokens_per_second >= 0),
  peak_memory_gb         double precision NOT NULL CHECK (peak_memory_gb > 0),
  offload                text NOT NULL CHECK (offload IN ('NONE', 'CPU', 'NVME')),
  interconnect           text NOT NULL
                         CHECK (interconnect IN ('NONE', 'NVLINK', 'PCIE', 'HOST_MEMORY')),
  collectives_opened     boolean NOT NULL,
  retries                integer NOT NULL CHECK (retries >= 0),
  outcome                text NOT NULL CHECK (outcome IN ('SUCCEEDED', 'FAILED', 'OUT_OF_MEMORY',
                                                          'COLLECTIVE_TIMEOUT', 'PREEMPTED',
                                                          'HARDWARE_ERROR')),
  exclusive              boolean NOT NULL,
  plan_id                uuid,
  -- The run exactly as uploaded (placement.v1.BenchmarkRun), served back by
  -- GetBenchmarkRun.
  upload                 bytea NOT NULL,
  accepted_at            timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX benchmark_runs_accepted_idx ON benchmark_runs (accepted_at DESC, run_id DESC);
CREATE INDEX benchmark_runs_recipe_sku_idx ON benchmark_runs (recipe_key, sku_id);
CREATE INDEX benchmark_runs_pool_started_idx ON benchmark_runs (pool_name, started_at);
CREATE INDEX benchmark_runs_plan_idx ON benchmark_runs (plan_id) WHERE plan_id IS NOT NULL;

-- Sums over benchmark_runs per (recipe key, SKU), maintained in the same
-- transaction as each run insert, so that it always equals an aggregate over
-- the raw runs. Histograms are fixed log buckets (core/evidence.h) so that
-- quantiles can be merged.
CREATE TABLE evidence_rollups (
  recipe_key             text NOT NULL,
  sku_id                 text NOT NULL REFERENCES skus (sku_id),
  -- The normalized recipe (placement.v1.Recipe), for transfers to nearby recipes.
  recipe                 bytea NOT NULL,
  model                  text NOT NULL,
  method                 text NOT NULL,
  runs                   bigint NOT NULL,
  successful_runs        bigint NOT NULL,
  offload_runs           bigint NOT NULL,
  retries                bigint NOT NULL,
  collective_runs        bigint NOT NULL,
  nvlink_runs            bigint NOT NULL,
  pcie_runs              bigint NOT NULL,
  host_memory_runs       bigint NOT NULL,
  steps_attempted        bigint NOT NULL,
  steps_succeeded        bigint NOT NULL,
  gpu_microseconds       bigint NOT NULL,
  max_peak_memory_gb     double precision NOT NULL,
  step_time_p50_hist     bigint[] NOT NULL,
  step_time_p95_hist     bigint[] NOT NULL,
  peak_memory_hist       bigint[] NOT NULL,
  updated_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (recipe_key, sku_id)
);

-- Progress of each run's sample stream. partition_time is fixed by the
-- first batch: every sample of a run is filed under it, so a run's samples
-- share one partition and (run_id, step) is unique.
CREATE TABLE sample_streams (
  run_id                 uuid PRIMARY KEY,
  partition_time         timestamptz NOT NULL,
  max_step               bigint NOT NULL DEFAULT -1,
  -- Every step 0..committed_through_step is stored.
  committed_through_step bigint NOT NULL DEFAULT -1,
  samples                bigint NOT NULL DEFAULT 0,
  updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE step_samples (
  run_id                 uuid NOT NULL,
  partition_time         timestamptz NOT NULL,
  step                   bigint NOT NULL CHECK (step >= 0),
  sample_time            timestamptz NOT NULL,
  step_time_s            double precision NOT NULL,
  memory_allocated_gb    double precision NOT NULL,
  memory_reserved_gb     double precision NOT NULL,
  tokens                 bigint NOT NULL,
  loss                   double precision,
  PRIMARY KEY (run_id, partition_time, step)
) PARTITION BY RANGE (partition_time);

-- Anything outside the monthly partitions still lands somewhere.
CREATE TABLE step_samples_default PARTITION OF step_samples DEFAULT;

-- Creates the monthly partitions of step_samples from the month of `first`
-- for `months` months, skipping those that exist. placementd calls it at
-- start-up and daily, so that partitions exist ahead of the data.
CREATE FUNCTION placement_ensure_sample_partitions(first timestamptz, months integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  created integer := 0;
  month_start timestamptz;
  partition_name text;
BEGIN
  FOR i IN 0 .. months - 1 LOOP
    month_start := date_trunc('month', first AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                   + make_interval(months => i);
    partition_name := 'step_samples_' || to_char(month_start AT TIME ZONE 'UTC', 'YYYY_MM');
    IF to_regclass(partition_name) IS NULL THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF step_samples FOR VALUES FROM (%L) TO (%L)',
                     partition_name, month_start, month_start + interval '1 month');
      created := created + 1;
    END IF;
  END LOOP;
  RETURN created;
END
$$;

SELECT placement_ensure_sample_partitions(now() - interval '1 month', 4);
