// services/plan/plan_response_bytes: the wire bytes of a PlacePlan answer,
// made of a shared serialized result and a per-plan stamp, parse to the
// message that setting every field would give; the result is referenced,
// not copied.
#include "services/plan/plan_response_bytes.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/proto_bytes.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.pb.h"

namespace placement::services {
namespace {

using v1::PlacePlanResponse;

// A result with the fields every plan answered with it shares.
PlacePlanResponse Result() {
  PlacePlanResponse r;
  r.set_recipe_key("rk1-c5feac3758c091b1");
  r.mutable_recipe()->set_model("llama-3.1-8b");
  r.mutable_recipe()->set_method(v1::FINE_TUNE_METHOD_LORA);
  for (int i = 1; i <= 3; ++i) {
    v1::PlacementCandidate* c = r.add_candidates();
    c->set_rank(i);
    c->set_pool("pool-" + std::to_string(i));
    c->set_sku("H100-SXM5-80GB");
    c->set_gpu_count(8 * i);
  }
  r.add_rejections()->set_pool("pool-small");
  r.set_eval_requirement("bake off before committing");
  return r;
}

PlanStamp Stamp(const std::string& plan_id) {
  return PlanStamp{
      .plan_id = plan_id,
      .create_time = absl::FromUnixMicros(1'700'000'000'123'456),
      .evidence_time = absl::FromUnixMicros(1'699'999'990'000'001),
      .warnings = {"few runs of this recipe", "list price unknown"},
  };
}

// The message with every field set, as the bytes must parse.
PlacePlanResponse Expected(const PlacePlanResponse& result,
                           const PlanStamp& stamp) {
  PlacePlanResponse r = result;
  r.set_plan_id(stamp.plan_id);
  common::TimeToProto(stamp.create_time, r.mutable_create_time());
  common::TimeToProto(stamp.evidence_time, r.mutable_evidence_time());
  for (const std::string& w : stamp.warnings) r.add_warnings(w);
  return r;
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return bytes;
}

grpc::Slice SliceOf(const PlacePlanResponse& result) {
  return grpc::Slice(common::DeterministicBytes(result));
}

TEST(PlanResponseBytesTest, ParsesToTheMessageWithEveryFieldSet) {
  const PlacePlanResponse result = Result();
  const PlanStamp stamp = Stamp("0190f3c2-7a4b-7c3d-8e5f-123456789abc");
  PlacePlanResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(
      Flatten(PlanResponseBytes(SliceOf(result), stamp))));
  EXPECT_EQ(common::DeterministicBytes(parsed),
            common::DeterministicBytes(Expected(result, stamp)));
  EXPECT_EQ(parsed.plan_id(), stamp.plan_id);
  EXPECT_EQ(common::TimeFromProto(parsed.create_time()), stamp.create_time);
  EXPECT_EQ(common::TimeFromProto(parsed.evidence_time()), stamp.evidence_time);
  ASSERT_EQ(parsed.warnings_size(), 2);
  EXPECT_EQ(parsed.warnings(1), "list price unknown");
  ASSERT_EQ(parsed.candidates_size(), 3);
  EXPECT_EQ(parsed.candidates(2).gpu_count(), 24);
}

TEST(PlanResponseBytesTest, EqualInputGivesEqualBytes) {
  const grpc::Slice result = SliceOf(Result());
  EXPECT_EQ(Flatten(PlanResponseBytes(result, Stamp("a"))),
            Flatten(PlanResponseBytes(result, Stamp("a"))));
  EXPECT_NE(Flatten(PlanResponseBytes(result, Stamp("a"))),
            Flatten(PlanResponseBytes(result, Stamp("b"))));
}

TEST(PlanResponseBytesTest, EachPlanOfASharedResultGetsItsOwnStamp) {
  const PlacePlanResponse result = Result();
  const grpc::Slice shared = SliceOf(result);
  PlanStamp first = Stamp("first-plan");
  PlanStamp second = Stamp("second-plan");
  second.create_time += absl::Seconds(5);
  second.warnings = {};
  for (const PlanStamp& stamp : {first, second}) {
    PlacePlanResponse parsed;
    ASSERT_TRUE(
        parsed.ParseFromString(Flatten(PlanResponseBytes(shared, stamp))));
    EXPECT_EQ(common::DeterministicBytes(parsed),
              common::DeterministicBytes(Expected(result, stamp)))
        << stamp.plan_id;
  }
}

TEST(PlanResponseBytesTest, AnEmptyStampAddsNoStrayFields) {
  const PlacePlanResponse result = Result();
  const PlanStamp stamp{.plan_id = "",
                        .create_time = absl::UnixEpoch(),
                        .evidence_time = absl::UnixEpoch(),
                        .warnings = {}};
  PlacePlanResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(
      Flatten(PlanResponseBytes(SliceOf(result), stamp))));
  EXPECT_EQ(parsed.plan_id(), "");
  EXPECT_EQ(parsed.warnings_size(), 0);
  EXPECT_EQ(common::DeterministicBytes(parsed),
            common::DeterministicBytes(Expected(result, stamp)));
}

TEST(PlanResponseBytesTest, AnEmptyResultIsTheStampAlone) {
  const PlanStamp stamp = Stamp("only-stamp");
  PlacePlanResponse parsed;
  ASSERT_TRUE(
      parsed.ParseFromString(Flatten(PlanResponseBytes(grpc::Slice(), stamp))));
  EXPECT_EQ(common::DeterministicBytes(parsed),
            common::DeterministicBytes(Expected(PlacePlanResponse(), stamp)));
}

TEST(PlanResponseBytesTest, TheResultIsReferencedNotCopied) {
  const grpc::Slice result = SliceOf(Result());
  ASSERT_GT(result.size(), 64u);  // not a slice small enough to inline
  const grpc::ByteBuffer buffer = PlanResponseBytes(result, Stamp("p"));
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(buffer.Dump(&slices).ok());
  bool shared = false;
  for (const grpc::Slice& s : slices) shared |= s.begin() == result.begin();
  EXPECT_TRUE(shared);
}

}  // namespace
}  // namespace placement::services
