// placementd: the placement gRPC server, and its schema migrator.
//
//   placementd [flags]                      serve
//   placementd migrate up|down [N]|status   manage the schema
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/uuid.h"
#include "core/models/model_constants_file.h"
#include "services/auth/auth.h"
#include "services/server/placement_server.h"
#include "storage/schema/migrations.h"
#include "storage/session/change_listener.h"
#include "storage/session/db_session.h"
#include "storage/stores/token_store.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC listen address (port 0 picks a free port)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics listen address; empty disables it");
ABSL_FLAG(std::string, console_listen, "",
          "web console listen address (host:port; port 0 picks a free port); "
          "empty (the default) serves no console. Plain HTTP: keep it on "
          "loopback or put TLS in front (docs/CONSOLE.md)");
ABSL_FLAG(std::string, database_url, "",
          "PostgreSQL URL (default: the DATABASE_URL environment variable)");
ABSL_FLAG(int, db_workers, 8,
          "database worker threads, each with its own connection");
ABSL_FLAG(int, db_queue, 512,
          "database tasks that may wait for a worker; more are refused with "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, plan_records, "durable",
          "durable: a plan is answered once its record is committed, so its "
          "id can always be looked up and matched with its runs; deferred: "
          "answered as soon as its record is queued, records committed in "
          "groups every --deferred_record_ms (more plans per core; the plans "
          "of the last interval are lost if the process dies)");
ABSL_FLAG(int, deferred_record_ms, 2,
          "with --plan_records=deferred: the longest a record waits to be "
          "committed with others");
ABSL_FLAG(int, max_plans_in_flight, 0,
          "PlacePlan calls planned or waiting for their record at once; more "
          "are refused at once with RESOURCE_EXHAUSTED and a retry pushback "
          "(0: 16 per core, at least 64). Plans waiting for evidence (read "
          "your writes) are bounded apart: 1,024, at most 256 per token");
ABSL_FLAG(absl::Duration, pool_state_max_age, absl::Minutes(10),
          "a pool's reported state older than this (since it arrived) is "
          "stale: plans show its waits as unknown");
ABSL_FLAG(int, shutdown_grace_seconds, 10,
          "on SIGINT/SIGTERM, how long in-flight calls may take to finish");
ABSL_FLAG(bool, auth, true,
          "require a bearer token with the right role on every RPC but "
          "health and reflection");
ABSL_FLAG(double, writes_per_second_per_token, 200,
          "sustained writes a token may make each second");
ABSL_FLAG(double, write_burst_per_token, 400, "writes a token may burst");
ABSL_FLAG(std::string, tls_cert, "", "server certificate chain (PEM): TLS on");
ABSL_FLAG(std::string, tls_key, "", "server private key (PEM)");
ABSL_FLAG(std::string, tls_client_ca, "",
          "CA (PEM) that must have signed client certificates: mutual TLS");
ABSL_FLAG(int, max_message_bytes, 8 << 20, "largest message accepted");
ABSL_FLAG(int, max_concurrent_streams, 64, "concurrent calls per connection");
ABSL_FLAG(int, stream_idle_timeout_seconds, 60,
          "close a sample stream that sends nothing for this long");
ABSL_FLAG(int, sample_retention_days, 0,
          "drop the monthly step_samples partitions whose whole month ended "
          "more than this many days ago (runs, rollups, cost and plans are "
          "kept; the runs are marked as having had their samples dropped); "
          "0: keep every sample; otherwise at least 31");
ABSL_FLAG(double, fleet_refit_seconds, 10,
          "re-fit the fleet model (memory and step time learned across SKUs "
          "from uploaded runs) at most this often; 0: on every snapshot");
ABSL_FLAG(
    std::string, model_constants_file, "",
    "start the memory and step-time models from these constants (the "
    "format of core/models/model_constants_file.h, e.g. re-fitted to this "
    "fleet's own runs) instead of the shipped ones, which are fitted to "
    "the published measurements; a constant the file does not name "
    "keeps its shipped value; a file that does not parse stops the "
    "start");
ABSL_FLAG(std::string, role, "",
          "tokens create: agent, planner, finance or admin");
