#include "services/metrics/placement_metrics.h"

namespace placement::services {
namespace {

// Relative error buckets: a good prediction lands within +-10%.
const prometheus::Histogram::BucketBoundaries& ErrorBuckets() {
  static const auto* const buckets =
      new prometheus::Histogram::BucketBoundaries{
          -0.5, -0.25, -0.1, -0.05, 0, 0.05, 0.1, 0.25, 0.5, 1, 2};
  return *buckets;
}

}  // namespace

PlacementMetrics::PlacementMetrics(prometheus::Registry& registry)
    : plans_(prometheus::BuildCounter()
                 .Name("placement_plans_total")
                 .Help("PlacePlan answers by objective and outcome (placed, "
                       "no_candidate, invalid, no_training_pool, "
                       "unavailable).")
                 .Register(registry)),
      chosen_sku_(prometheus::BuildCounter()
                      .Name("placement_plan_chosen_sku_total")
                      .Help("Plans whose first candidate is on this SKU.")
                      .Register(registry)),
      basis_(prometheus::BuildCounter()
                 .Name("placement_plan_evidence_basis_total")
                 .Help("Plans by the evidence basis of their first candidate "
                       "(MEASURED, TRANSFERRED, ESTIMATED).")
                 .Register(registry)),
      standard_contradicted_(
          prometheus::BuildCounter()
              .Name("placement_standard_contradicted_total")
              .Help("Plans under a standard that later evidence contradicts "
                    "(a measured candidate cheaper beyond both bands, or the "
                    "standard pool's failure rate above its recorded band), "
                    "by the standard's pool.")
              .Register(registry)),
      prediction_error_(
          prometheus::BuildHistogram()
              .Name("placement_prediction_error_ratio")
              .Help("(predicted - observed) / observed for runs that carried "
                    "out a plan, by quantity and SKU.")
              .Register(registry)),
      records_lost_(prometheus::BuildCounter()
                        .Name("placement_plan_records_lost_total")
                        .Help("Plans answered before their record (deferred "
                              "records) that could not be recorded.")
                        .Register(registry)
                        .Add({})) {}

int64_t PlacementMetrics::PlanRecordLost() {
  records_lost_.Increment();
  return static_cast<int64_t>(records_lost_.Value());
}

prometheus::Counter& PlacementMetrics::Counter(
    prometheus::Family<prometheus::Counter>& family,
    const std::map<std::string, std::string>& labels) {
  absl::MutexLock lock(&mu_);
  void*& series = series_[{&family, labels}];
  if (series == nullptr) series = &family.Add(labels);
  return *static_cast<prometheus::Counter*>(series);
}

void PlacementMetrics::PlanAnswered(const std::string& objective,
                                    const std::string& outcome) {
  Counter(plans_, {{"objective", objective}, {"outcome", outcome}}).Increment();
}

void PlacementMetrics::CandidateChosen(const std::string& sku,
                                       const std::string& basis) {
  Counter(chosen_sku_, {{"sku", sku}}).Increment();
  Counter(basis_, {{"basis", basis}}).Increment();
}

void PlacementMetrics::StandardContradicted(const std::string& pool) {
  Counter(standard_contradicted_, {{"pool", pool}}).Increment();
}

void PlacementMetrics::PredictionObserved(const storage::PlanOutcome& outcome) {
  auto histogram = [&](const char* quantity) -> prometheus::Histogram& {
    const std::map<std::string, std::string> labels = {{"quantity", quantity},
                                                       {"sku", outcome.sku_id}};
    absl::MutexLock lock(&mu_);
    void*& series = series_[{&prediction_error_, labels}];
    if (series == nullptr) {
      series = &prediction_error_.Add(labels, ErrorBuckets());
    }
    return *static_cast<prometheus::Histogram*>(series);
  };
  if (outcome.observed_peak_memory_gb > 0) {
    histogram("peak_memory")
        .Observe((outcome.predicted_peak_memory_gb -
                  outcome.observed_peak_memory_gb) /
                 outcome.observed_peak_memory_gb);
  }
  if (outcome.observed_gpu_hours_per_successful_step.has_value() &&
      *outcome.observed_gpu_hours_per_successful_step > 0) {
    const double observed = *outcome.observed_gpu_hours_per_successful_step;
    histogram("gpu_hours_per_step")
        .Observe((outcome.predicted_gpu_hours_per_successful_step - observed) /
                 observed);
  }
}

}  // namespace placement::services
