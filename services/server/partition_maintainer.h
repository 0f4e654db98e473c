#ifndef PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_
#define PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_

#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "services/metrics/sample_retention_metrics.h"
#include "storage/session/db_session.h"

namespace placement::services {

struct PartitionMaintenance {
  absl::Duration interval = absl::Hours(6);
  // Catalog tombstones older than this are pruned.
  absl::Duration tombstone_retention = absl::Hours(1);
  // Monthly step_samples partitions whose whole range is older than this
  // are dropped (storage::DropExpiredSamplePartitions); zero: none is.
  absl::Duration sample_retention = absl::ZeroDuration();
  // Refreshed each pass when set; must outlive the maintainer.
  SampleRetentionMetrics* metrics = nullptr;
};

// The database's housekeeping, on its own connection (a database that is
// down is simply tried again next time): at start-up, then every
// `interval`,
//  - keeps the monthly step_samples partitions created ahead of the data
//    (from last month to three months ahead);
//  - prunes the catalog tombstones of deletions older than
//    `tombstone_retention` (storage::PruneCatalogTombstones): a replica
//    whose last catalog read is older than that reads in full once;
//  - with a sample retention, drops the monthly step_samples partitions
//    older than it (one replica at a time: the others find its advisory
//    lock held and skip the pass), then measures the samples kept.
// Every replica runs it; concurrent runs are harmless (each step is
// idempotent, pruning serializes on its horizon row, and dropping on the
// advisory lock).
class PartitionMaintainer {
 public:
  PartitionMaintainer(std::string database_url,
                      PartitionMaintenance maintenance);
  ~PartitionMaintainer();

  PartitionMaintainer(const PartitionMaintainer&) = delete;
  PartitionMaintainer& operator=(const PartitionMaintainer&) = delete;

 private:
  void Loop();
  // Each pass's steps.
  bool EnsurePartitions(storage::DbSession& session);
  void PruneTombstones(storage::DbSession& session);
  void ApplySampleRetention(storage::DbSession& session);

  const std::string database_url_;
  const PartitionMaintenance maintenance_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_
