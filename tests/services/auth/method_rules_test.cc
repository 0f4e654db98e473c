// The access policy (MethodRules) against the API itself: every method of
// every service in proto/placement/v1 has a rule, found by walking the
// proto files, so a new service or RPC cannot be served without one; and
// the check the server makes before serving a service refuses one that
// has a method without a rule.
#include <dirent.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/cost.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/pool_state.grpc.pb.h"
#include "placement/v1/recipe.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/auth/auth.h"

namespace placement::services {
namespace {

using ::google::protobuf::FileDescriptor;
using ::google::protobuf::ServiceDescriptor;
using ::testing::HasSubstr;
using ::testing::Not;

// Every service of every .proto file in proto/placement/v1. A file the
// test does not link is a failure, not a file skipped: add one of its
// messages to the list below.
std::vector<const ServiceDescriptor*> ServicesOfTheApi() {
  // A file's descriptors are registered once its code is linked in: one
  // message of each.
  for (const google::protobuf::Descriptor* linked :
       {v1::ListSkusRequest::descriptor(),
        v1::GetCostReportRequest::descriptor(),
        v1::PlacePlanRequest::descriptor(),
        v1::ReportPoolStateRequest::descriptor(),
        v1::UploadBenchmarkRunRequest::descriptor(),
        v1::Recipe::descriptor()}) {
    EXPECT_NE(linked, nullptr);
  }
  std::vector<const ServiceDescriptor*> services;
  DIR* listing = opendir(PLACEMENT_PROTO_DIR);
  EXPECT_NE(listing, nullptr) << PLACEMENT_PROTO_DIR;
  if (listing == nullptr) return services;
  while (dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (!absl::EndsWith(name, ".proto")) continue;
    const FileDescriptor* file =
        google::protobuf::DescriptorPool::generated_pool()->FindFileByName(
            "placement/v1/" + name);
    EXPECT_NE(file, nullptr) << name << " is not linked into the test";
    if (file == nullptr) continue;
    for (int i = 0; i < file->service_count(); ++i) {
      services.push_back(file->service(i));
    }
  }
  closedir(listing);
  return services;
}

TEST(MethodRulesTest, EveryMethodOfEveryServiceOfTheApiHasARule) {
  const std::vector<const ServiceDescriptor*> services = ServicesOfTheApi();
  EXPECT_GE(services.size(), 5u);
  std::set<std::string> in_api;
  for (const ServiceDescriptor* service : services) {
    EXPECT_TRUE(CheckEveryMethodHasARule(*service).ok())
        << CheckEveryMethodHasARule(*service);
    for (int i = 0; i < service->method_count(); ++i) {
      in_api.insert(absl::StrCat("/", service->full_name(), "/",
                                 service->method(i)->name()));
    }
  }
  // And the table names nothing else: a rule for a method the API lost
  // would be dead policy.
  std::set<std::string> in_table;
  for (const MethodRule& rule : MethodRules()) in_table.insert(rule.method);
  EXPECT_EQ(in_table, in_api);
}

// A service as the server would register it, with one method the table
// names and one it does not.
TEST(MethodRulesTest, AServiceWithAMethodWithoutARuleIsNotServed) {
  google::protobuf::FileDescriptorProto file;
  file.set_name("placement/v1/extra.proto");
  file.set_package("placement.v1");
  file.add_message_type()->set_name("Empty");
  google::protobuf::ServiceDescriptorProto* service = file.add_service();
  service->set_name("CatalogService");
  for (const char* name : {"ListSkus", "DropEverything"}) {
    google::protobuf::MethodDescriptorProto* method = service->add_method();
    method->set_name(name);
    method->set_input_type(".placement.v1.Empty");
    method->set_output_type(".placement.v1.Empty");
  }
  google::protobuf::DescriptorPool pool;
  const FileDescriptor* built = pool.BuildFile(file);
  ASSERT_NE(built, nullptr);
  const absl::Status checked = CheckEveryMethodHasARule(*built->service(0));
  EXPECT_EQ(checked.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(checked.message(),
              HasSubstr("/placement.v1.CatalogService/DropEverything"));
  EXPECT_THAT(checked.message(), Not(HasSubstr("ListSkus")));
}

}  // namespace
}  // namespace placement::services
