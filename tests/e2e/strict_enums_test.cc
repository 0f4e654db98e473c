// Every enum field of every request message of every service of the API, by
// reflection: a number outside the enum's declared values is INVALID_ARGUMENT
// naming the field's path, and nothing is stored. Likewise every text field
// holding a control character (a NUL above all: PostgreSQL refuses it, and a
// C string reads it cut short). The services, methods and
// fields come from the descriptors of proto/placement/v1/*.proto, so a field,
// method or service added later is covered without anyone listing it.
#include <dirent.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.pb.h"
#include "placement/v1/cost.pb.h"
#include "placement/v1/placement.pb.h"
#include "placement/v1/telemetry.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/in_process_server.h"
#include "tests/support/placementd_process.h"

namespace placement {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::MethodDescriptor;
using google::protobuf::ServiceDescriptor;
using ::placement::testing::InProcessServer;
using ::placement::testing::ViolatedFields;
using ::testing::Contains;

// One enum (or text) field reachable from a request message: the fields
// leading to it.
struct EnumPath {
  std::vector<const FieldDescriptor*> fields;

  // "run.evals[0].serving_precision", as the server must name it.
  std::string Text() const {
    std::string text;
    for (const FieldDescriptor* field : fields) {
      if (!text.empty()) text += ".";
      text += field->name();
      if (field->is_repeated()) text += "[0]";
    }
    return text;
  }
};

// Every field of `type` (and of the messages below it) that `wanted`
// accepts.
template <typename Wanted>
void CollectPaths(const Descriptor& type,
                  std::vector<const FieldDescriptor*>& prefix, Wanted wanted,
                  std::vector<EnumPath>& out) {
  if (prefix.size() > 8) return;  // recursive messages
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor* field = type.field(i);
    if (field->is_map()) continue;  // no map in the API holds enums
    prefix.push_back(field);
    if (wanted(*field)) {
      out.push_back({prefix});
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
               !absl::StartsWith(field->message_type()->full_name(),
                                 "google.protobuf.")) {
      CollectPaths(*field->message_type(), prefix, wanted, out);
    }
    prefix.pop_back();
  }
}

void CollectEnumPaths(const Descriptor& type,
                      std::vector<const FieldDescriptor*>& prefix,
                      std::vector<EnumPath>& out) {
  CollectPaths(
      type, prefix,
      [](const FieldDescriptor& f) {
        return f.cpp_type() == FieldDescriptor::CPPTYPE_ENUM;
      },
      out);
}

void CollectTextPaths(const Descriptor& type,
                      std::vector<const FieldDescriptor*>& prefix,
                      std::vector<EnumPath>& out) {
  CollectPaths(
      type, prefix,
      [](const FieldDescriptor& f) {
        return f.type() == FieldDescriptor::TYPE_STRING;
      },
      out);
}

