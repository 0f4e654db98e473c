// storage/binary_array: PostgreSQL's binary array format, byte for byte
// (array_recv: ndim, has-nulls flag, element OID, then per dimension its
// size and lower bound, then each element as a length and its bytes, -1
// for NULL).
#include "storage/wire/binary_array.h"

#include <string>
#include <utility>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/wire/pg_binary.h"
#include "tests/storage/wire/byte_test_util.h"

namespace placement::storage {
namespace {

TEST(BinaryArrayTest, AnEmptyArrayHasNoDimensions) {
  BinaryArray a(BinaryArray::kText);
  EXPECT_EQ(Hex(std::move(a).Finish()),
            Hex(Bytes("00000000 00000000 00000019")));
}

TEST(BinaryArrayTest, TextElementsAndANull) {
  BinaryArray a(BinaryArray::kText);
  a.AddBytes("ab");
  a.AddNull();
  a.AddBytes("");
  EXPECT_EQ(Hex(std::move(a).Finish()),
            Hex(Bytes("00000001 00000001 00000019"  // 1 dim, nulls, text
                      " 00000003 00000001"          // 3 elements from 1
                      " 00000002 6162"              // "ab"
                      " ffffffff"                   // NULL
                      " 00000000")));               // ""
}

TEST(BinaryArrayTest, ByteaKeepsEveryByte) {
  BinaryArray a(BinaryArray::kBytea);
  a.AddBytes(std::string("\0\xff\n", 3));
  EXPECT_EQ(Hex(std::move(a).Finish()),
            Hex(Bytes("00000001 00000000 00000011 00000001 00000001"
                      " 00000003 00ff0a")));
}

TEST(BinaryArrayTest, UuidsAreSixteenBytesEach) {
  BinaryArray a(BinaryArray::kUuid);
  EXPECT_TRUE(a.AddUuid("0123abcd-4567-89ef-0a1b-c2d3e4f5a6b7"));
  EXPECT_EQ(Hex(std::move(a).Finish()),
            Hex(Bytes("00000001 00000000 00000b86 00000001 00000001"
                      " 00000010 0123abcd456789ef0a1bc2d3e4f5a6b7")));
}

TEST(BinaryArrayTest, ANonUuidIsRefusedAndAddsNothing) {
  BinaryArray a(BinaryArray::kUuid);
  EXPECT_FALSE(a.AddUuid("not-a-uuid"));
  EXPECT_EQ(Hex(std::move(a).Finish()),
            Hex(Bytes("00000000 00000000 00000b86")));
}

TEST(BinaryArrayTest, TimestampsAreMicrosSincePostgresEpoch) {
  BinaryArray a(BinaryArray::kTimestamptz);
  a.AddTimestamp(absl::FromUnixMicros(kPostgresEpochUnixMicros));
  a.AddTimestamp(absl::UnixEpoch());
  a.AddTimestamp(absl::FromUnixMicros(1'700'000'000'123'456));
  EXPECT_EQ(Hex(std::move(a).Finish()),
            Hex(Bytes("00000001 00000000 000004a0 00000003 00000001"
                      " 00000008 0000000000000000"
                      " 00000008 fffca2fec4c82000"
                      " 00000008 0002ad22dce84240")));
}

}  // namespace
}  // namespace placement::storage
