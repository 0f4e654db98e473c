// common/proto_bytes: equal messages give equal bytes (map entries in key
// order whatever order they were set in), and the bytes parse back.
#include "common/proto_bytes.h"

#include <string>

#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"

namespace placement::common {
namespace {

google::protobuf::Struct WithKeys(bool reversed) {
  google::protobuf::Struct s;
  for (int i = 0; i < 50; ++i) {
    const int k = reversed ? 49 - i : i;
    (*s.mutable_fields())[std::string("key") + std::to_string(k)]
        .set_number_value(k);
  }
  return s;
}

TEST(DeterministicBytesTest, EqualMapsGiveEqualBytesWhateverTheInsertOrder) {
  const std::string forward = DeterministicBytes(WithKeys(false));
  const std::string backward = DeterministicBytes(WithKeys(true));
  EXPECT_EQ(forward, backward);
  EXPECT_EQ(DeterministicBytes(WithKeys(false)), forward);  // repeatable
}

TEST(DeterministicBytesTest, BytesParseBackToAnEqualMessage) {
  const google::protobuf::Struct in = WithKeys(true);
  google::protobuf::Struct out;
  ASSERT_TRUE(out.ParseFromString(DeterministicBytes(in)));
  ASSERT_EQ(out.fields_size(), 50);
  EXPECT_EQ(out.fields().at("key7").number_value(), 7);
  EXPECT_EQ(DeterministicBytes(out), DeterministicBytes(in));
}

TEST(DeterministicBytesTest, DifferentMessagesGiveDifferentBytes) {
  google::protobuf::Struct a = WithKeys(false);
  google::protobuf::Struct b = WithKeys(false);
  (*b.mutable_fields())["key3"].set_number_value(4);
  EXPECT_NE(DeterministicBytes(a), DeterministicBytes(b));
}

TEST(DeterministicBytesTest, AnEmptyMessageIsNoBytes) {
  EXPECT_EQ(DeterministicBytes(google::protobuf::Struct()), "");
}

}  // namespace
}  // namespace placement::common
