#ifndef PLACEMENT_SERVICES_METRICS_CONSOLE_METRICS_H_
#define PLACEMENT_SERVICES_METRICS_CONSOLE_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace placement::services {

// The web console's answers:
//   placement_console_requests_total{page,code}
//   placement_console_request_seconds{page}
// `page` is a label of the console's fixed route table (or "unknown" for
// every other path), `code` one of the few HTTP statuses the console answers
// with (or "other"): whatever paths a caller sends, the series stay those
// of the table.
class ConsoleMetrics {
 public:
  // `pages`: the route table's labels ("unknown" is added).
  ConsoleMetrics(prometheus::Registry& registry,
                 const std::vector<std::string>& pages);

  // One answer: `page` outside the known labels counts as "unknown".
  void Answered(absl::string_view page, int status, absl::Duration took);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& seconds_;
  absl::flat_hash_map<std::string, prometheus::Histogram*> histograms_;
  absl::Mutex mu_;
  // Looked up once per (page, code) and kept.
  absl::flat_hash_map<std::string, prometheus::Counter*> counters_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_METRICS_CONSOLE_METRICS_H_
