ALTER TABLE plan_outcomes
  DROP COLUMN prior_peak_memory_gb,
  DROP COLUMN prior_gpu_hours_per_successful_step;
ALTER TABLE plan_predictions
  DROP COLUMN prior_peak_memory_gb,
  DROP COLUMN prior_gpu_hours_per_successful_step;
