// The one textual form of each core enum: what PostgreSQL stores and what
// storage parses back, so a name that does not round-trip would turn stored
// runs into UNSPECIFIED ones.
#include "core/enum_names.h"

#include "core/evidence/evidence.h"
#include "core/pool.h"
#include "core/recipe.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

template <typename Enum>
void ExpectRoundTrip(int last, const char* (*name)(Enum),
                     std::optional<Enum> (*parse)(absl::string_view)) {
  for (int i = 1; i <= last; ++i) {
    const Enum value = static_cast<Enum>(i);
    ASSERT_STRNE(name(value), "UNSPECIFIED") << "value " << i;
    EXPECT_EQ(parse(name(value)), value) << name(value);
  }
  EXPECT_EQ(parse("UNSPECIFIED"), std::nullopt);
  EXPECT_EQ(parse(""), std::nullopt);
}

TEST(EnumNamesTest, EveryNameParsesBackToItsValue) {
  ExpectRoundTrip(4, FineTuneMethodName, ParseFineTuneMethod);
  ExpectRoundTrip(6, PrecisionName, ParsePrecision);
  ExpectRoundTrip(4, OptimizerName, ParseOptimizer);
  ExpectRoundTrip(7, ParallelismName, ParseParallelism);
  ExpectRoundTrip(3, OffloadName, ParseOffload);
  ExpectRoundTrip(4, InterconnectName, ParseInterconnect);
  ExpectRoundTrip(6, RunOutcomeName, ParseRunOutcome);
  ExpectRoundTrip(3, AttentionImplementationName, ParseAttentionImplementation);
  ExpectRoundTrip(2, ActivationCheckpointingName, ParseActivationCheckpointing);
  ExpectRoundTrip(3, LossImplementationName, ParseLossImplementation);
  ExpectRoundTrip(2, SequencePackingName, ParseSequencePacking);
  ExpectRoundTrip(7, TrainingFrameworkName, ParseTrainingFramework);
  ExpectRoundTrip(3, PeakMemoryKindName, ParsePeakMemoryKind);
  ExpectRoundTrip(7, AdapterTypeName, ParseAdapterType);
  ExpectRoundTrip(2, FabricName, ParseFabric);
  ExpectRoundTrip(4, InterNodeFabricName, ParseInterNodeFabric);
  ExpectRoundTrip(2, PoolPurposeName, ParsePoolPurpose);
}

TEST(EnumNamesTest, StoredTextIsTheProtoNameWithoutItsPrefix) {
  EXPECT_EQ(ParseFineTuneMethod("HEAD_ONLY"), FineTuneMethod::kHeadOnly);
  EXPECT_EQ(ParseRunOutcome("OUT_OF_MEMORY"), RunOutcome::kOom);
  EXPECT_EQ(ParseOffload("NVME"), Offload::kNvme);
  // Neither the proto spelling nor another case is the stored form.
  EXPECT_EQ(ParseFineTuneMethod("FINE_TUNE_METHOD_LORA"), std::nullopt);
  EXPECT_EQ(ParseFineTuneMethod("lora"), std::nullopt);
}

}  // namespace
}  // namespace placement::core
