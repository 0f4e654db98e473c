#include "services/api/accuracy_convert.h"

namespace placement::services {

void SkuAccuracyToProto(const storage::SkuAccuracyRow& row,
                        v1::SkuAccuracy* out) {
  out->set_sku(row.sku_id);
  out->set_runs(row.runs);
  out->set_peak_memory_median_abs_error_pct(
      row.peak_memory_median_abs_error_pct);
  out->set_peak_memory_p90_abs_error_pct(row.peak_memory_p90_abs_error_pct);
  out->set_peak_memory_mean_error_pct(row.peak_memory_mean_error_pct);
  out->set_runs_with_successful_steps(row.runs_with_successful_steps);
  out->set_gpu_hours_per_step_median_abs_error_pct(
      row.gpu_hours_per_step_median_abs_error_pct);
  out->set_gpu_hours_per_step_p90_abs_error_pct(
      row.gpu_hours_per_step_p90_abs_error_pct);
  out->set_gpu_hours_per_step_mean_error_pct(
      row.gpu_hours_per_step_mean_error_pct);
  v1::ModelAccuracy* prior = out->mutable_prior();
  prior->set_runs(row.prior_runs);
  prior->set_peak_memory_median_abs_error_pct(
      row.prior_peak_memory_median_abs_error_pct);
  prior->set_peak_memory_p90_abs_error_pct(
      row.prior_peak_memory_p90_abs_error_pct);
  prior->set_peak_memory_mean_error_pct(row.prior_peak_memory_mean_error_pct);
  prior->set_runs_with_successful_steps(row.prior_runs_with_successful_steps);
  prior->set_gpu_hours_per_step_median_abs_error_pct(
      row.prior_gpu_hours_per_step_median_abs_error_pct);
  prior->set_gpu_hours_per_step_p90_abs_error_pct(
      row.prior_gpu_hours_per_step_p90_abs_error_pct);
  prior->set_gpu_hours_per_step_mean_error_pct(
      row.prior_gpu_hours_per_step_mean_error_pct);
}

}  // namespace placement::services
