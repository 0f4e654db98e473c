#ifndef PLACEMENT_STORAGE_PLAN_ACCURACY_RECORDS_H_
#define PLACEMENT_STORAGE_PLAN_ACCURACY_RECORDS_H_

// The plan accuracy storage/stores/plan_store.h reads, without its
// database headers, for the code that converts it.

#include <cstdint>
#include <string>

namespace placement::storage {

// Prediction error statistics per SKU over the outcomes recorded in
// [from, to), in percent of the observed value.
struct SkuAccuracyRow {
  std::string sku_id;
  int64_t runs = 0;
  double peak_memory_median_abs_error_pct = 0;
  double peak_memory_p90_abs_error_pct = 0;
  double peak_memory_mean_error_pct = 0;
  int64_t runs_with_successful_steps = 0;
  double gpu_hours_per_step_median_abs_error_pct = 0;
  double gpu_hours_per_step_p90_abs_error_pct = 0;
  double gpu_hours_per_step_mean_error_pct = 0;
  // The same errors of the analytic prior alone, over the outcomes whose
  // plan recorded it.
  int64_t prior_runs = 0;
  double prior_peak_memory_median_abs_error_pct = 0;
  double prior_peak_memory_p90_abs_error_pct = 0;
  double prior_peak_memory_mean_error_pct = 0;
  int64_t prior_runs_with_successful_steps = 0;
  double prior_gpu_hours_per_step_median_abs_error_pct = 0;
  double prior_gpu_hours_per_step_p90_abs_error_pct = 0;
  double prior_gpu_hours_per_step_mean_error_pct = 0;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_PLAN_ACCURACY_RECORDS_H_