// The services of every API file, found from the files themselves.
std::vector<const ServiceDescriptor*> ApiServices() {
  std::vector<const ServiceDescriptor*> services;
  const std::string dir = testing::SourceDir() + "/proto/placement/v1";
  DIR* listing = opendir(dir.c_str());
  EXPECT_NE(listing, nullptr) << dir;
  if (listing == nullptr) return services;
  while (dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (!absl::EndsWith(name, ".proto")) continue;
    const google::protobuf::FileDescriptor* file =
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

// A request that would be accepted but for the enum set below it, where the
// test knows one; else an empty request of the type.
std::unique_ptr<Message> SeedRequest(const Descriptor& type) {
  const std::string name = type.full_name();
  if (name == "placement.v1.UploadBenchmarkRunRequest") {
    auto request = std::make_unique<v1::UploadBenchmarkRunRequest>();
    *request->mutable_run() =
        testing::SucceededRun("a100-train", "A100-SXM4-80GB");
    return request;
  }
  if (name == "placement.v1.PlacePlanRequest") {
    return std::make_unique<v1::PlacePlanRequest>(
        testing::PlanFor(testing::Lora8b()));
  }
  if (name == "placement.v1.CreatePoolRequest") {
    auto request = std::make_unique<v1::CreatePoolRequest>();
    *request->mutable_pool() =
        testing::TrainingPool("new-pool", "A100-SXM4-80GB");
    return request;
  }
  if (name == "placement.v1.CreateTokenRequest") {
    auto request = std::make_unique<v1::CreateTokenRequest>();
    request->set_name("enum-test");
    request->set_role(v1::ROLE_PLANNER);
    return request;
  }
  const Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(
          &type);
  return std::unique_ptr<Message>(prototype->New());
}

// The message holding the last field of `path` in `request`, created on
// the way (the first element of repeated ones).
Message* ParentOf(Message& request, const EnumPath& path) {
  Message* message = &request;
  for (size_t i = 0; i + 1 < path.fields.size(); ++i) {
    const FieldDescriptor* field = path.fields[i];
    const google::protobuf::Reflection& r = *message->GetReflection();
    if (field->is_repeated()) {
      message = r.FieldSize(*message, field) > 0
                    ? r.MutableRepeatedMessage(message, field, 0)
                    : r.AddMessage(message, field);
    } else {
      message = r.MutableMessage(message, field);
    }
  }
  return message;
}

// Sets the field at `path` in `request` to a number its enum does not
// declare. Returns the number.
int SetUndeclared(Message& request, const EnumPath& path) {
  Message* message = ParentOf(request, path);
  const FieldDescriptor* field = path.fields.back();
  const google::protobuf::EnumDescriptor& type = *field->enum_type();
  int number = 0;
  for (int i = 0; i < type.value_count(); ++i) {
    number = std::max(number, type.value(i)->number());
  }
  number += 41;
  EXPECT_EQ(type.FindValueByNumber(number), nullptr);
  const google::protobuf::Reflection& r = *message->GetReflection();
  if (field->is_repeated()) {
    if (r.FieldSize(*message, field) > 0) {
      r.SetRepeatedEnumValue(message, field, 0, number);
    } else {
      r.AddEnumValue(message, field, number);
    }
  } else {
    r.SetEnumValue(message, field, number);
  }
  return number;
}

// Appends `suffix` to the text at `path` in `request` (its first element
// if repeated), keeping what the seed had there.
void AppendText(Message& request, const EnumPath& path,
                const std::string& suffix) {
  Message* message = ParentOf(request, path);
  const FieldDescriptor* field = path.fields.back();
  const google::protobuf::Reflection& r = *message->GetReflection();
  if (field->is_repeated()) {
    if (r.FieldSize(*message, field) > 0) {
      r.SetRepeatedString(message, field, 0,
                          r.GetRepeatedString(*message, field, 0) + suffix);
    } else {
      r.AddString(message, field, "x" + suffix);
    }
  } else {
    r.SetString(message, field, r.GetString(*message, field) + suffix);
  }
}

grpc::ByteBuffer Serialize(const Message& message) {
  grpc::ByteBuffer buffer;
  bool own = false;
  const grpc::Status status =
      grpc::GenericSerialize<grpc::ProtoBufferWriter, Message>(message, &buffer,
                                                               &own);
  EXPECT_TRUE(status.ok());
  return buffer;
}

// Calls `method` with `request` as bytes: unary, or a client stream of that
// one message.
grpc::Status Call(grpc::GenericStub& stub, const MethodDescriptor& method,
                  const Message& request) {
  const std::string name =
      absl::StrCat("/", method.service()->full_name(), "/", method.name());
  std::unique_ptr<grpc::ClientContext> context = testing::Deadline();
  const grpc::ByteBuffer bytes = Serialize(request);
  grpc::ByteBuffer response;
  grpc::Status status;
  if (!method.client_streaming() && !method.server_streaming()) {
    absl::Notification done;
    stub.UnaryCall(context.get(), name, grpc::StubOptions(), &bytes, &response,
                   [&](grpc::Status s) {
                     status = std::move(s);
                     done.Notify();
                   });
    done.WaitForNotification();
    return status;
  }
  grpc::CompletionQueue queue;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(context.get(), name, &queue);
  void* tag = nullptr;
  bool ok = false;
  call->StartCall(reinterpret_cast<void*>(1));
  queue.Next(&tag, &ok);
  if (ok) {
    call->Write(bytes, reinterpret_cast<void*>(2));
    queue.Next(&tag, &ok);
  }
  if (ok) {
    call->WritesDone(reinterpret_cast<void*>(3));
    queue.Next(&tag, &ok);
  }
  call->Read(&response, reinterpret_cast<void*>(4));
  queue.Next(&tag, &ok);
  call->Finish(&status, reinterpret_cast<void*>(5));
  queue.Next(&tag, &ok);
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  return status;
}

class StrictEnumsTest : public ::testing::Test {
 protected:
  StrictEnumsTest() : stub_(server_.channel()) {
    // What the seeds are valid against: their pool.
    testing::ApiClient(server_.channel())
        .CreatePool(testing::TrainingPool("a100-train", "A100-SXM4-80GB"));
  }

  // Everything a request could store.
  std::string Stored() {
    return server_.db().QueryValue(
        "SELECT (SELECT count(*) FROM pools) || ':' ||"
        " (SELECT md5(coalesce(string_agg(p::text, '|' ORDER BY name), ''))"
        "  FROM pools p) || ':' || (SELECT count(*) FROM benchmark_runs) ||"
        " ':' || (SELECT count(*) FROM evidence_rollups) || ':' ||"
        " (SELECT count(*) FROM api_tokens) || ':' ||"
        " (SELECT count(*) FROM placements) || ':' ||"
        " (SELECT count(*) FROM step_samples)");
  }

  InProcessServer server_;
  grpc::GenericStub stub_;
};

TEST_F(StrictEnumsTest, EveryEnumFieldOfEveryRequestRefusesUndeclaredNumbers) {
  int services = 0;
  int checked = 0;
  std::set<std::string> checked_paths;
  for (const ServiceDescriptor* service : ApiServices()) {
    ++services;
    for (int m = 0; m < service->method_count(); ++m) {
      const MethodDescriptor& method = *service->method(m);
      std::vector<EnumPath> paths;
      std::vector<const FieldDescriptor*> prefix;
      CollectEnumPaths(*method.input_type(), prefix, paths);
      for (const EnumPath& path : paths) {
        SCOPED_TRACE(absl::StrCat(method.full_name(), " ", path.Text()));
        std::unique_ptr<Message> request = SeedRequest(*method.input_type());
        const int number = SetUndeclared(*request, path);
        const std::string before = Stored();
        const grpc::Status status = Call(stub_, method, *request);
        EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
            << number << ": " << status.error_message();
        EXPECT_THAT(ViolatedFields(status), Contains(path.Text()));
        EXPECT_EQ(Stored(), before);
        ++checked;
        checked_paths.insert(path.Text());
      }
    }
  }
  std::cout << "checked " << checked << " enum fields of the requests of "
            << services << " services\n";
  EXPECT_GE(services, 4);
  // recipe.precision, optimizer, parallelism, attention, checkpointing (x2
  // requests), constraints.objective, serving.precision, pool.fabric,
  // inter_node_fabric, purpose (x2), role, run outcome enums, evals, cost.
  EXPECT_GE(checked, 20);
  // The recipe's memory enums, in a plan request and in an uploaded run, and
  // the run's own peak kind.
  for (const char* path :
       {"recipe.loss_implementation", "recipe.sequence_packing",
        "recipe.training_framework", "recipe.reported_peak",
        "recipe.adapter_type", "run.recipe.loss_implementation",
        "run.recipe.sequence_packing", "run.recipe.training_framework",
        "run.recipe.reported_peak", "run.recipe.adapter_type",
        "run.peak_memory_kind"}) {
    EXPECT_THAT(checked_paths, Contains(path));
  }
}

TEST_F(StrictEnumsTest, EveryTextFieldOfEveryUnaryRequestRefusesControls) {
  int checked = 0;
  std::set<std::string> checked_paths;
  for (const ServiceDescriptor* service : ApiServices()) {
    for (int m = 0; m < service->method_count(); ++m) {
      const MethodDescriptor& method = *service->method(m);
      // A stream's messages are validated one by one by its reactor.
      if (method.client_streaming() || method.server_streaming()) continue;
      std::vector<EnumPath> paths;
      std::vector<const FieldDescriptor*> prefix;
      CollectTextPaths(*method.input_type(), prefix, paths);
      for (const EnumPath& path : paths) {
        for (const std::string& control :
             {std::string("a\0b", 3), std::string("\x1b[2J")}) {
          SCOPED_TRACE(absl::StrCat(method.full_name(), " ", path.Text(), " ",
                                    absl::CEscape(control)));
          std::unique_ptr<Message> request = SeedRequest(*method.input_type());
          AppendText(*request, path, control);
          const std::string before = Stored();
          const grpc::Status status = Call(stub_, method, *request);
          EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
              << status.error_message();
          EXPECT_THAT(ViolatedFields(status), Contains(path.Text()));
          EXPECT_EQ(Stored(), before);
        }
        ++checked;
        checked_paths.insert(path.Text());
      }
    }
  }
  std::cout << "checked " << checked << " text fields of unary requests\n";
  for (const char* path : {"team", "request_id", "run.run_id", "pool.name"}) {
    EXPECT_THAT(checked_paths, Contains(path));
  }
}

TEST_F(StrictEnumsTest, TextWithTabsAndNewlinesIsAccepted) {
  v1::PlacePlanRequest request = testing::PlanFor(testing::Lora8b());
  request.set_team("research\tteam");  // a key: one line
  (*request.mutable_constraints()->mutable_required_labels())["note"] =
      "line one\nline two\r\n";
  const MethodDescriptor& method =
      *google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(
          "placement.v1.PlacementService.PlacePlan");
  const grpc::Status status = Call(stub_, method, request);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(StrictEnumsTest, TheSeedsAreAcceptedWithoutTheUndeclaredNumber) {
  // Proves the test above refuses for the enum and nothing else.
  for (const char* type :
       {"placement.v1.UploadBenchmarkRunRequest",
        "placement.v1.PlacePlanRequest", "placement.v1.CreatePoolRequest",
        "placement.v1.CreateTokenRequest"}) {
    SCOPED_TRACE(type);
    const Descriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()
            ->FindMessageTypeByName(type);
    ASSERT_NE(descriptor, nullptr);
    const MethodDescriptor* method = nullptr;
    for (const ServiceDescriptor* service : ApiServices()) {
      for (int m = 0; m < service->method_count(); ++m) {
        if (service->method(m)->input_type() == descriptor) {
          method = service->method(m);
        }
      }
    }
    ASSERT_NE(method, nullptr);
    const grpc::Status status = Call(stub_, *method, *SeedRequest(*descriptor));
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
}

TEST_F(StrictEnumsTest, AnUndeclaredPrecisionIsNeverFiledAsBf16Evidence) {
  v1::UploadBenchmarkRunRequest request;
  *request.mutable_run() =
      testing::SucceededRun("a100-train", "A100-SXM4-80GB");
  request.mutable_run()->mutable_recipe()->set_precision(
      static_cast<v1::Precision>(99));
  const std::string before = Stored();
  const grpc::Status status =
      Call(stub_,
           *v1::UploadBenchmarkRunRequest::descriptor()
                ->file()
                ->FindServiceByName("TelemetryService")
                ->FindMethodByName("UploadBenchmarkRun"),
           request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ViolatedFields(status), Contains("run.recipe.precision"));
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("99"));
  EXPECT_EQ(Stored(), before);
  EXPECT_EQ(server_.db().QueryValue("SELECT count(*) FROM evidence_rollups"),
            "0");
}

}  // namespace
}  // namespace placement
