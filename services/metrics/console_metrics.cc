#include "services/metrics/console_metrics.h"

#include "absl/strings/str_cat.h"

namespace placement::services {
namespace {

constexpr char kUnknown[] = "unknown";

// The statuses the console answers with; anything else is "other".
std::string CodeLabel(int status) {
  for (int known :
       {200, 303, 400, 401, 403, 404, 405, 408, 413, 415, 431, 500, 503}) {
    if (status == known) return absl::StrCat(status);
  }
  return "other";
}

}  // namespace

ConsoleMetrics::ConsoleMetrics(prometheus::Registry& registry,
                               const std::vector<std::string>& pages)
    : requests_(prometheus::BuildCounter()
                    .Name("placement_console_requests_total")
                    .Help("Web console requests answered, by page (a route "
                          "of the console's table, or unknown) and HTTP "
                          "status.")
                    .Register(registry)),
      seconds_(prometheus::BuildHistogram()
                   .Name("placement_console_request_seconds")
                   .Help("Time to answer a web console request, by page.")
                   .Register(registry)) {
  const prometheus::Histogram::BucketBoundaries buckets = {
      0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  for (const std::string& page : pages) {
    if (!histograms_.contains(page)) {
      histograms_[page] = &seconds_.Add({{"page", page}}, buckets);
    }
  }
  histograms_[kUnknown] = &seconds_.Add({{"page", kUnknown}}, buckets);
}

void ConsoleMetrics::Answered(absl::string_view page, int status,
                              absl::Duration took) {
  auto histogram = histograms_.find(page);
  if (histogram == histograms_.end()) {
    page = kUnknown;
    histogram = histograms_.find(page);
  }
  histogram->second->Observe(absl::ToDoubleSeconds(took));
  const std::string code = CodeLabel(status);
  const std::string key = absl::StrCat(page, "/", code);
  prometheus::Counter* counter = nullptr;
  {
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = counters_.try_emplace(key, nullptr);
    if (inserted) {
      it->second =
          &requests_.Add({{"page", std::string(page)}, {"code", code}});
    }
    counter = it->second;
  }
  counter->Increment();
}

}  // namespace placement::services
