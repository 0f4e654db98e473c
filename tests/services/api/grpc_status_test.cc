// services/api/grpc_status: the one absl -> gRPC status mapping. Codes map
// one to one with the message kept; field violations travel as a
// google.rpc.BadRequest inside a google.rpc.Status in the details, which
// any gRPC client can read; other statuses carry no details.
#include "services/api/grpc_status.h"

#include <string>

#include "core/field_violation.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"

namespace placement::services {
namespace {

using ::testing::HasSubstr;

// The BadRequest a client finds in `status`'s details; fails the test when
// there is none.
google::rpc::BadRequest BadRequestOf(const grpc::Status& status) {
  google::rpc::Status rich;
  EXPECT_TRUE(rich.ParseFromString(status.error_details()));
  EXPECT_EQ(rich.code(), static_cast<int>(status.error_code()));
  EXPECT_EQ(rich.message(), status.error_message());
  EXPECT_EQ(rich.details_size(), 1);
  google::rpc::BadRequest bad_request;
  if (rich.details_size() == 1) {
    EXPECT_TRUE(rich.details(0).UnpackTo(&bad_request));
  }
  return bad_request;
}

TEST(ToGrpcStatusTest, OkIsOk) {
  const grpc::Status status = ToGrpcStatus(absl::OkStatus());
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.error_details(), "");
}

TEST(ToGrpcStatusTest, EveryCodeMapsToTheSameGrpcCodeWithItsMessage) {
  // absl and gRPC share the canonical code numbers.
  for (int code = 1; code <= 16; ++code) {
    const absl::Status in(static_cast<absl::StatusCode>(code), "why");
    const grpc::Status out = ToGrpcStatus(in);
    EXPECT_EQ(static_cast<int>(out.error_code()), code) << in;
    EXPECT_EQ(out.error_message(), "why") << in;
    EXPECT_EQ(out.error_details(), "") << in;
  }
  EXPECT_EQ(ToGrpcStatus(absl::UnavailableError("db away")).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError("no pool")).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST(ToGrpcStatusTest, PlainInvalidArgumentCarriesNoDetails) {
  const grpc::Status out = ToGrpcStatus(absl::InvalidArgumentError("bad"));
  EXPECT_EQ(out.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(out.error_message(), "bad");
  EXPECT_EQ(out.error_details(), "");
}

TEST(ToGrpcStatusTest, FieldViolationsTravelAsABadRequest) {
  const core::FieldViolations violations = {
      {"recipe.lora_rank", "must be positive"},
      {"pool.gpus_per_node", "must be at most 16"},
      {"labels[\"k\"]", "must not be empty"},
  };
  const absl::Status in = core::InvalidArgumentWithViolations(violations);
  const grpc::Status out = ToGrpcStatus(in);
  EXPECT_EQ(out.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(out.error_message(), std::string(in.message()));
  // The message lists the violations for humans too.
  EXPECT_THAT(out.error_message(), HasSubstr("recipe.lora_rank"));
  const google::rpc::BadRequest bad_request = BadRequestOf(out);
  ASSERT_EQ(bad_request.field_violations_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(bad_request.field_violations(i).field(), violations[i].field);
    EXPECT_EQ(bad_request.field_violations(i).description(),
              violations[i].description);
  }
}

TEST(InvalidArgumentTest, IsTheMappingOfInvalidArgumentWithViolations) {
  const core::FieldViolations violations = {{"page_size",
                                             "must not be "
                                             "negative"}};
  const grpc::Status out = InvalidArgument(violations);
  EXPECT_EQ(out.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const google::rpc::BadRequest bad_request = BadRequestOf(out);
  ASSERT_EQ(bad_request.field_violations_size(), 1);
  EXPECT_EQ(bad_request.field_violations(0).field(), "page_size");
  EXPECT_EQ(bad_request.field_violations(0).description(),
            "must not be negative");
  const grpc::Status direct =
      ToGrpcStatus(core::InvalidArgumentWithViolations(violations));
  EXPECT_EQ(out.error_message(), direct.error_message());
  EXPECT_EQ(out.error_details(), direct.error_details());
}

}  // namespace
}  // namespace placement::services
