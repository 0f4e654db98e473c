// common/proto_time: Timestamp <-> absl::Time to the microsecond with nanos
// in [0, 1e9) before the epoch too; Duration <-> absl::Duration to the
// nanosecond with seconds and nanos of one sign.
#include "common/proto_time.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace placement::common {
namespace {

// The range google.protobuf.Timestamp allows: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z.
constexpr int64_t kMinTimestampSeconds = -62'135'596'800;
constexpr int64_t kMaxTimestampSeconds = 253'402'300'799;

TEST(TimeToProtoTest, SplitsIntoSecondsAndNanos) {
  const google::protobuf::Timestamp t = TimeToProto(
      absl::FromUnixSeconds(1'700'000'000) + absl::Microseconds(123'456));
  EXPECT_EQ(t.seconds(), 1'700'000'000);
  EXPECT_EQ(t.nanos(), 123'456'000);
  EXPECT_EQ(TimeToProto(absl::UnixEpoch()).seconds(), 0);
  EXPECT_EQ(TimeToProto(absl::UnixEpoch()).nanos(), 0);
}

TEST(TimeToProtoTest, KeepsMicrosecondsOnly) {
  // What PostgreSQL keeps: the nanoseconds below a microsecond are dropped.
  const google::protobuf::Timestamp t =
      TimeToProto(absl::FromUnixSeconds(10) + absl::Nanoseconds(1'999));
  EXPECT_EQ(t.seconds(), 10);
  EXPECT_EQ(t.nanos(), 1'000);
}

TEST(TimeToProtoTest, TimesBeforeTheEpochKeepNanosNonNegative) {
  const google::protobuf::Timestamp t =
      TimeToProto(absl::UnixEpoch() - absl::Microseconds(1));
  EXPECT_EQ(t.seconds(), -1);
  EXPECT_EQ(t.nanos(), 999'999'000);
  const google::protobuf::Timestamp u =
      TimeToProto(absl::FromUnixSeconds(-5) - absl::Milliseconds(250));
  EXPECT_EQ(u.seconds(), -6);
  EXPECT_EQ(u.nanos(), 750'000'000);
  // A whole second before the epoch has no nanos at all.
  const google::protobuf::Timestamp w = TimeToProto(absl::FromUnixSeconds(-7));
  EXPECT_EQ(w.seconds(), -7);
  EXPECT_EQ(w.nanos(), 0);
}

TEST(TimeToProtoTest, TheOverloadsAgree) {
  const absl::Time time = absl::FromUnixMicros(-1'234'567);
  google::protobuf::Timestamp out;
  out.set_seconds(99);  // overwritten
  TimeToProto(time, &out);
  EXPECT_EQ(out.SerializeAsString(), TimeToProto(time).SerializeAsString());
}

TEST(TimeFromProtoTest, ReadsSecondsAndNanos) {
  google::protobuf::Timestamp t;
  t.set_seconds(-1);
  t.set_nanos(500'000'000);
  EXPECT_EQ(TimeFromProto(t), absl::UnixEpoch() - absl::Milliseconds(500));
  EXPECT_EQ(TimeFromProto(google::protobuf::Timestamp()), absl::UnixEpoch());
}

TEST(ProtoTimeTest, MicrosecondTimesRoundTripAcrossTheWholeTimestampRange) {
  for (const absl::Time time :
       {absl::FromUnixSeconds(kMinTimestampSeconds),
        absl::FromUnixSeconds(kMinTimestampSeconds) + absl::Microseconds(1),
        absl::UnixEpoch() - absl::Microseconds(1), absl::UnixEpoch(),
        absl::FromUnixMicros(1'700'000'000'123'456),
        absl::FromUnixSeconds(kMaxTimestampSeconds) +
            absl::Microseconds(999'999)}) {
    const google::protobuf::Timestamp t = TimeToProto(time);
    EXPECT_GE(t.seconds(), kMinTimestampSeconds) << time;
    EXPECT_LE(t.seconds(), kMaxTimestampSeconds) << time;
    EXPECT_GE(t.nanos(), 0) << time;
    EXPECT_LT(t.nanos(), 1'000'000'000) << time;
    EXPECT_EQ(TimeFromProto(t), time);
  }
}

TEST(DurationToProtoTest, SecondsAndNanosShareTheSign) {
  google::protobuf::Duration d;
  DurationToProto(absl::Milliseconds(1'500), &d);
  EXPECT_EQ(d.seconds(), 1);
  EXPECT_EQ(d.nanos(), 500'000'000);
  DurationToProto(absl::Milliseconds(-1'500), &d);
  EXPECT_EQ(d.seconds(), -1);
  EXPECT_EQ(d.nanos(), -500'000'000);
  DurationToProto(absl::Nanoseconds(-1), &d);
  EXPECT_EQ(d.seconds(), 0);
  EXPECT_EQ(d.nanos(), -1);
  DurationToProto(absl::ZeroDuration(), &d);
  EXPECT_EQ(d.seconds(), 0);
  EXPECT_EQ(d.nanos(), 0);
}

TEST(ProtoDurationTest, NanosecondDurationsRoundTrip) {
  // google.protobuf.Duration's range is +-315,576,000,000 s.
  for (const absl::Duration duration :
       {absl::ZeroDuration(), absl::Nanoseconds(1), absl::Nanoseconds(-1),
        absl::Seconds(3) + absl::Nanoseconds(999'999'999),
        -(absl::Seconds(3) + absl::Nanoseconds(999'999'999)),
        absl::Seconds(315'576'000'000) + absl::Nanoseconds(999'999'999),
        -absl::Seconds(315'576'000'000) - absl::Nanoseconds(999'999'999)}) {
    google::protobuf::Duration d;
    DurationToProto(duration, &d);
    EXPECT_LT(d.nanos(), 1'000'000'000) << duration;
    EXPECT_GT(d.nanos(), -1'000'000'000) << duration;
    EXPECT_FALSE(d.seconds() > 0 && d.nanos() < 0) << duration;
    EXPECT_FALSE(d.seconds() < 0 && d.nanos() > 0) << duration;
    EXPECT_EQ(DurationFromProto(d), duration);
  }
}

}  // namespace
}  // namespace placement::common
