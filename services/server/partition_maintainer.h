#ifndef PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_
#define PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_

#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace placement::services {

// The database's housekeeping, on its own connection (a database that is
// down is simply tried again next time): at start-up, then every
// `interval`,
//  - keeps the monthly step_samples partitions created ahead of the data
//    (from last month to three months ahead);
//  - prunes the catalog tombstones of deletions older than
//    `tombstone_retention` (storage::PruneCatalogTombstones): a replica
//    whose last catalog read is older than that reads in full once.
// Every replica runs it; concurrent runs are harmless (each step is
// idempotent, and pruning serializes on its horizon row).
class PartitionMaintainer {
 public:
  PartitionMaintainer(std::string database_url, absl::Duration interval,
                      absl::Duration tombstone_retention = absl::Hours(1));
  ~PartitionMaintainer();

  PartitionMaintainer(const PartitionMaintainer&) = delete;
  PartitionMaintainer& operator=(const PartitionMaintainer&) = delete;

 private:
  void Loop();

  const std::string database_url_;
  const absl::Duration interval_;
  const absl::Duration tombstone_retention_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_
