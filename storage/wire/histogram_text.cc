#include "storage/wire/histogram_text.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace placement::storage {

std::string CountsLiteral(const core::LogHistogram& histogram) {
  return absl::StrCat("{", absl::StrJoin(histogram.counts, ","), "}");
}

core::LogHistogram CountsFromLiteral(absl::string_view text) {
  core::LogHistogram histogram;
  absl::ConsumePrefix(&text, "{");
  absl::ConsumeSuffix(&text, "}");
  int i = 0;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    if (i >= core::kHistogramBuckets) break;
    int64_t value = 0;
    if (absl::SimpleAtoi(part, &value)) histogram.counts[i] = value;
    ++i;
  }
  return histogram;
}

}  // namespace placement::storage
