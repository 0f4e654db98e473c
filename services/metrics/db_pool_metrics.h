#ifndef PLACEMENT_SERVICES_METRICS_DB_POOL_METRICS_H_
#define PLACEMENT_SERVICES_METRICS_DB_POOL_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

#include "storage/session/db_workers.h"

namespace placement::services {

// Database worker pool gauges, read from the pool at scrape time:
//   placement_db_workers, placement_db_workers_busy,
//   placement_db_connections_open, placement_db_queue_depth,
//   placement_db_queue_capacity, placement_db_queue_rejected_total.
class DbPoolMetrics : public prometheus::Collectable {
 public:
  explicit DbPoolMetrics(const storage::DbWorkers& workers)
      : workers_(workers) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const storage::DbWorkers& workers_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_METRICS_DB_POOL_METRICS_H_
