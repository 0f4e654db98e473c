#ifndef PLACEMENT_SERVICES_SERVER_HEALTH_MONITOR_H_
#define PLACEMENT_SERVICES_SERVER_HEALTH_MONITOR_H_

#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "storage/schema/schema_window.h"

namespace placement::services {

// Sets grpc.health.v1 to SERVING only while the database answers, its
// schema is within this binary's window (ServedSchemaWindow, JudgeSchema)
// and `ready` holds (the replica's pools and evidence are loaded);
// NOT_SERVING otherwise. It checks every `interval` on its own connection,
// so placementd notices a database that went away, and one that came back
// or was migrated, without a restart. It also opens and closes the
// database's SchemaGate: outside the window every session of this process
// on that database refuses writes with UNAVAILABLE (closed from
// construction until the first reading).
// The schema versions this process serves: kOldestSchemaVersion to
// kNewestSchemaVersion unless overridden (placementd's test-only
// --newest_schema_version, which makes this build act as the previous
// release in upgrade tests). Set before any server starts.
storage::SchemaWindow ServedSchemaWindow();
void OverrideServedSchemaWindow(storage::SchemaWindow window);

class HealthMonitor {
 public:
  HealthMonitor(std::string database_url,
                grpc::HealthCheckServiceInterface* health,
                absl::Duration interval, std::function<bool()> ready);
  // Stops checking (the server's Shutdown sets NOT_SERVING itself).
  ~HealthMonitor();

  HealthMonitor(const HealthMonitor&) = delete;
  HealthMonitor& operator=(const HealthMonitor&) = delete;

  bool serving() const { return serving_.load(); }

 private:
  void Loop();

  const std::string database_url_;
  grpc::HealthCheckServiceInterface* const health_;
  const absl::Duration interval_;
  const std::function<bool()> ready_;
  std::atomic<bool> serving_{false};
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_HEALTH_MONITOR_H_
