#include "services/plan/plan_response_bytes.h"

#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "placement/v1/placement.pb.h"
#include "services/api/catalog_convert.h"

namespace placement::services {
namespace {

using Response = v1::PlacePlanResponse;

// The stamp's fields go before the result's (plan_id, number 1) and after
// them (the others), as close to field-number order as a shared result
// allows.
static_assert(Response::kPlanIdFieldNumber == 1);

}  // namespace

grpc::ByteBuffer PlanResponseBytes(const grpc::Slice& result,
                                   const PlanStamp& stamp) {
  Response head;
  head.set_plan_id(stamp.plan_id);
  Response tail;
  common::TimeToProto(stamp.create_time, tail.mutable_create_time());
  common::TimeToProto(stamp.evidence_time, tail.mutable_evidence_time());
  for (const std::string& warning : stamp.warnings) tail.add_warnings(warning);
  const grpc::Slice slices[] = {grpc::Slice(common::DeterministicBytes(head)),
                                result,
                                grpc::Slice(common::DeterministicBytes(tail))};
  return grpc::ByteBuffer(slices, std::size(slices));
}

}  // namespace placement::services
