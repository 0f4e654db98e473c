DROP TABLE catalog_tombstone_horizon;
