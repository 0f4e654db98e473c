DROP TABLE cost_daily_pool_rollups;
