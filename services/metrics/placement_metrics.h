#ifndef PLACEMENT_SERVICES_METRICS_PLACEMENT_METRICS_H_
#define PLACEMENT_SERVICES_METRICS_PLACEMENT_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "storage/stores/run_store.h"

namespace placement::services {

// The planner's own metrics:
//   placement_plans_total{objective,outcome}
//   placement_plan_chosen_sku_total{sku}
//   placement_plan_evidence_basis_total{basis}       (of the chosen candidate)
//   placement_standard_contradicted_total{pool}      plans under a standard
//       that later evidence contradicts (the standard's pool)
//   placement_plan_records_lost_total                plans answered before
//       their record (deferred records) that could not be recorded
//   placement_prediction_error_ratio{quantity,sku}   (predicted - observed) /
//       observed, for runs that carried out a plan; quantity is peak_memory
//       or gpu_hours_per_step.
// Label values are bounded (objectives, outcomes, SKUs, bases); each series
// is looked up once and kept.
class PlacementMetrics {
 public:
  explicit PlacementMetrics(prometheus::Registry& registry);

  void PlanAnswered(const std::string& objective, const std::string& outcome);
  void CandidateChosen(const std::string& sku, const std::string& basis);
  void StandardContradicted(const std::string& pool);
  void PredictionObserved(const storage::PlanOutcome& outcome);
  // Returns how many have been lost since the start.
  int64_t PlanRecordLost();

 private:
  prometheus::Counter& Counter(
      prometheus::Family<prometheus::Counter>& family,
      const std::map<std::string, std::string>& labels);

  prometheus::Family<prometheus::Counter>& plans_;
  prometheus::Family<prometheus::Counter>& chosen_sku_;
  prometheus::Family<prometheus::Counter>& basis_;
  prometheus::Family<prometheus::Counter>& standard_contradicted_;
  prometheus::Family<prometheus::Histogram>& prediction_error_;
  prometheus::Counter& records_lost_;
  absl::Mutex mu_;
  std::map<std::pair<const void*, std::map<std::string, std::string>>, void*>
      series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_METRICS_PLACEMENT_METRICS_H_
