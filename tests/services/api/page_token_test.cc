// services/api/page_token: tokens round-trip the last key, are opaque
// (web-safe base64, versioned), and anything not made by EncodePageToken
// is INVALID_ARGUMENT naming the field; page sizes default and clamp.
#include "services/api/page_token.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "core/field_violation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

constexpr char kUuid[] = "0190f3c2-7a4b-7c3d-8e5f-123456789abc";

// The one violation a refused token carries.
void ExpectRefusedNaming(const absl::Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(core::ViolationsFromStatus(status),
              ElementsAre(Field(&core::FieldViolation::field, field)))
      << status;
}

TEST(PageTokenTest, RoundTripsTheLastKey) {
  for (const std::string& key :
       {std::string("a"), std::string("pool-7"),
        std::string("2024-05-01\x1f"
                    "A100\x1f"
                    "team/x"),
        std::string("\0\xff/+=", 5), std::string(5000, 'k')}) {
    const std::string token = EncodePageToken(key);
    absl::StatusOr<std::string> back = DecodePageToken(token, "page_token");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, key);
  }
}

TEST(PageTokenTest, IsOpaqueAndUrlSafe) {
  const std::string token = EncodePageToken("pool-7/secret?key");
  EXPECT_EQ(token.find("pool-7"), std::string::npos);
  EXPECT_EQ(token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "abcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos)
      << token;
}

TEST(PageTokenTest, AnEmptyTokenIsTheFirstPage) {
  absl::StatusOr<std::string> key = DecodePageToken("", "page_token");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, "");
}

TEST(PageTokenTest, GarbageIsRefusedNamingTheField) {
  for (const std::string& token : {
           std::string("not a token!"),  // not base64
           std::string("%%%%"),
           absl::WebSafeBase64Escape("pool-7"),     // no version prefix
           absl::WebSafeBase64Escape("v2:pool-7"),  // another version
           absl::Base64Escape("v1:\xfb\xff"),       // not the web-safe alphabet
       }) {
    ExpectRefusedNaming(DecodePageToken(token, "page_token").status(),
                        "page_token");
  }
  ExpectRefusedNaming(DecodePageToken("@@", "list.page_token").status(),
                      "list.page_token");
}

TEST(PageTokenTest, TamperedAndTruncatedTokensAreRefused) {
  const std::string token = EncodePageToken("2024-05-01/pool-7");
  // Cut inside the prefix: what is left no longer starts with it.
  ExpectRefusedNaming(
      DecodePageToken(token.substr(0, 2), "page_token").status(), "page_token");
  // A character changed in the prefix.
  std::string tampered = token;
  tampered[0] = tampered[0] == 'A' ? 'B' : 'A';
  ExpectRefusedNaming(DecodePageToken(tampered, "page_token").status(),
                      "page_token");
  // One character of a four-character group alone is not base64.
  std::string overlong = token;
  while (overlong.size() % 4 != 1) overlong += 'A';
  ExpectRefusedNaming(DecodePageToken(overlong, "page_token").status(),
                      "page_token");
}

TEST(EffectivePageSizeTest, DefaultsClampsAndRefusesNegatives) {
  EXPECT_EQ(*EffectivePageSize(0, "page_size"), kDefaultPageSize);
  EXPECT_EQ(*EffectivePageSize(1, "page_size"), 1);
  EXPECT_EQ(*EffectivePageSize(kMaxPageSize, "page_size"), kMaxPageSize);
  EXPECT_EQ(*EffectivePageSize(kMaxPageSize + 1, "page_size"), kMaxPageSize);
  ExpectRefusedNaming(EffectivePageSize(-1, "page_size").status(), "page_size");
}

TEST(ParsePageRequestTest, ChecksBothFields) {
  absl::StatusOr<PageRequest> first = ParsePageRequest(0, "");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size, kDefaultPageSize);
  EXPECT_EQ(first->after, "");
  absl::StatusOr<PageRequest> next =
      ParsePageRequest(5, EncodePageToken("pool-7"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->size, 5);
  EXPECT_EQ(next->after, "pool-7");
  ExpectRefusedNaming(ParsePageRequest(-3, "").status(), "page_size");
  ExpectRefusedNaming(ParsePageRequest(5, "garbage!").status(), "page_token");
}

TEST(TimeIdKeyTest, RoundTripsTimeAndId) {
  const absl::Time time = absl::FromUnixMicros(1'700'000'000'123'456);
  const std::string text = TimeIdKeyText(time, kUuid);
  EXPECT_EQ(text, std::string("1700000000123456/") + kUuid);
  absl::StatusOr<TimeIdKey> key = ParseTimeIdKey(text);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->time, time);
  EXPECT_EQ(key->id, kUuid);
  // Before the epoch too.
  absl::StatusOr<TimeIdKey> early =
      ParseTimeIdKey(TimeIdKeyText(absl::FromUnixMicros(-5), kUuid));
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->time, absl::FromUnixMicros(-5));
}

TEST(TimeIdKeyTest, AnyOtherTextIsRefusedNamingPageToken) {
  for (const std::string& key : {
           std::string(kUuid),                            // no time
           std::string("12/"),                            // no id
           std::string("x/") + kUuid,                     // time not a number
           std::string("1.5/") + kUuid,                   // not whole micros
           std::string("12/not-a-uuid"),                  // id not a UUID
           std::string("12/") + kUuid + "/extra",         // more than one key
           std::string("99999999999999999999/") + kUuid,  // out of range
       }) {
    ExpectRefusedNaming(ParseTimeIdKey(key).status(), "page_token");
  }
}

}  // namespace
}  // namespace placement::services
