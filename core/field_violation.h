#ifndef PLACEMENT_CORE_FIELD_VIOLATION_H_
#define PLACEMENT_CORE_FIELD_VIOLATION_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace placement::core {

// One rejected input field, named by its path in the public API
// (e.g. "pool.gpus_per_node", "recipe.lora_rank"). The service layer turns a
// list of these into a google.rpc.BadRequest detail.
struct FieldViolation {
  std::string field;
  std::string description;

  friend bool operator==(const FieldViolation&,
                         const FieldViolation&) = default;
};

using FieldViolations = std::vector<FieldViolation>;

// An INVALID_ARGUMENT status that carries `violations` as a payload, so that
// the one place mapping absl::Status to gRPC can attach them as a
// google.rpc.BadRequest. The message lists them for humans too.
// `violations` must not be empty.
absl::Status InvalidArgumentWithViolations(const FieldViolations& violations);

// The violations carried by a status made by InvalidArgumentWithViolations;
// empty for any other status.
FieldViolations ViolationsFromStatus(const absl::Status& status);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_FIELD_VIOLATION_H_
