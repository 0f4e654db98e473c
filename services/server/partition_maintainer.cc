#include "services/server/partition_maintainer.h"

#include <iostream>

#include "absl/time/clock.h"
#include "storage/db_session.h"
#include "storage/sample_store.h"

namespace placement::services {

PartitionMaintainer::PartitionMaintainer(std::string database_url,
                                         absl::Duration interval)
    : database_url_(std::move(database_url)),
      interval_(interval),
      thread_([this] { Loop(); }) {}

PartitionMaintainer::~PartitionMaintainer() {
  stop_.Notify();
  thread_.join();
}

void PartitionMaintainer::Loop() {
  storage::DbSession session(database_url_);
  // Until the first success (the schema may not be migrated yet), retry
  // every minute rather than every interval.
  bool done_once = false;
  do {
    absl::StatusOr<int> created = storage::EnsureSamplePartitions(
        session, absl::Now() - absl::Hours(24 * 31), /*months=*/5);
    if (created.ok()) {
      if (*created > 0) {
        std::cerr << "placementd: created " << *created
                  << " step_samples partition(s)\n";
      }
      done_once = true;
    }
  } while (!stop_.WaitForNotificationWithTimeout(done_once ? interval_
                                                           : absl::Minutes(1)));
}

}  // namespace placement::services
