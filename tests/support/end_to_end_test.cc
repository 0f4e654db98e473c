#include "tests/support/end_to_end_test.h"

#include <utility>

namespace placement::testing {

void StartServingPlacementd(const TestDatabase& db,
                            std::unique_ptr<PlacementdProcess>* placementd,
                            absl::Duration timeout,
                            const std::vector<std::string>& extra_args) {
  auto process = PlacementdProcess::Start(db.url(), extra_args);
  ASSERT_TRUE(process.ok()) << process.status();
  *placementd = *std::move(process);
  ASSERT_TRUE((*placementd)->WaitForHealth(true, timeout))
      << (*placementd)->LogTail();
}

void EndToEndTest::SetUp() {
  db_.Migrate();
  ASSERT_NO_FATAL_FAILURE(StartServingPlacementd(db_, &placementd_));
  client_ = std::make_unique<ApiClient>(placementd_->channel());
}

v1::Recipe OneGpu(v1::Recipe recipe) {
  recipe.set_gpu_count(1);
  recipe.set_parallelism(v1::PARALLELISM_SINGLE);
  return recipe;
}

ApiClient::TimedRun MeasuredRun(const std::string& pool, const std::string& sku,
                                const v1::Recipe& recipe, int64_t steps,
                                double step_s, double startup_s) {
  ApiClient::TimedRun run;
  run.pool = pool;
  run.sku = sku;
  run.recipe = recipe;
  run.steps_attempted = steps;
  run.steps_succeeded = steps;
  run.step_s = step_s;
  run.startup_s = startup_s;
  return run;
}

v1::EvalResult EvalOn(const std::string& sku, v1::Precision precision,
                      const std::string& metric, double score) {
  v1::EvalResult eval;
  eval.set_serving_sku(sku);
  eval.set_serving_precision(precision);
  eval.set_metric_name(metric);
  eval.set_score(score);
  return eval;
}

}  // namespace placement::testing
