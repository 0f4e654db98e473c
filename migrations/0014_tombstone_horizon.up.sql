-- Pruning catalog_tombstones (migration 0009). A replica that read the
-- catalog at snapshot S needs every tombstone S did not see, i.e. those with
-- change_xid >= S.xmin. Pruning deletes the tombstones below a transaction
-- id H and records H here, in the same transaction: a replica whose S.xmin
-- is below H may have missed a pruned deletion and reads the catalog in
-- full instead; one at or above it misses nothing (every pruned tombstone
-- is below its xmin, so it had seen that deletion). H never exceeds the
-- pruning transaction's own xmin, so no transaction below H can still
-- commit a tombstone, and H only grows. One row.
CREATE TABLE catalog_tombstone_horizon (
  only_row          boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  pruned_below_xid  bigint NOT NULL DEFAULT 0,
  pruned_at         timestamptz
);
INSERT INTO catalog_tombstone_horizon DEFAULT VALUES;
