#include "services/server/health_monitor.h"

#include <iostream>

#include "storage/db_session.h"
#include "storage/migrations.h"

namespace placement::services {

HealthMonitor::HealthMonitor(std::string database_url,
                             grpc::HealthCheckServiceInterface* health,
                             absl::Duration interval,
                             std::function<bool()> ready)
    : database_url_(std::move(database_url)),
      health_(health),
      interval_(interval),
      ready_(std::move(ready)),
      thread_([this] { Loop(); }) {}

HealthMonitor::~HealthMonitor() {
  stop_.Notify();
  thread_.join();
}

void HealthMonitor::Loop() {
  storage::DbSession session(database_url_);
  storage::Migrator migrator(session, storage::EmbeddedMigrations());
  const int required = storage::RequiredSchemaVersion();
  bool first = true;
  do {
    absl::StatusOr<int> version = migrator.CurrentVersion();
    const bool schema_ok = version.ok() && *version == required;
    const bool ready = ready_ == nullptr || ready_();
    const bool ok = schema_ok && ready;
    if (ok != serving_.load() || first) {
      if (ok) {
        std::cerr << "placementd: database ready (schema " << required
                  << "): SERVING\n";
      } else if (!version.ok()) {
        std::cerr << "placementd: NOT_SERVING: " << version.status() << "\n";
      } else if (schema_ok) {
        std::cerr << "placementd: NOT_SERVING: pools and evidence not loaded "
                     "yet\n";
      } else {
        std::cerr << "placementd: NOT_SERVING: schema is at version "
                  << *version << ", this binary needs " << required
                  << " (run `placementd migrate up`)\n";
      }
      serving_.store(ok);
      health_->SetServingStatus(ok);
      first = false;
    }
  } while (!stop_.WaitForNotificationWithTimeout(interval_));
}

}  // namespace placement::services
