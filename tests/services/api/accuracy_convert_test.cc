// services/api/accuracy_convert: a SKU's prediction errors, the planner's
// at the top and the analytic prior's under `prior`, each figure in its own
// field (every figure distinct, so a swap shows).
#include "services/api/accuracy_convert.h"

#include "gtest/gtest.h"

namespace placement::services {
namespace {

TEST(SkuAccuracyToProtoTest, PlannerAndPriorFiguresLandInTheirOwnFields) {
  storage::SkuAccuracyRow row;
  row.sku_id = "A100-SXM4-80GB";
  row.runs = 1;
  row.peak_memory_median_abs_error_pct = 2;
  row.peak_memory_p90_abs_error_pct = 3;
  row.peak_memory_mean_error_pct = -4;
  row.runs_with_successful_steps = 5;
  row.gpu_hours_per_step_median_abs_error_pct = 6;
  row.gpu_hours_per_step_p90_abs_error_pct = 7;
  row.gpu_hours_per_step_mean_error_pct = -8;
  row.prior_runs = 11;
  row.prior_peak_memory_median_abs_error_pct = 12;
  row.prior_peak_memory_p90_abs_error_pct = 13;
  row.prior_peak_memory_mean_error_pct = -14;
  row.prior_runs_with_successful_steps = 15;
  row.prior_gpu_hours_per_step_median_abs_error_pct = 16;
  row.prior_gpu_hours_per_step_p90_abs_error_pct = 17;
  row.prior_gpu_hours_per_step_mean_error_pct = -18;
  v1::SkuAccuracy out;
  SkuAccuracyToProto(row, &out);
  EXPECT_EQ(out.sku(), "A100-SXM4-80GB");
  EXPECT_EQ(out.runs(), 1);
  EXPECT_EQ(out.peak_memory_median_abs_error_pct(), 2);
  EXPECT_EQ(out.peak_memory_p90_abs_error_pct(), 3);
  EXPECT_EQ(out.peak_memory_mean_error_pct(), -4);
  EXPECT_EQ(out.runs_with_successful_steps(), 5);
  EXPECT_EQ(out.gpu_hours_per_step_median_abs_error_pct(), 6);
  EXPECT_EQ(out.gpu_hours_per_step_p90_abs_error_pct(), 7);
  EXPECT_EQ(out.gpu_hours_per_step_mean_error_pct(), -8);
  const v1::ModelAccuracy& prior = out.prior();
  EXPECT_EQ(prior.runs(), 11);
  EXPECT_EQ(prior.peak_memory_median_abs_error_pct(), 12);
  EXPECT_EQ(prior.peak_memory_p90_abs_error_pct(), 13);
  EXPECT_EQ(prior.peak_memory_mean_error_pct(), -14);
  EXPECT_EQ(prior.runs_with_successful_steps(), 15);
  EXPECT_EQ(prior.gpu_hours_per_step_median_abs_error_pct(), 16);
  EXPECT_EQ(prior.gpu_hours_per_step_p90_abs_error_pct(), 17);
  EXPECT_EQ(prior.gpu_hours_per_step_mean_error_pct(), -18);
}

}  // namespace
}  // namespace placement::services
