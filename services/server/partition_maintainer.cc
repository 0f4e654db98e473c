#include "services/server/partition_maintainer.h"

#include <iostream>

#include "absl/time/clock.h"
#include "storage/catalog_read.h"
#include "storage/db_session.h"
#include "storage/sample_store.h"

namespace placement::services {

PartitionMaintainer::PartitionMaintainer(std::string database_url,
                                         absl::Duration interval,
                                         absl::Duration tombstone_retention)
    : database_url_(std::move(database_url)),
      interval_(interval),
      tombstone_retention_(tombstone_retention),
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
    absl::StatusOr<storage::TombstonePruning> pruned =
        storage::PruneCatalogTombstones(session, tombstone_retention_);
    if (pruned.ok() && pruned->deleted > 0) {
      std::cerr << "placementd: pruned " << pruned->deleted
                << " catalog tombstone(s) below transaction "
                << pruned->pruned_below_xid << "\n";
    }
  } while (!stop_.WaitForNotificationWithTimeout(done_once ? interval_
                                                           : absl::Minutes(1)));
}

}  // namespace placement::services
