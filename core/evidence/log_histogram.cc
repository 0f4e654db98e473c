#include "core/evidence/log_histogram.h"

#include <algorithm>
#include <cmath>

namespace placement::core {

int LogHistogram::BucketOf(const LogHistogramSpec& spec, double value) {
  if (!(value > spec.lowest)) return 0;
  const int bucket = static_cast<int>(
      std::floor(std::log(value / spec.lowest) / std::log(spec.growth)));
  return std::clamp(bucket, 0, std::min(spec.buckets, kHistogramBuckets) - 1);
}

void LogHistogram::Add(const LogHistogramSpec& spec, double value,
                       int64_t weight) {
  if (value <= 0 || weight <= 0) return;
  counts[BucketOf(spec, value)] += weight;
}

void LogHistogram::Merge(const LogHistogram& other) {
  for (int i = 0; i < kHistogramBuckets; ++i) counts[i] += other.counts[i];
}

int64_t LogHistogram::Total() const {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  return total;
}

double LogHistogram::Quantile(const LogHistogramSpec& spec, double q) const {
  const int64_t total = Total();
  if (total == 0) return 0;
  // The smallest bucket whose cumulative count reaches ceil(q * total).
  const int64_t rank = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * total)));
  int64_t seen = 0;
  for (int i = 0; i < kHistogramBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return spec.lowest * std::pow(spec.growth, i + 0.5);
  }
  return spec.lowest * std::pow(spec.growth, kHistogramBuckets - 0.5);
}

}  // namespace placement::core
