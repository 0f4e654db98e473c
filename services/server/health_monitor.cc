#include "services/server/health_monitor.h"

#include <iostream>
#include <optional>
#include <utility>

#include "services/server/version.h"
#include "storage/schema/migrations.h"
#include "storage/session/db_session.h"
#include "storage/session/schema_gate.h"

namespace placement::services {
namespace {

std::atomic<int> served_oldest{kOldestSchemaVersion};
std::atomic<int> served_newest{kNewestSchemaVersion};

// The monitor's own reads are one row each.
storage::SessionLimits MonitorLimits() {
  return {absl::Seconds(1), absl::Seconds(5)};
}

// Reads the schema version (and the oldest binary it declares compatible)
// and judges it against `window`, opening or closing `gate` by the verdict.
// An unreadable schema leaves the gate as it was: writes fail on their own
// then, and a blip must not refuse them afterwards.
absl::StatusOr<std::pair<int, storage::SchemaVerdict>> JudgeAndGate(
    storage::Migrator& migrator, const storage::SchemaWindow& window,
    storage::SchemaGate& gate) {
  absl::StatusOr<int> version = migrator.CurrentVersion();
  if (!version.ok()) return version.status();
  absl::StatusOr<std::optional<int>> oldest_binary =
      migrator.OldestCompatibleBinary();
  if (!oldest_binary.ok()) return oldest_binary.status();
  storage::SchemaVerdict verdict =
      storage::JudgeSchema(window, *version, *oldest_binary);
  if (verdict.served) {
    gate.Open();
  } else {
    gate.Close(verdict.reason);
  }
  return std::make_pair(*version, std::move(verdict));
}

}  // namespace

storage::SchemaWindow ServedSchemaWindow() {
  return {served_oldest.load(), served_newest.load()};
}

void OverrideServedSchemaWindow(storage::SchemaWindow window) {
  served_oldest.store(window.oldest);
  served_newest.store(window.newest);
}

HealthMonitor::HealthMonitor(std::string database_url,
                             grpc::HealthCheckServiceInterface* health,
                             absl::Duration interval,
                             std::function<bool()> ready)
    : database_url_(std::move(database_url)),
      health_(health),
      interval_(interval),
      ready_(std::move(ready)) {
  std::shared_ptr<storage::SchemaGate> gate =
      storage::SchemaGate::ForDatabase(database_url_);
  gate->Close("the schema version has not been checked yet");
  // The first judgement before the server takes calls: a write that
  // arrives at once is judged by the schema, not refused while the thread
  // below starts.
  {
    storage::DbSession session(database_url_, MonitorLimits());
    storage::Migrator migrator(session, storage::EmbeddedMigrations());
    (void)JudgeAndGate(migrator, ServedSchemaWindow(), *gate)
        .status();  // unreadable: closed, and Loop() says why
  }
  thread_ = std::thread([this] { Loop(); });
}

HealthMonitor::~HealthMonitor() {
  stop_.Notify();
  thread_.join();
}

void HealthMonitor::Loop() {
  storage::DbSession session(database_url_, MonitorLimits());
  storage::Migrator migrator(session, storage::EmbeddedMigrations());
  std::shared_ptr<storage::SchemaGate> gate =
      storage::SchemaGate::ForDatabase(database_url_);
  const storage::SchemaWindow window = ServedSchemaWindow();
  bool first = true;
  do {
    absl::StatusOr<std::pair<int, storage::SchemaVerdict>> judged =
        JudgeAndGate(migrator, window, *gate);
    const absl::Status read = judged.status();
    const storage::SchemaVerdict verdict =
        judged.ok() ? judged->second : storage::SchemaVerdict{};
    const bool ready = ready_ == nullptr || ready_();
    const bool ok = verdict.served && ready;
    if (ok != serving_.load() || first) {
      if (ok) {
        std::cerr << "placementd: database ready (schema " << judged->first
                  << ", this binary serves " << window.oldest << " to "
                  << window.newest << "): SERVING\n";
      } else if (!read.ok()) {
        std::cerr << "placementd: NOT_SERVING: " << read << "\n";
      } else if (verdict.served) {
        std::cerr << "placementd: NOT_SERVING: pools and evidence not loaded "
                     "yet\n";
      } else {
        std::cerr << "placementd: NOT_SERVING: " << verdict.reason << "\n";
      }
      serving_.store(ok);
      health_->SetServingStatus(ok);
      first = false;
    }
  } while (!stop_.WaitForNotificationWithTimeout(interval_));
}

}  // namespace placement::services
