#include "common/proto_time.h"

#include <cstdint>

namespace placement::common {

void TimeToProto(absl::Time time, google::protobuf::Timestamp* out) {
  const int64_t micros = absl::ToUnixMicros(time);
  int64_t seconds = micros / 1000000;
  int64_t rest = micros % 1000000;
  if (rest < 0) {
    rest += 1000000;
    --seconds;
  }
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(rest * 1000));
}

google::protobuf::Timestamp TimeToProto(absl::Time time) {
  google::protobuf::Timestamp out;
  TimeToProto(time, &out);
  return out;
}

absl::Time TimeFromProto(const google::protobuf::Timestamp& timestamp) {
  return absl::FromUnixSeconds(timestamp.seconds()) +
         absl::Nanoseconds(timestamp.nanos());
}

void DurationToProto(absl::Duration duration, google::protobuf::Duration* out) {
  const int64_t seconds =
      absl::IDivDuration(duration, absl::Seconds(1), &duration);
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(duration)));
}

absl::Duration DurationFromProto(const google::protobuf::Duration& duration) {
  return absl::Seconds(duration.seconds()) +
         absl::Nanoseconds(duration.nanos());
}

}  // namespace placement::common
