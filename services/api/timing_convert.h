#ifndef PLACEMENT_SERVICES_API_TIMING_CONVERT_H_
#define PLACEMENT_SERVICES_API_TIMING_CONVERT_H_

// When a candidate would start and finish, and a deadline's verdict, as the
// API shows them (core/plan/candidate_timing.h).

#include "core/plan/candidate_timing.h"
#include "core/queue/start_estimate.h"
#include "placement/v1/placement.pb.h"

namespace placement::services {

v1::StartStatus StartStatusToProto(core::StartStatus status);

void CandidateTimingToProto(const core::CandidateTiming& timing,
                            v1::CandidateTiming* out);

void DeadlineVerdictToProto(const core::DeadlineVerdict& verdict,
                            v1::DeadlineVerdict* out);

// A duration of `seconds` (rounded to the millisecond).
void SecondsToProto(double seconds, google::protobuf::Duration* out);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_TIMING_CONVERT_H_
