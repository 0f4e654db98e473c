#ifndef PLACEMENT_SERVICES_METRICS_GRPC_METRICS_H_
#define PLACEMENT_SERVICES_METRICS_GRPC_METRICS_H_

#include <grpcpp/support/server_interceptor.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace placement::services {

// The standard gRPC server metrics (the names go-grpc-prometheus made
// common), recorded for every RPC by a server interceptor:
//   grpc_server_started_total{grpc_service,grpc_method,grpc_type}
//   grpc_server_handled_total{grpc_service,grpc_method,grpc_type,grpc_code}
//   grpc_server_handling_seconds{grpc_service,grpc_method,grpc_type}
//
// Only the methods of the services placementd serves get label values of
// their own. gRPC runs the interceptors for paths no service registered too,
// and the client chooses the path: every other path is counted under
// grpc_service="unknown", grpc_method="unknown", so that no caller can add
// series (each method is 19, kept for the life of the process).
class GrpcServerMetrics {
 public:
  // Only `known_methods` ("/package.Service/Method") get labels of their own.
  GrpcServerMetrics(prometheus::Registry& registry,
                    const std::vector<std::string>& known_methods);

  // The interceptor factory to give ServerBuilder; it refers to `this`,
  // which must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  InterceptorFactory();

  // The series of one method, looked up once and kept: label sets are never
  // added per request. A method outside the known ones gets the "unknown"
  // series of its RPC type.
  struct MethodSeries {
    prometheus::Counter* started;
    prometheus::Histogram* handling_seconds;
    prometheus::Counter* handled[17];  // by grpc::StatusCode
  };
  MethodSeries& ForMethod(const std::string& full_method,
                          grpc::internal::RpcMethod::RpcType type);

 private:
  prometheus::Family<prometheus::Counter>& started_;
  prometheus::Family<prometheus::Counter>& handled_;
  prometheus::Family<prometheus::Histogram>& handling_seconds_;
  const absl::flat_hash_set<std::string> known_methods_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<MethodSeries>> methods_
      ABSL_GUARDED_BY(mu_);
};

// "/package.Service/Method" of gRPC's own services placementd serves beside
// its API: health and reflection.
std::vector<std::string> GrpcOwnMethods();

// The go-grpc-prometheus spelling of a status code ("OK", "InvalidArgument").
const char* GrpcCodeName(int code);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_METRICS_GRPC_METRICS_H_
