-- Standards: decision records that a recipe class runs on a pool, proven by
-- a plan's bake-off (PlacementService.WriteStandard), kept until retired.
-- PlacePlan reads the active ones from the replica's snapshot: every
-- refresh reads them whole (a handful of rows; standards_active_idx), so
-- they need no change stamps or tombstones.
--
-- A new table: no lock on any existing one. No backfill.
--
-- schema_compatibility: unchanged. A binary built before 21 never reads or
-- writes this table; it plans without standards during a rolling upgrade
-- (and says nothing of them), which is the state before this migration.

CREATE TABLE standards (
  standard_id        uuid PRIMARY KEY,
  -- WriteStandard's idempotency key, and the SHA-256 of what the request
  -- asked (a retry with other content is refused).
  request_id         text NOT NULL UNIQUE,
  fingerprint        bytea NOT NULL,
  -- The recipe class: a serialized placement.v1.Recipe with only the
  -- class's fields set (the model in its own column for readers).
  recipe_class       bytea NOT NULL,
  model              text NOT NULL,
  pool_name          text NOT NULL,
  sku_id             text NOT NULL,
  plan_id            uuid NOT NULL,
  written_by         text NOT NULL,
  team               text NOT NULL DEFAULT '',
  reason             text NOT NULL,
  -- The evidence when written (docs/CORE.md, Standards).
  cost_band_low      float8 NOT NULL,
  cost_band_high     float8 NOT NULL,
  failure_rate_p10   float8 NOT NULL,
  failure_rate_p90   float8 NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  retired_at         timestamptz,
  retired_by         text,
  retire_reason      text,
  CHECK ((retired_at IS NULL) = (retired_by IS NULL)
         AND (retired_at IS NULL) = (retire_reason IS NULL))
);

CREATE INDEX standards_listing_idx ON standards (created_at DESC, standard_id DESC);
CREATE INDEX standards_active_idx ON standards (standard_id) WHERE retired_at IS NULL;
