#include "services/server/placement_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <netdb.h>
#include <prometheus/gauge.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/read_file.h"
#include "google/protobuf/descriptor.h"
#include "services/server/version.h"
#include "storage/schema/migrations.h"

namespace placement::services {

namespace {

// The methods whose calls the gRPC metrics label by name: gRPC's own and
// every method of the access policy, which holds a rule for each method of
// the API (and Serve() serves no service without one for each of its own).
std::vector<std::string> ServedMethods() {
  std::vector<std::string> methods = GrpcOwnMethods();
  for (const MethodRule& rule : MethodRules()) methods.push_back(rule.method);
  return methods;
}

// Insecure without a certificate; TLS with one; mutual TLS with a client CA.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const ServerOptions& options) {
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (options.tls_cert_file.empty()) {
    if (!options.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  absl::StatusOr<std::string> cert = common::ReadFile(options.tls_cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = common::ReadFile(options.tls_key_file);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!options.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca =
        common::ReadFile(options.tls_client_ca_file);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

// Destroys `exposer` promptly. civetweb's listener waits for connections in
// slices of 2 s and looks at its stop flag only between them, so a plain
// destruction takes up to 2 s; a connection to the port ends the slice at
// once. Connects every few milliseconds until the exposer is gone.
void StopMetricsExposer(std::unique_ptr<prometheus::Exposer> exposer,
                        const std::string& address, int port) {
  std::atomic<bool> stopped{false};
  std::thread stopper([&exposer, &stopped] {
    exposer.reset();
    stopped.store(true);
  });
  // The host it listens on; a wildcard is reached on loopback.
  std::string host = address.substr(0, address.rfind(':'));
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* resolved = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                  &resolved) != 0) {
    resolved = nullptr;
  }
  while (!stopped.load()) {
    for (addrinfo* a = resolved; a != nullptr; a = a->ai_next) {
      const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, 0);
      if (fd < 0) continue;
      (void)connect(fd, a->ai_addr, a->ai_addrlen);
      close(fd);
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  if (resolved != nullptr) freeaddrinfo(resolved);
  stopper.join();
}

}  // namespace

PlacementServer::PlacementServer(ServerOptions options)
    : options_(std::move(options)),
      registry_(std::make_shared<prometheus::Registry>()) {}

PlacementServer::~PlacementServer() { Shutdown(absl::ZeroDuration()); }

absl::Status PlacementServer::Start() {
  if (absl::Status metrics = StartMetrics(); !metrics.ok()) return metrics;
  MakeServices();
  if (absl::Status served = Serve(); !served.ok()) return served;
  StartBackgroundWork();
  return StartConsole();
}

absl::Status PlacementServer::StartConsole() {
  if (options_.console_address.empty()) return absl::OkStatus();
  std::vector<std::string> labels;
  for (const console::Route& route : console::Routes()) {
    labels.push_back(route.label);
  }
  console_metrics_ = std::make_unique<ConsoleMetrics>(*registry_, labels);
  console::ConsoleBackend backend;
  backend.submit = [workers = workers_.get()](
                       std::function<void(storage::DbSession&)> task) {
    return workers->TrySubmit(std::move(task));
  };
  backend.snapshot = [evidence = evidence_.get()] {
    return evidence->Current();
  };
  backend.tokens = evidence_.get();
  backend.auth_enabled = options_.auth_enabled;
  backend.pool_state_max_age = options_.pool_state_max_age;
  console_ = std::make_unique<console::Console>(
      std::move(backend), options_.console_limits, console_metrics_.get());
  console::HttpServerOptions http = options_.console_http;
  http.address = options_.console_address;
  console_server_ = std::make_unique<console::HttpServer>(
      http, [console = console_.get()](const console::HttpRequest& request,
                                       console::HttpServer::Respond respond) {
        console->Handle(request, std::move(respond));
      });
  if (absl::Status started = console_server_->Start(); !started.ok()) {
    return started;
  }
  console_port_ = console_server_->port();
  return absl::OkStatus();
}

absl::Status PlacementServer::StartMetrics() {
  prometheus::BuildGauge()
      .Name("placement_build_info")
      .Help("Build metadata of placementd; the value is always 1.")
      .Register(*registry_)
      .Add({{"version", kVersion},
            {"schema", std::to_string(storage::RequiredSchemaVersion())}})
      .Set(1);
  grpc_metrics_ =
      std::make_unique<GrpcServerMetrics>(*registry_, ServedMethods());
  workers_ = std::make_unique<storage::DbWorkers>(
      options_.database_url, options_.db_workers, options_.db_queue_capacity);
  db_pool_metrics_ = std::make_shared<DbPoolMetrics>(*workers_);

  if (!options_.metrics_address.empty()) {
    try {
      exposer_ = std::make_unique<prometheus::Exposer>(options_.metrics_address,
                                                       /*num_threads=*/1);
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("cannot serve /metrics on ",
                                                 options_.metrics_address, ": ",
                                                 e.what()));
    }
    exposer_->RegisterCollectable(registry_);
    exposer_->RegisterCollectable(db_pool_metrics_);
    metrics_port_ = exposer_->GetListeningPorts().front();
  }
  return absl::OkStatus();
}

void PlacementServer::MakeServices() {
  placement_metrics_ = std::make_unique<PlacementMetrics>(*registry_);
  evidence_ = std::make_unique<EvidenceCache>(options_.database_url,
                                              options_.evidence_reread_interval,
                                              options_.fleet_refit_interval);
  auth_ = std::make_unique<Authorizer>(*evidence_, options_.auth_enabled,
                                       options_.writes_per_second_per_token,
                                       options_.write_burst_per_token);
  telemetry_service_ = std::make_unique<TelemetryService>(
      *workers_, *auth_, options_.stream_idle_timeout,
      [metrics = placement_metrics_.get(),
       evidence = evidence_.get()](const storage::RunAck& ack) {
        evidence->NoteLocalChange();
        // Committed, not yet acknowledged: this replica's next plan waits
        // for a snapshot read after this (read your own writes).
        evidence->NoteLocalWriteCommitted();
        if (ack.plan_outcome.has_value()) {
          metrics->PredictionObserved(*ack.plan_outcome);
        }
      });
  catalog_service_ =
      std::make_unique<CatalogService>(*workers_, *auth_, evidence_.get());
  cost_service_ = std::make_unique<CostService>(*workers_, *auth_);
  // Durable plans wait at most for one commit of up to 512 records.
  const bool deferred = options_.plan_records == PlanRecords::kDeferred;
  plan_audit_ = std::make_unique<PlanAuditWriter>(
      options_.database_url, /*queue_capacity=*/4 * options_.db_queue_capacity,
      /*max_batch=*/512,
      deferred ? options_.deferred_record_interval : absl::ZeroDuration());
  placement_service_ = std::make_unique<PlacementService>(
      *workers_, *auth_, *plan_audit_, *evidence_, *placement_metrics_,
      options_.plan_records,
      options_.max_plans_in_flight > 0 ? options_.max_plans_in_flight
                                       : PlanAdmission::DefaultMaxInFlight(),
      options_.pool_state_max_age);
  pool_state_service_ = std::make_unique<PoolStateService>(
      *workers_, *auth_, *evidence_, options_.pool_state_max_age);
}

absl::Status PlacementServer::Serve() {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentials(options_);
  if (!credentials.ok()) return credentials.status();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen_address, *credentials, &port_);
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  builder.SetMaxSendMessageSize(options_.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             options_.max_concurrent_streams);
  // Each service is served only once the access policy has a rule for
  // every method of it (CheckEveryMethodHasARule).
  const std::pair<grpc::Service*, const char*> services[] = {
      {catalog_service_.get(), v1::CatalogService::service_full_name()},
      {telemetry_service_.get(), v1::TelemetryService::service_full_name()},
      {placement_service_.get(), v1::PlacementService::service_full_name()},
      {cost_service_.get(), v1::CostService::service_full_name()},
      {pool_state_service_.get(), v1::PoolStateService::service_full_name()},
  };
  for (const auto& [service, name] : services) {
    const google::protobuf::ServiceDescriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            name);
    if (descriptor == nullptr) {
      return absl::InternalError(absl::StrCat(name, " has no descriptor"));
    }
    if (absl::Status ruled = CheckEveryMethodHasARule(*descriptor);
        !ruled.ok()) {
      return ruled;
    }
    builder.RegisterService(service);
  }
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(grpc_metrics_->InterceptorFactory());
  interceptors.push_back(auth_->InterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.listen_address));
  }
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  // Each served service by name too (grpc_health_probe -service, Kubernetes
  // gRPC probes): once named here, SetServingStatus(bool) below and in the
  // monitor sets them all with the server's "".
  for (const auto& [service, name] : services) {
    health->SetServingStatus(name, false);
  }
  health->SetServingStatus(false);
  return absl::OkStatus();
}

