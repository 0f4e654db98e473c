#ifndef PLACEMENT_COMMON_PROTO_TIME_H_
#define PLACEMENT_COMMON_PROTO_TIME_H_

#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace placement::common {

// google.protobuf.Timestamp <-> absl::Time, to the microsecond (what
// PostgreSQL keeps). Times before the epoch keep nanos in [0, 1e9) as the
// Timestamp contract requires.
void TimeToProto(absl::Time time, google::protobuf::Timestamp* out);
google::protobuf::Timestamp TimeToProto(absl::Time time);
absl::Time TimeFromProto(const google::protobuf::Timestamp& timestamp);

// google.protobuf.Duration <-> absl::Duration, to the nanosecond; seconds
// and nanos carry the same sign as the Duration contract requires.
void DurationToProto(absl::Duration duration, google::protobuf::Duration* out);
absl::Duration DurationFromProto(const google::protobuf::Duration& duration);

}  // namespace placement::common

#endif  // PLACEMENT_COMMON_PROTO_TIME_H_
