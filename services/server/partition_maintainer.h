#ifndef PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_
#define PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_

#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace placement::services {

// Keeps the monthly step_samples partitions created ahead of the data: at
// start-up, then every `interval`, it makes sure the partitions from last
// month to three months ahead exist (on its own connection; a database that
// is down is simply tried again next time).
class PartitionMaintainer {
 public:
  PartitionMaintainer(std::string database_url, absl::Duration interval);
  ~PartitionMaintainer();

  PartitionMaintainer(const PartitionMaintainer&) = delete;
  PartitionMaintainer& operator=(const PartitionMaintainer&) = delete;

 private:
  void Loop();

  const std::string database_url_;
  const absl::Duration interval_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_SERVER_PARTITION_MAINTAINER_H_
