#include "services/server/partition_maintainer.h"

#include <iostream>

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "storage/stores/catalog_read.h"
#include "storage/stores/sample_retention.h"
#include "storage/stores/sample_store.h"

namespace placement::services {

PartitionMaintainer::PartitionMaintainer(std::string database_url,
                                         PartitionMaintenance maintenance)
    : database_url_(std::move(database_url)),
      maintenance_(maintenance),
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
    done_once = EnsurePartitions(session) || done_once;
    PruneTombstones(session);
    ApplySampleRetention(session);
  } while (!stop_.WaitForNotificationWithTimeout(
      done_once ? maintenance_.interval : absl::Minutes(1)));
}

bool PartitionMaintainer::EnsurePartitions(storage::DbSession& session) {
  absl::StatusOr<int> created = storage::EnsureSamplePartitions(
      session, absl::Now() - absl::Hours(24 * 31), /*months=*/5);
  if (!created.ok()) return false;
  if (*created > 0) {
    std::cerr << "placementd: created " << *created
              << " step_samples partition(s)\n";
  }
  return true;
}

void PartitionMaintainer::PruneTombstones(storage::DbSession& session) {
  absl::StatusOr<storage::TombstonePruning> pruned =
      storage::PruneCatalogTombstones(session,
                                      maintenance_.tombstone_retention);
  if (pruned.ok() && pruned->deleted > 0) {
    std::cerr << "placementd: pruned " << pruned->deleted
              << " catalog tombstone(s) below transaction "
              << pruned->pruned_below_xid << "\n";
  }
}

void PartitionMaintainer::ApplySampleRetention(storage::DbSession& session) {
  if (maintenance_.sample_retention > absl::ZeroDuration()) {
    absl::StatusOr<storage::SampleRetentionPass> pass =
        storage::DropExpiredSamplePartitions(session,
                                             maintenance_.sample_retention);
    if (!pass.ok()) {
      // Nothing is lost: a failed drop rolled back whole (marks included)
      // and is tried again on the next pass.
      std::cerr << "placementd: sample retention: " << pass.status() << "\n";
    } else if (!pass->dropped.empty()) {
      std::cerr << "placementd: sample retention dropped "
                << absl::StrJoin(pass->dropped, ", ") << " ("
                << pass->runs_marked << " run(s) marked)\n";
      if (maintenance_.metrics != nullptr) {
        maintenance_.metrics->PartitionsDropped(
            static_cast<int>(pass->dropped.size()));
      }
    }
  }
  if (maintenance_.metrics == nullptr) return;
  absl::StatusOr<storage::SampleFootprint> footprint =
      storage::MeasureSampleFootprint(session);
  // A failed measure leaves the gauges at their last value.
  if (footprint.ok()) maintenance_.metrics->Measured(*footprint);
}

}  // namespace placement::services