void PlacementServer::StartBackgroundWork() {
  health_ = std::make_unique<HealthMonitor>(
      options_.database_url, server_->GetHealthCheckService(),
      options_.health_interval,
      [evidence = evidence_.get()] { return evidence->Current() != nullptr; });
  sample_retention_metrics_ =
      std::make_unique<SampleRetentionMetrics>(*registry_);
  PartitionMaintenance maintenance;
  maintenance.interval = options_.partition_maintenance_interval;
  maintenance.sample_retention = options_.sample_retention;
  maintenance.metrics = sample_retention_metrics_.get();
  partitions_ =
      std::make_unique<PartitionMaintainer>(options_.database_url, maintenance);
}

void PlacementServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  health_.reset();  // stop flipping health back to SERVING
  partitions_.reset();
  // The console takes no new connection and sends no new page to the
  // database workers; the pages they hold still answer (below).
  if (console_server_ != nullptr) console_server_->StopAccepting();
  if (console_ != nullptr) console_->Stop();
  if (server_ != nullptr) {
    server_->GetHealthCheckService()->SetServingStatus(false);
    server_->Shutdown(std::chrono::system_clock::now() +
                      absl::ToChronoMicroseconds(grace));
    server_->Wait();
  }
  // /metrics reads the worker pool (DbPoolMetrics) and the registry's
  // series: it stops before anything it reads is destroyed.
  if (exposer_ != nullptr) {
    StopMetricsExposer(std::move(exposer_), options_.metrics_address,
                       metrics_port_);
  }
  db_pool_metrics_.reset();
  workers_.reset();  // runs what is queued, then closes the connections
  // Every page the workers held has answered: the console's connections
  // and threads may go.
  console_server_.reset();
  console_.reset();
  plan_audit_.reset();  // records what is queued
  evidence_.reset();
  auth_.reset();
}

}  // namespace placement::services
