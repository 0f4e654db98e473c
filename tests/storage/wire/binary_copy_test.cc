// storage/binary_copy: PostgreSQL's binary COPY format, byte for byte: the
// 19-byte header, per row a 16-bit field count and each field as a 32-bit
// length and its bytes (-1 for NULL), and the 0xffff trailer.
#include "storage/wire/binary_copy.h"

#include <limits>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/wire/pg_binary.h"
#include "tests/storage/wire/byte_test_util.h"

namespace placement::storage {
namespace {

// "PGCOPY\n\377\r\n\0", flags 0, header extension length 0.
constexpr char kHeader[] = "5047434f50590aff0d0a00 00000000 00000000";
constexpr char kTrailer[] = "ffff";

TEST(BinaryCopyTest, NoRowsIsHeaderAndTrailer) {
  BinaryCopy copy;
  const std::string data = std::move(copy).Finish();
  EXPECT_EQ(data.size(), 21u);
  EXPECT_EQ(Hex(data), Hex(Bytes(std::string(kHeader) + kTrailer)));
}

TEST(BinaryCopyTest, IntegersDoublesAndNulls) {
  BinaryCopy copy;
  copy.StartRow(3);
  copy.AddInt64(1);
  copy.AddDouble(1.0);
  copy.AddNull();
  copy.StartRow(3);
  copy.AddInt64(-2);
  copy.AddDouble(-2.5);
  copy.AddInt64(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Hex(std::move(copy).Finish()),
            Hex(Bytes(std::string(kHeader) +
                      " 0003"
                      " 00000008 0000000000000001"
                      " 00000008 3ff0000000000000"
                      " ffffffff"
                      " 0003"
                      " 00000008 fffffffffffffffe"
                      " 00000008 c004000000000000"
                      " 00000008 7fffffffffffffff " +
                      kTrailer)));
}

TEST(BinaryCopyTest, TimestampsAreMicrosSincePostgresEpoch) {
  BinaryCopy copy;
  copy.StartRow(2);
  copy.AddTimestamp(absl::FromUnixMicros(kPostgresEpochUnixMicros + 1));
  copy.AddTimestamp(absl::UnixEpoch());
  EXPECT_EQ(Hex(std::move(copy).Finish()),
            Hex(Bytes(std::string(kHeader) +
                      " 0002"
                      " 00000008 0000000000000001"
                      " 00000008 fffca2fec4c82000 " +
                      kTrailer)));
}

TEST(BinaryCopyTest, UuidsAreSixteenBytes) {
  BinaryCopy copy;
  copy.StartRow(1);
  EXPECT_TRUE(copy.AddUuid("0123ABCD-4567-89ef-0a1b-c2d3e4f5a6b7"));
  EXPECT_EQ(Hex(std::move(copy).Finish()),
            Hex(Bytes(std::string(kHeader) +
                      " 0001 00000010 0123abcd456789ef0a1bc2d3e4f5a6b7 " +
                      kTrailer)));
}

TEST(BinaryCopyTest, ANonUuidIsRefusedAndAddsNothing) {
  BinaryCopy copy;
  copy.StartRow(1);
  EXPECT_FALSE(copy.AddUuid("0123abcd-4567-89ef-0a1b-c2d3e4f5a6b"));
  EXPECT_FALSE(copy.AddUuid(""));
  EXPECT_EQ(Hex(std::move(copy).Finish()),
            Hex(Bytes(std::string(kHeader) + " 0001 " + kTrailer)));
}

TEST(BinaryCopyTest, ReserveChangesNoBytes) {
  BinaryCopy plain;
  BinaryCopy reserved;
  reserved.Reserve(4096);
  for (BinaryCopy* copy : {&plain, &reserved}) {
    copy->StartRow(1);
    copy->AddInt64(7);
  }
  EXPECT_EQ(std::move(plain).Finish(), std::move(reserved).Finish());
}

}  // namespace
}  // namespace placement::storage
