#include "services/metrics/grpc_metrics.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace placement::services {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::internal::RpcMethod;

const char* RpcTypeName(RpcMethod::RpcType type) {
  switch (type) {
    case RpcMethod::NORMAL_RPC:
      return "unary";
    case RpcMethod::CLIENT_STREAMING:
      return "client_stream";
    case RpcMethod::SERVER_STREAMING:
      return "server_stream";
    case RpcMethod::BIDI_STREAMING:
      return "bidi_stream";
  }
  return "unknown";
}

// Latency buckets from 0.5 ms to 10 s: PlacePlan answers from memory in
// well under a millisecond; cost reports and uploads take a few ms.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* const buckets =
      new prometheus::Histogram::BucketBoundaries{
          0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return *buckets;
}

class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(GrpcServerMetrics::MethodSeries& series)
      : series_(series), start_(std::chrono::steady_clock::now()) {
    series_.started->Increment();
  }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      code_ = methods->GetSendStatus().error_code();
    }
    methods->Proceed();
  }

  ~MetricsInterceptor() override {
    // An RPC that ends without sending a status was cancelled.
    const int code = code_ < 0 ? grpc::StatusCode::CANCELLED : code_;
    series_.handled[code]->Increment();
    series_.handling_seconds->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
            .count());
  }

 private:
  GrpcServerMetrics::MethodSeries& series_;
  const std::chrono::steady_clock::time_point start_;
  int code_ = -1;
};

class MetricsInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(GrpcServerMetrics& metrics)
      : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(
        metrics_.ForMethod(info->method(), ToRpcType(info->type())));
  }

 private:
  static RpcMethod::RpcType ToRpcType(
      grpc::experimental::ServerRpcInfo::Type type) {
    using Type = grpc::experimental::ServerRpcInfo::Type;
    switch (type) {
      case Type::UNARY:
        return RpcMethod::NORMAL_RPC;
      case Type::CLIENT_STREAMING:
        return RpcMethod::CLIENT_STREAMING;
      case Type::SERVER_STREAMING:
        return RpcMethod::SERVER_STREAMING;
      case Type::BIDI_STREAMING:
        return RpcMethod::BIDI_STREAMING;
    }
    return RpcMethod::NORMAL_RPC;
  }

  GrpcServerMetrics& metrics_;
};

}  // namespace

const char* GrpcCodeName(int code) {
  static constexpr const char* kNames[17] = {"OK",
                                             "Canceled",
                                             "Unknown",
                                             "InvalidArgument",
                                             "DeadlineExceeded",
                                             "NotFound",
                                             "AlreadyExists",
                                             "PermissionDenied",
                                             "ResourceExhausted",
                                             "FailedPrecondition",
                                             "Aborted",
                                             "OutOfRange",
                                             "Unimplemented",
                                             "Internal",
                                             "Unavailable",
                                             "DataLoss",
                                             "Unauthenticated"};
  return code >= 0 && code < 17 ? kNames[code] : "Unknown";
}

std::vector<std::string> GrpcOwnMethods() {
  // The health service is not in the protobuf descriptor pool; both
  // reflection versions, for gRPC releases that serve v1 beside v1alpha.
  return {"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
          "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
          "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"};
}

GrpcServerMetrics::GrpcServerMetrics(
    prometheus::Registry& registry,
    const std::vector<std::string>& known_methods)
    : started_(prometheus::BuildCounter()
                   .Name("grpc_server_started_total")
                   .Help("Total number of RPCs started on the server.")
                   .Register(registry)),
      handled_(prometheus::BuildCounter()
                   .Name("grpc_server_handled_total")
                   .Help("Total number of RPCs completed on the server, "
                         "regardless of success or failure.")
                   .Register(registry)),
      handling_seconds_(prometheus::BuildHistogram()
                            .Name("grpc_server_handling_seconds")
                            .Help("Histogram of response latency (seconds) "
                                  "of gRPC that had been application-level "
                                  "handled by the server.")
                            .Register(registry)),
      known_methods_(known_methods.begin(), known_methods.end()) {}

GrpcServerMetrics::MethodSeries& GrpcServerMetrics::ForMethod(
    const std::string& full_method, RpcMethod::RpcType type) {
  // The path comes from the client: an unknown one must not reach a label
  // or a key of its own.
  const bool known = known_methods_.contains(full_method);
  const std::string key =
      known ? full_method : absl::StrCat("unknown ", RpcTypeName(type));
  absl::MutexLock lock(&mu_);
  std::unique_ptr<MethodSeries>& series = methods_[key];
  if (series != nullptr) return *series;

  // "/placement.v1.CatalogService/ListSkus" -> service, method.
  std::vector<std::string> parts =
      absl::StrSplit(full_method, '/', absl::SkipEmpty());
  const bool split = known && parts.size() == 2;
  const std::string service = split ? parts[0] : "unknown";
  const std::string method = split ? parts[1] : "unknown";
  const std::map<std::string, std::string> labels = {
      {"grpc_service", service},
      {"grpc_method", method},
      {"grpc_type", RpcTypeName(type)}};
  series = std::make_unique<MethodSeries>();
  series->started = &started_.Add(labels);
  series->handling_seconds = &handling_seconds_.Add(labels, LatencyBuckets());
  for (int code = 0; code < 17; ++code) {
    std::map<std::string, std::string> with_code = labels;
    with_code["grpc_code"] = GrpcCodeName(code);
    series->handled[code] = &handled_.Add(with_code);
  }
  return *series;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
GrpcServerMetrics::InterceptorFactory() {
  return std::make_unique<MetricsInterceptorFactory>(*this);
}

}  // namespace placement::services
