-- The analytic model's own figures next to what the planner predicted (after
-- measured evidence and the fleet's calibration), so that accuracy can show
-- the prior's error beside the calibrated one. NULL for plans stored before.
ALTER TABLE plan_predictions
  ADD COLUMN prior_peak_memory_gb double precision,
  ADD COLUMN prior_gpu_hours_per_successful_step double precision;
ALTER TABLE plan_outcomes
  ADD COLUMN prior_peak_memory_gb double precision,
  ADD COLUMN prior_gpu_hours_per_successful_step double precision;
