DROP TABLE cost_daily_sku_rollups;
