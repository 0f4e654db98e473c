REVOKE ALL ON cost_per_successful_step_daily, cost_per_successful_step_monthly,
              wasted_gpu_hours_daily, pool_occupancy_daily, cost_daily_rollups,
              skus, pools
  FROM placement_dashboards;
REVOKE USAGE ON SCHEMA public FROM placement_dashboards;
DO $$
BEGIN
  EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM placement_dashboards',
                 current_database());
END
$$;
-- The role itself stays: it belongs to the whole cluster, other databases
-- may use it, and dropping it here would race with their migrations. It
-- holds nothing in this database any more.
DROP VIEW pool_occupancy_daily;
DROP VIEW wasted_gpu_hours_daily;
DROP VIEW cost_per_successful_step_monthly;
DROP VIEW cost_per_successful_step_daily;
DROP TABLE cost_daily_rollups;
DROP VIEW cost_run_facts;
