#ifndef PLACEMENT_SERVICES_API_FIELD_WALK_H_
#define PLACEMENT_SERVICES_API_FIELD_WALK_H_

#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace placement::services {

// What a walk over a request's set fields reports. Paths are the request's
// field paths: "recipe.precision", "run.evals[2].serving_precision",
// "labels[\"k\"]" (a map's string keys C-escaped in the path).
class FieldVisitor {
 public:
  virtual ~FieldVisitor() = default;
  // An enum value, singular, repeated or a map's value.
  virtual void Enum(const google::protobuf::EnumDescriptor& type, int number,
                    const std::string& path) = 0;
  // A `string` value (never `bytes`), or a map's string key; a key is
  // reported at its map's path.
  virtual void Text(const std::string& value, const std::string& path) = 0;
};

// Visits every set field of `message` at any depth (nested messages,
// repeated fields, map keys and values), each path prefixed with `prefix`.
// Walks by reflection, so a field added later is covered without anyone
// listing it.
void WalkFields(const google::protobuf::Message& message,
                const std::string& prefix, FieldVisitor& visitor);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_FIELD_WALK_H_
