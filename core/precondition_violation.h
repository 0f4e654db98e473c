#ifndef PLACEMENT_CORE_PRECONDITION_VIOLATION_H_
#define PLACEMENT_CORE_PRECONDITION_VIOLATION_H_

// What a FAILED_PRECONDITION lacks, one entry per missing piece of state
// (the API sends them as a google.rpc.PreconditionFailure).

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace placement::core {

struct PreconditionViolation {
  std::string type;     // e.g. "BAKE_OFF_INCOMPLETE", "EVAL_MISSING"
  std::string subject;  // what it is about, e.g. "plan/<id>", "pool/a100"
  std::string description;

  friend bool operator==(const PreconditionViolation&,
                         const PreconditionViolation&) = default;
};

// A FAILED_PRECONDITION status whose message lists `violations` and whose
// payload carries them.
absl::Status FailedPreconditionWithViolations(
    const std::vector<PreconditionViolation>& violations);

// The violations a status made by FailedPreconditionWithViolations
// carries; empty for any other status.
std::vector<PreconditionViolation> PreconditionViolationsFromStatus(
    const absl::Status& status);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PRECONDITION_VIOLATION_H_
