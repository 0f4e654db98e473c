#ifndef PLACEMENT_CORE_FIELD_VIOLATION_H_
#define PLACEMENT_CORE_FIELD_VIOLATION_H_

#include <string>
#include <vector>

namespace placement::core {

// One rejected input field, named by its path in the public API
// (e.g. "pool.gpus_per_node", "recipe.lora_rank"). The service layer turns a
// list of these into a google.rpc.BadRequest detail.
struct FieldViolation {
  std::string field;
  std::string description;

  friend bool operator==(const FieldViolation&, const FieldViolation&) = default;
};

using FieldViolations = std::vector<FieldViolation>;

}  // namespace placement::core

#endif  // PLACEMENT_CORE_FIELD_VIOLATION_H_
