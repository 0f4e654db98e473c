-- Back to the binary maintaining the derived rollups (as of 0013): they
-- stay as derived so far.
DROP TRIGGER cost_daily_sku_rollups_only_derived ON cost_daily_sku_rollups;
DROP TRIGGER cost_daily_pool_rollups_only_derived ON cost_daily_pool_rollups;
DROP TRIGGER cost_daily_rollups_derive ON cost_daily_rollups;
DROP FUNCTION cost_rollups_only_derived();
DROP FUNCTION cost_rollups_derive();
DROP FUNCTION cost_rollups_add(cost_daily_rollups, integer);
DROP TABLE schema_compatibility;