ABSL_FLAG(std::string, name, "", "tokens create: what the token is for");
ABSL_FLAG(int, backfill_batch_size,
          placement::storage::BackfillOptions().batch_size,
          "migrate up: rows per backfill batch (one transaction each; "
          "smaller holds each batch's row locks for less time)");
ABSL_FLAG(int, newest_schema_version, 0,
          "testing only: serve as a build whose newest migration is this "
          "version (the previous release, in rolling-upgrade tests); 0: "
          "this build's own");
ABSL_FLAG(std::string, port_file, "",
          "write 'grpc_port metrics_port console_port' here once serving (0 "
          "for what is off; for tests and scripts that listen on port 0)");

namespace {

using placement::storage::DbSession;
using placement::storage::EmbeddedMigrations;
using placement::storage::Migrator;

std::string DatabaseUrl() {
  std::string url = absl::GetFlag(FLAGS_database_url);
  if (url.empty()) {
    if (const char* env = std::getenv("DATABASE_URL")) url = env;
  }
  return url;
}

// One line per backfill the migrations registered: done (when, after how
// many batches) or pending (a `migrate up` continues it).
void PrintBackfills(Migrator& migrator) {
  absl::StatusOr<std::vector<placement::storage::BackfillState>> backfills =
      migrator.Backfills();
  if (!backfills.ok()) {
    std::cerr << "backfills: " << backfills.status() << "\n";
    return;
  }
  for (const auto& backfill : *backfills) {
    std::cout << (backfill.done_at ? "done    " : "pending ") << "backfill "
              << backfill.name << " (migration " << backfill.migration << ", "
              << backfill.batches << " batch(es))";
    if (backfill.done_at) {
      std::cout << "  "
                << absl::FormatTime(absl::RFC3339_sec, *backfill.done_at,
                                    absl::UTCTimeZone());
    }
    std::cout << "\n";
  }
}

int Migrate(const std::vector<char*>& args, const std::string& url) {
  const std::string usage = "usage: placementd migrate up|down [N]|status";
  if (args.size() < 3) {
    std::cerr << usage << "\n";
    return 2;
  }
  DbSession session(url);
  placement::storage::BackfillOptions backfill_options;
  backfill_options.batch_size =
      std::max(1, absl::GetFlag(FLAGS_backfill_batch_size));
  Migrator migrator(session, EmbeddedMigrations(), backfill_options);
  const std::string command = args[2];
  if (command == "up") {
    absl::StatusOr<int> applied = migrator.Up();
    if (!applied.ok()) {
      std::cerr << "migrate up: " << applied.status() << "\n";
      return 1;
    }
    std::cout << "applied " << *applied << " migration(s); schema at version "
              << migrator.LatestVersion() << "\n";
    PrintBackfills(migrator);
    return 0;
  }
  if (command == "down") {
    int steps = 1;
    if (args.size() > 3 && (!absl::SimpleAtoi(args[3], &steps) || steps < 1)) {
      std::cerr << usage << "\n";
      return 2;
    }
    absl::StatusOr<int> reverted = migrator.Down(steps);
    if (!reverted.ok()) {
      std::cerr << "migrate down: " << reverted.status() << "\n";
      return 1;
    }
    std::cout << "reverted " << *reverted << " migration(s)\n";
    return 0;
  }
  if (command == "status") {
    absl::StatusOr<std::vector<placement::storage::MigrationState>> states =
        migrator.Status();
    if (!states.ok()) {
      std::cerr << "migrate status: " << states.status() << "\n";
      return 1;
    }
    for (const auto& state : *states) {
      std::cout << (state.applied_at ? "applied " : "pending ") << state.version
                << " " << state.name;
      if (state.applied_at) {
        std::cout << "  "
                  << absl::FormatTime(absl::RFC3339_sec, *state.applied_at,
                                      absl::UTCTimeZone());
      }
      std::cout << "\n";
    }
    PrintBackfills(migrator);
    return 0;
  }
  std::cerr << usage << "\n";
  return 2;
}

// `placementd tokens create --role R --name N`: makes a token directly in the
// database (how the first admin token comes to be) and prints its secret.
int Tokens(const std::vector<char*>& args, const std::string& url) {
  placement::services::Role role;
  if (args.size() != 3 || std::string(args[2]) != "create" ||
      !placement::services::ParseRole(absl::GetFlag(FLAGS_role), &role) ||
      absl::GetFlag(FLAGS_name).empty()) {
    std::cerr << "usage: placementd tokens create --role "
                 "agent|planner|finance|admin --name NAME\n";
    return 2;
  }
  placement::storage::TokenRecord token;
  token.token_id = placement::common::NewUuid();
  token.name = absl::GetFlag(FLAGS_name);
  token.role = placement::services::RoleName(role);
  const std::string secret = placement::services::NewTokenSecret();
  token.secret_hash = placement::services::TokenSecretHash(secret);
  DbSession session(url);
  if (absl::Status status = placement::storage::InsertToken(session, token);
      !status.ok()) {
    std::cerr << "tokens create: " << status << "\n";
    return 1;
  }
  if (absl::Status status = placement::storage::NotifyChange(session);
      !status.ok()) {
    std::cerr << "tokens create: running replicas learn of the token at "
                 "their next re-read: "
              << status << "\n";
  }
  std::cout << secret << "\n";
  std::cerr << "created " << token.role << " token " << token.token_id << " ("
            << token.name << ")\n";
  return 0;
}

// Installs --model_constants_file, if given, before any thread starts.
bool LoadModelConstants() {
  const std::string path = absl::GetFlag(FLAGS_model_constants_file);
  if (path.empty()) return true;
  std::ifstream in(path);
  if (!in.is_open()) {
    std::cerr << "placementd: --model_constants_file " << path
              << ": cannot be opened\n";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<placement::core::ModelConstants> constants =
      placement::core::ParseModelConstants(
          text.str(), placement::core::CurrentModelConstants());
  if (!constants.ok()) {
    std::cerr << "placementd: --model_constants_file " << path << ": "
              << constants.status().message() << "\n";
    return false;
  }
  placement::core::InstallModelConstants(*constants);
  std::cerr << "placementd: model constants from " << path << "\n";
  return true;
}

// --newest_schema_version: this binary serves as the release whose newest
// schema is that version (a test stands in for the previous release).
void ApplySchemaWindowFlag() {
  const int newest = absl::GetFlag(FLAGS_newest_schema_version);
  if (newest <= 0) return;
  placement::storage::SchemaWindow window =
      placement::services::ServedSchemaWindow();
  window.newest = newest;
  window.oldest = std::min(window.oldest, newest);
  placement::services::OverrideServedSchemaWindow(window);
}

// --sample_retention_days; nullopt (having said why) when refused. At least
// 31 days: the partition maintainer keeps last month's partition created,
// and a shorter retention would drop it again on every pass.
std::optional<absl::Duration> SampleRetentionFromFlag() {
  const int days = absl::GetFlag(FLAGS_sample_retention_days);
  if (days != 0 && days < 31) {
    std::cerr << "placementd: --sample_retention_days must be 0 (keep every "
                 "sample) or at least 31, not "
              << days << "\n";
    return std::nullopt;
  }
  return absl::Hours(24) * days;
}

// The server's options from the flags; nullopt (having said why) when a
// flag's value is refused.
std::optional<placement::services::ServerOptions> OptionsFromFlags(
    const std::string& url) {
  placement::services::ServerOptions options;
  options.listen_address = absl::GetFlag(FLAGS_listen);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_listen);
  options.console_address = absl::GetFlag(FLAGS_console_listen);
  options.database_url = url;
  options.db_workers = std::max(1, absl::GetFlag(FLAGS_db_workers));
  options.fleet_refit_interval =
      absl::Seconds(std::max(0.0, absl::GetFlag(FLAGS_fleet_refit_seconds)));
  options.db_queue_capacity = std::max(1, absl::GetFlag(FLAGS_db_queue));
  const std::string plan_records = absl::GetFlag(FLAGS_plan_records);
  if (plan_records != "durable" && plan_records != "deferred") {
    std::cerr << "placementd: --plan_records must be durable or deferred, "
                 "not '"
              << plan_records << "'\n";
    return std::nullopt;
  }
  options.plan_records = plan_records == "deferred"
                             ? placement::services::PlanRecords::kDeferred
                             : placement::services::PlanRecords::kDurable;
  options.deferred_record_interval =
      absl::Milliseconds(std::max(0, absl::GetFlag(FLAGS_deferred_record_ms)));
  options.max_plans_in_flight =
      std::max(0, absl::GetFlag(FLAGS_max_plans_in_flight));
  options.pool_state_max_age = absl::GetFlag(FLAGS_pool_state_max_age);
  if (options.pool_state_max_age <= absl::ZeroDuration()) {
    std::cerr << "placementd: --pool_state_max_age must be positive\n";
    return std::nullopt;
  }
  options.auth_enabled = absl::GetFlag(FLAGS_auth);
  options.writes_per_second_per_token =
      absl::GetFlag(FLAGS_writes_per_second_per_token);
  options.write_burst_per_token = absl::GetFlag(FLAGS_write_burst_per_token);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.stream_idle_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_stream_idle_timeout_seconds));
  std::optional<absl::Duration> retention = SampleRetentionFromFlag();
  if (!retention.has_value()) return std::nullopt;
  options.sample_retention = *retention;
  if (!options.auth_enabled) {
    std::cerr << "placementd: WARNING: --auth=false: every caller may do "
                 "everything\n";
  }
  if (options.plan_records == placement::services::PlanRecords::kDeferred) {
    std::cerr << "placementd: --plan_records=deferred: plans are answered "
                 "before they are recorded\n";
  }
  return options;
}

