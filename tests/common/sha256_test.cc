// common/sha256: the FIPS 180-2 test vectors, as 32 raw bytes.
#include "common/sha256.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace placement::common {
namespace {

std::string HexSha256(absl::string_view bytes) {
  return absl::BytesToHexString(Sha256(bytes));
}

TEST(Sha256Test, ReturnsTheRaw32ByteDigest) {
  EXPECT_EQ(Sha256("abc").size(), 32u);
  EXPECT_EQ(Sha256("").size(), 32u);
}

TEST(Sha256Test, MatchesTheKnownVectors) {
  EXPECT_EQ(HexSha256(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexSha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      HexSha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(HexSha256(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, HashesEmbeddedNulBytes) {
  // Secrets are bytes: a NUL inside does not end the input.
  EXPECT_NE(Sha256(std::string("a\0b", 3)), Sha256("a"));
  EXPECT_NE(Sha256(std::string("\0", 1)), Sha256(""));
}

}  // namespace
}  // namespace placement::common
