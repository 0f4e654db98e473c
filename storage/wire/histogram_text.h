#ifndef PLACEMENT_STORAGE_HISTOGRAM_TEXT_H_
#define PLACEMENT_STORAGE_HISTOGRAM_TEXT_H_

// A core::LogHistogram as the bigint[] a rollup row keeps it in, in
// PostgreSQL's text form ("{0,3,1,...}").

#include <string>

#include "absl/strings/string_view.h"
#include "core/evidence/log_histogram.h"

namespace placement::storage {

std::string CountsLiteral(const core::LogHistogram& histogram);

// The counts of a bigint[] literal; elements past kHistogramBuckets and
// ones that do not parse are left out (0).
core::LogHistogram CountsFromLiteral(absl::string_view text);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_HISTOGRAM_TEXT_H_