// Says where the server listens, and writes "PORT METRICS_PORT CONSOLE_PORT" to
// --port_file (renamed into place, so a reader never sees half of it).
void AnnouncePorts(const placement::services::PlacementServer& server) {
  std::cerr << "placementd: gRPC on port " << server.port();
  if (server.metrics_port() != 0) {
    std::cerr << ", /metrics on port " << server.metrics_port();
  }
  if (server.console_port() != 0) {
    std::cerr << ", web console on port " << server.console_port();
  }
  std::cerr << "\n";
  if (const std::string port_file = absl::GetFlag(FLAGS_port_file);
      !port_file.empty()) {
    const std::string temp = port_file + ".tmp";
    std::ofstream(temp) << server.port() << " " << server.metrics_port() << " "
                        << server.console_port() << "\n";
    std::rename(temp.c_str(), port_file.c_str());
  }
}

int Serve(const std::string& url) {
  // Signals are taken synchronously by this thread; every thread started
  // from here on inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (!LoadModelConstants()) return 2;
  ApplySchemaWindowFlag();
  std::optional<placement::services::ServerOptions> options =
      OptionsFromFlags(url);
  if (!options) return 2;
  placement::services::PlacementServer server(*options);
  if (absl::Status status = server.Start(); !status.ok()) {
    std::cerr << "placementd: " << status << "\n";
    return 1;
  }
  AnnouncePorts(server);

  int signal = 0;
  sigwait(&signals, &signal);
  const absl::Duration grace =
      absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds));
  std::cerr << "placementd: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ", shutting down (grace " << grace << ")\n";
  server.Shutdown(grace);
  std::cerr << "placementd: stopped\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Abseil checks every mutex acquisition for lock-order cycles unless told
  // otherwise; that costs measurable CPU on the request path.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::SetProgramUsageMessage(
      "placementd [flags]                      serve the placement API\n"
      "placementd migrate up|down [N]|status   manage the database schema\n"
      "placementd tokens create --role R --name N   make a token, print it");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string url = DatabaseUrl();
  if (url.empty()) {
    std::cerr << "placementd: set --database_url or DATABASE_URL\n";
    return 2;
  }
  if (args.size() > 1 && std::string(args[1]) == "migrate") {
    return Migrate(args, url);
  }
  if (args.size() > 1 && std::string(args[1]) == "tokens") {
    return Tokens(args, url);
  }
  if (args.size() > 1) {
    std::cerr << "placementd: unknown command '" << args[1] << "'\n";
    return 2;
  }
  return Serve(url);
}
