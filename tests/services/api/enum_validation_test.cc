// services/api/enum_validation: every enum field holding a number its enum
// does not declare is named by its request path (nested messages, repeated
// fields, map values), whatever message it is in; declared values, unset
// fields and UNSPECIFIED pass.
#include "services/api/enum_validation.h"

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "placement/v1/cost.pb.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::services {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Sets `field` of `message` to `number` as a client's bytes could: proto3
// keeps an undeclared number as it came.
void SetRawEnum(google::protobuf::Message* message, const char* field,
                int number) {
  const google::protobuf::FieldDescriptor* f =
      message->GetDescriptor()->FindFieldByName(field);
  ASSERT_NE(f, nullptr) << field;
  message->GetReflection()->SetEnumValue(message, f, number);
}

void AddRawEnum(google::protobuf::Message* message, const char* field,
                int number) {
  const google::protobuf::FieldDescriptor* f =
      message->GetDescriptor()->FindFieldByName(field);
  ASSERT_NE(f, nullptr) << field;
  message->GetReflection()->AddEnumValue(message, f, number);
}

auto FieldIs(const std::string& path) {
  return Field(&core::FieldViolation::field, path);
}

TEST(UndeclaredEnumValuesTest, DeclaredAndUnsetValuesPass) {
  v1::UploadBenchmarkRunRequest request;
  EXPECT_THAT(UndeclaredEnumValues(request), IsEmpty());
  request.mutable_run()->set_outcome(v1::RUN_OUTCOME_SUCCEEDED);
  request.mutable_run()->mutable_recipe()->set_method(
      v1::FINE_TUNE_METHOD_QLORA);
  request.mutable_run()->add_evals()->set_serving_precision(
      v1::Precision());  // UNSPECIFIED is declared
  EXPECT_THAT(UndeclaredEnumValues(request), IsEmpty());
}

TEST(UndeclaredEnumValuesTest, NamesNestedFieldsByTheirPath) {
  v1::UploadBenchmarkRunRequest request;
  SetRawEnum(request.mutable_run(), "outcome", 99);
  SetRawEnum(request.mutable_run()->mutable_recipe(), "method", 42);
  const core::FieldViolations v = UndeclaredEnumValues(request);
  ASSERT_EQ(v.size(), 2u);
  // Fields in number order: recipe (7) before outcome (21).
  EXPECT_EQ(v[0].field, "run.recipe.method");
  EXPECT_THAT(v[0].description, HasSubstr("42"));
  EXPECT_THAT(v[0].description, HasSubstr("placement.v1.FineTuneMethod"));
  EXPECT_EQ(v[1].field, "run.outcome");
  EXPECT_THAT(v[1].description, HasSubstr("99"));
}

TEST(UndeclaredEnumValuesTest, IndexesRepeatedMessages) {
  v1::BenchmarkRun run;
  run.add_evals()->set_serving_precision(v1::Precision());
  run.add_evals();
  run.add_evals();
  SetRawEnum(run.mutable_evals(2), "serving_precision", 1234);
  EXPECT_THAT(UndeclaredEnumValues(run, "run."),
              ElementsAre(FieldIs("run.evals[2].serving_precision")));
}

TEST(UndeclaredEnumValuesTest, IndexesRepeatedEnums) {
  v1::GetCostReportRequest request;
  request.mutable_filter()->add_methods(v1::FINE_TUNE_METHOD_LORA);
  AddRawEnum(request.mutable_filter(), "methods", 77);
  request.add_group_by(v1::COST_DIMENSION_DAY);
  AddRawEnum(&request, "group_by", -1);
  EXPECT_THAT(
      UndeclaredEnumValues(request),
      ElementsAre(FieldIs("filter.methods[1]"), FieldIs("group_by[1]")));
}

TEST(UndeclaredEnumValuesTest, KeysMapValuesByTheirKey) {
  // Struct's map<string, Value> holds Value's null_value enum.
  google::protobuf::Struct s;
  (*s.mutable_fields())["fine"].set_null_value(google::protobuf::NULL_VALUE);
  SetRawEnum(&(*s.mutable_fields())["k"], "null_value", 5);
  EXPECT_THAT(UndeclaredEnumValues(s),
              ElementsAre(FieldIs("fields[\"k\"].null_value")));
}

TEST(UndeclaredEnumValuesTest, PrefixesEveryPath) {
  v1::BenchmarkRun run;
  SetRawEnum(&run, "offload", 9);
  EXPECT_THAT(UndeclaredEnumValues(run, "request.run."),
              ElementsAre(FieldIs("request.run.offload")));
}

}  // namespace
}  // namespace placement::services
