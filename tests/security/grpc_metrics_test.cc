// The gRPC server metrics against callers who choose the method path: gRPC
// runs the global interceptors for methods no service registered too, so a
// path the client makes up must not become a label value of its own (each
// one was 19 series, never removed: /metrics and memory grew without bound).
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "tests/support/in_process_server.h"
#include "tests/support/metrics_scrape.h"

namespace placement {
namespace {

using ::placement::testing::InProcessServer;

// The grpc_method label values of the grpc_server_* series in a scrape.
std::set<std::string> MethodLabels(const std::string& scrape) {
  std::set<std::string> methods;
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (!absl::StartsWith(line, "grpc_server_")) continue;
    const size_t at = line.find("grpc_method=\"");
    if (at == absl::string_view::npos) continue;
    const size_t begin = at + 13;
    methods.insert(
        std::string(line.substr(begin, line.find('"', begin) - begin)));
  }
  return methods;
}

// The value of the one sample line that starts with `prefix`; -1 if none.
double Sample(const std::string& scrape, absl::string_view prefix) {
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (!absl::StartsWith(line, prefix)) continue;
    double value = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &value)) {
      return value;
    }
  }
  return -1;
}

grpc::Status CallGeneric(grpc::GenericStub& stub, const std::string& method) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  grpc::Status status;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&context, method, request, &cq);
  call->StartCall();
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  cq.Next(&tag, &ok);
  return status;
}

TEST(GrpcMetricsTest, MadeUpMethodsShareOneLabelValue) {
  InProcessServer server([](services::ServerOptions& options) {
    options.auth_enabled = true;
    options.metrics_address = "127.0.0.1:0";
  });
  const int port = server.server().metrics_port();
  ASSERT_NE(port, 0);

  // A method of a registered service keeps its own label value.
  {
    v1::CatalogService::Stub catalog(server.channel());
    grpc::ClientContext context;
    v1::ListSkusRequest request;
    v1::ListSkusResponse response;
    catalog.ListSkus(&context, request, &response);
  }
  const std::string before = testing::ScrapeMetrics(port);
  ASSERT_TRUE(absl::StrContains(before, "grpc_method=\"ListSkus\""));

  grpc::GenericStub stub(server.channel());
  const std::string padding(2000, 'a');
  constexpr int kCalls = 1000;
  for (int i = 0; i < kCalls; ++i) {
    const grpc::Status status =
        CallGeneric(stub, absl::StrCat("/x.Y/", padding, i));
    ASSERT_NE(status.error_code(), grpc::StatusCode::OK) << i;
  }

  const std::string after = testing::ScrapeMetrics(port);
  const std::set<std::string> methods = MethodLabels(after);
  // ListSkus and the one value every unregistered path is counted under.
  EXPECT_EQ(methods, (std::set<std::string>{"ListSkus", "unknown"}));
  EXPECT_FALSE(absl::StrContains(after, padding));
  EXPECT_EQ(Sample(after,
                   "grpc_server_started_total{grpc_method=\"unknown\","
                   "grpc_service=\"unknown\""),
            kCalls);
  // The scrape grew by one method's series, not by a thousand.
  EXPECT_LT(after.size(), before.size() + 8 * 1024);
}

}  // namespace
}  // namespace placement
