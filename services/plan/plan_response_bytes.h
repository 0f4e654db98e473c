#ifndef PLACEMENT_SERVICES_PLAN_PLAN_RESPONSE_BYTES_H_
#define PLACEMENT_SERVICES_PLAN_PLAN_RESPONSE_BYTES_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace placement::services {

// What makes one PlacePlan answer different from another made against the
// same plan result: PlacePlanResponse's per-plan fields.
struct PlanStamp {
  std::string plan_id;
  absl::Time create_time;
  absl::Time evidence_time;
  std::vector<std::string> warnings;
};

// The wire bytes of a PlacePlanResponse made of a plan result and a stamp.
//
// `result` is the serialization of a PlacePlanResponse holding only the
// result's fields (all but plan_id, create_time, evidence_time and
// warnings), shared by every plan answered with it: the buffer references
// it, it is not copied, and nothing of the result is parsed, merged or
// serialized again. The stamp's fields are serialized around it (protobuf
// parsers take fields in any order and append repeated ones), so the bytes
// parse to the message that setting every field would give.
grpc::ByteBuffer PlanResponseBytes(const grpc::Slice& result,
                                   const PlanStamp& stamp);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PLAN_PLAN_RESPONSE_BYTES_H_
