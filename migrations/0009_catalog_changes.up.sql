-- Incremental catalog reads. Every row a replica plans from carries the id
-- of the transaction that last wrote it (pg_current_xact_id(), the same
-- 64-bit ids as benchmark_runs.evidence_version), and every deletion leaves
-- a tombstone with the id of the transaction that deleted it. A replica that
-- read the catalog at snapshot S then reads only the rows and tombstones
-- whose transaction S did not see: change_xid >= S.xmin AND NOT
-- pg_visible_in_snapshot(change_xid, S). Transaction ids, unlike a sequence,
-- make that exact: a writer that drew a number before another but committed
-- after it is still "not in S". Rows written before this migration keep 0,
-- which every snapshot includes.

CREATE FUNCTION placement_stamp_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_xid := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END
$$;

-- TG_ARGV names the key columns; the tombstone keeps their text.
CREATE FUNCTION placement_note_removal() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalog_tombstones (table_name, row_key, change_xid)
  VALUES (TG_TABLE_NAME,
          ARRAY(SELECT to_jsonb(OLD) ->> k.name
                FROM unnest(TG_ARGV) WITH ORDINALITY AS k(name, i)
                ORDER BY k.i),
          pg_current_xact_id()::text::bigint);
  RETURN NULL;
END
$$;

CREATE TABLE catalog_tombstones (
  table_name  text NOT NULL,
  row_key     text[] NOT NULL,
  change_xid  bigint NOT NULL,
  deleted_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX catalog_tombstones_change_xid_idx ON catalog_tombstones (change_xid);

ALTER TABLE skus ADD COLUMN change_xid bigint NOT NULL DEFAULT 0;
ALTER TABLE pools ADD COLUMN change_xid bigint NOT NULL DEFAULT 0;
ALTER TABLE evidence_rollups ADD COLUMN change_xid bigint NOT NULL DEFAULT 0;
ALTER TABLE api_tokens ADD COLUMN change_xid bigint NOT NULL DEFAULT 0;

CREATE INDEX skus_change_xid_idx ON skus (change_xid);
CREATE INDEX pools_change_xid_idx ON pools (change_xid);
CREATE INDEX evidence_rollups_change_xid_idx ON evidence_rollups (change_xid);
CREATE INDEX api_tokens_change_xid_idx ON api_tokens (change_xid);

CREATE TRIGGER skus_stamp_change BEFORE INSERT OR UPDATE ON skus
  FOR EACH ROW EXECUTE FUNCTION placement_stamp_change();
CREATE TRIGGER pools_stamp_change BEFORE INSERT OR UPDATE ON pools
  FOR EACH ROW EXECUTE FUNCTION placement_stamp_change();
CREATE TRIGGER evidence_rollups_stamp_change BEFORE INSERT OR UPDATE ON evidence_rollups
  FOR EACH ROW EXECUTE FUNCTION placement_stamp_change();
CREATE TRIGGER api_tokens_stamp_change BEFORE INSERT OR UPDATE ON api_tokens
  FOR EACH ROW EXECUTE FUNCTION placement_stamp_change();

-- A deletion, or an update that changes the key (the old key is gone).
CREATE TRIGGER skus_note_removal AFTER DELETE ON skus
  FOR EACH ROW EXECUTE FUNCTION placement_note_removal('sku_id');
CREATE TRIGGER skus_note_rekey AFTER UPDATE OF sku_id ON skus
  FOR EACH ROW WHEN (OLD.sku_id IS DISTINCT FROM NEW.sku_id)
  EXECUTE FUNCTION placement_note_removal('sku_id');
CREATE TRIGGER pools_note_removal AFTER DELETE ON pools
  FOR EACH ROW EXECUTE FUNCTION placement_note_removal('name');
CREATE TRIGGER pools_note_rekey AFTER UPDATE OF name ON pools
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION placement_note_removal('name');
CREATE TRIGGER evidence_rollups_note_removal AFTER DELETE ON evidence_rollups
  FOR EACH ROW EXECUTE FUNCTION placement_note_removal('recipe_key', 'sku_id');
CREATE TRIGGER evidence_rollups_note_rekey AFTER UPDATE OF recipe_key, sku_id ON evidence_rollups
  FOR EACH ROW WHEN (OLD.recipe_key IS DISTINCT FROM NEW.recipe_key
                     OR OLD.sku_id IS DISTINCT FROM NEW.sku_id)
  EXECUTE FUNCTION placement_note_removal('recipe_key', 'sku_id');
CREATE TRIGGER api_tokens_note_removal AFTER DELETE ON api_tokens
  FOR EACH ROW EXECUTE FUNCTION placement_note_removal('token_id');
CREATE TRIGGER api_tokens_note_rekey AFTER UPDATE OF token_id ON api_tokens
  FOR EACH ROW WHEN (OLD.token_id IS DISTINCT FROM NEW.token_id)
  EXECUTE FUNCTION placement_note_removal('token_id');
