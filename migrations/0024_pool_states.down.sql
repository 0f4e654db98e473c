DROP TABLE pool_states;
DELETE FROM catalog_tombstones WHERE table_name = 'pool_states';
