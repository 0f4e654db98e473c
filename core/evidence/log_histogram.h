#ifndef PLACEMENT_CORE_EVIDENCE_LOG_HISTOGRAM_H_
#define PLACEMENT_CORE_EVIDENCE_LOG_HISTOGRAM_H_

#include <array>
#include <cstdint>

namespace placement::core {

// A fixed log-bucket histogram: bucket i counts values in
// [lowest * growth^i, lowest * growth^(i+1)); values below `lowest` fall in
// bucket 0, values above the last edge in the last bucket. Being a fixed
// array of counters it merges by addition, so a SQL rollup row can keep it
// as a bigint[] updated in the same transaction as the run insert.
struct LogHistogramSpec {
  double lowest = 0;
  double growth = 0;
  int buckets = 0;
};
inline constexpr int kHistogramBuckets = 64;

struct LogHistogram {
  std::array<int64_t, kHistogramBuckets> counts{};

  void Add(const LogHistogramSpec& spec, double value, int64_t weight = 1);
  void Merge(const LogHistogram& other);
  int64_t Total() const;
  // The q-quantile (0..1) as the geometric middle of its bucket; 0 if empty.
  // Accurate to half a bucket (~9% for step time, ~6% for memory).
  double Quantile(const LogHistogramSpec& spec, double q) const;
  static int BucketOf(const LogHistogramSpec& spec, double value);

  friend bool operator==(const LogHistogram&, const LogHistogram&) = default;
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_EVIDENCE_LOG_HISTOGRAM_H_
