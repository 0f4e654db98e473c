#ifndef PLACEMENT_SERVICES_SERVER_PLACEMENT_SERVER_H_
#define PLACEMENT_SERVICES_SERVER_PLACEMENT_SERVER_H_

#include <grpcpp/grpcpp.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "services/auth/auth.h"
#include "services/console/console.h"
#include "services/console/http/http_server.h"
#include "services/metrics/console_metrics.h"
#include "services/metrics/db_pool_metrics.h"
#include "services/metrics/grpc_metrics.h"
#include "services/metrics/placement_metrics.h"
#include "services/metrics/sample_retention_metrics.h"
#include "services/plan/evidence_cache.h"
#include "services/plan/plan_audit_writer.h"
#include "services/rpc/catalog_service.h"
#include "services/rpc/cost_service.h"
#include "services/rpc/placement_service.h"
#include "services/rpc/pool_state_service.h"
#include "services/rpc/telemetry_service.h"
#include "services/server/health_monitor.h"
#include "services/server/partition_maintainer.h"
#include "storage/session/db_workers.h"

namespace placement::services {

struct ServerOptions {
  std::string listen_address = "127.0.0.1:50051";  // port 0: any free port
  std::string metrics_address = "127.0.0.1:9464";  // empty: no /metrics
  std::string database_url;
  int db_workers = 8;
  size_t db_queue_capacity = 512;
  absl::Duration health_interval = absl::Milliseconds(500);
  // Safety-net full re-read of pools and evidence (changes arrive by
  // NOTIFY, and an incremental read runs at least every 30 s without one;
  // a full read costs CPU in proportion to the rollups: ~2 s at 100,000).
  absl::Duration evidence_reread_interval = absl::Minutes(10);
  // The fleet model (what uploaded runs teach across SKUs) is re-fitted at
  // most this often, on the evidence cache's thread.
  absl::Duration fleet_refit_interval = absl::Seconds(10);
  // Whether a plan is answered after its record commits (durable) or before
  // (deferred: committed in groups at most once an interval).
  PlanRecords plan_records = PlanRecords::kDurable;
  absl::Duration deferred_record_interval = absl::Milliseconds(2);
  // PlacePlan calls planned or waiting for their record at once; beyond
  // them a call is refused with RESOURCE_EXHAUSTED (PlanAdmission). 0: 16
  // per core, at least 64 (PlanAdmission::DefaultMaxInFlight). Plans
  // waiting for evidence hold PlanAdmission's waiting slots instead.
  int max_plans_in_flight = 0;

  // Bearer tokens and roles on every RPC but health and reflection.
  bool auth_enabled = true;
  double writes_per_second_per_token = 200;
  double write_burst_per_token = 400;
  // TLS: a server certificate chain and key (PEM files); with a client CA,
  // clients must present a certificate it signed (mTLS).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // Bounds.
  int max_message_bytes = 8 << 20;
  int max_concurrent_streams = 64;  // per connection
  absl::Duration stream_idle_timeout = absl::Seconds(60);
  // Step samples: monthly partitions whose whole range is older than this
  // are dropped (docs/RELIABILITY.md "Sample retention"); zero keeps every
  // sample. The partition maintainer runs at start-up and then every
  // interval.
  absl::Duration sample_retention = absl::ZeroDuration();
  absl::Duration partition_maintenance_interval = absl::Hours(6);
  // A pool's reported state older than this (since it arrived) is stale:
  // plans show its waits as unknown.
  absl::Duration pool_state_max_age = absl::Minutes(10);

  // The web console (docs/CONSOLE.md): its listen address (host:port, port
  // 0: any free port); empty: no console.
  std::string console_address;
  console::ConsoleLimits console_limits;
  console::HttpServerOptions console_http;  // its address is console_address
};

// placementd's server: the gRPC services, health, reflection, metrics and the
// database workers, wired together. Used by the placementd binary and by
// in-process tests.
class PlacementServer {
 public:
  explicit PlacementServer(ServerOptions options);
  ~PlacementServer();

  // Binds and starts serving. FAILED_PRECONDITION/UNAVAILABLE when a port
  // cannot be bound; FAILED_PRECONDITION when a method of a service has no
  // rule in the access policy (services/auth/auth.h), and nothing is served.
  absl::Status Start();

  // Stops accepting calls, sets health NOT_SERVING, lets in-flight calls
  // finish until `grace` passes (then cancels them), and drains the
  // database workers.
  void Shutdown(absl::Duration grace);

  int port() const { return port_; }
  EvidenceCache& evidence() { return *evidence_; }
  int metrics_port() const { return metrics_port_; }
  // 0 without a console.
  int console_port() const { return console_port_; }
  bool serving() const { return health_ != nullptr && health_->serving(); }

 private:
  // Start()'s steps, in order.
  // The build-info gauge, gRPC metrics, database workers and /metrics.
  absl::Status StartMetrics();
  // The evidence cache, the authorizer and the five gRPC services.
  void MakeServices();
  // Binds the listening port and serves the services (NOT_SERVING health),
  // each once CheckEveryMethodHasARule passes for it.
  absl::Status Serve();
  // The health monitor and the partition maintainer.
  void StartBackgroundWork();
  // The web console, when it has an address.
  absl::Status StartConsole();

  ServerOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<GrpcServerMetrics> grpc_metrics_;
  std::unique_ptr<storage::DbWorkers> workers_;
  std::shared_ptr<DbPoolMetrics> db_pool_metrics_;
  std::unique_ptr<CatalogService> catalog_service_;
  std::unique_ptr<CostService> cost_service_;
  std::unique_ptr<TelemetryService> telemetry_service_;
  std::unique_ptr<PlacementMetrics> placement_metrics_;
  std::unique_ptr<SampleRetentionMetrics> sample_retention_metrics_;
  std::unique_ptr<EvidenceCache> evidence_;
  std::unique_ptr<Authorizer> auth_;
  std::unique_ptr<PlanAuditWriter> plan_audit_;
  std::unique_ptr<PlacementService> placement_service_;
  std::unique_ptr<PoolStateService> pool_state_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<HealthMonitor> health_;
  std::unique_ptr<PartitionMaintainer> partitions_;
  std::unique_ptr<ConsoleMetrics> console_metrics_;
  std::unique_ptr<console::Console> console_;
  std::unique_ptr<console::HttpServer> console_server_;
  int port_ = 0;
  int metrics_port_ = 0;
  int console_port_ = 0;
  bool shut_down_ = false;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_PLACEMENT_SERVER_H_
