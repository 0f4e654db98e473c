#include "services/metrics/db_pool_metrics.h"

#include "storage/session/session_connection.h"

namespace placement::services {
namespace {

prometheus::MetricFamily Single(const char* name, const char* help,
                                prometheus::MetricType type, double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(metric);
  return family;
}

}  // namespace

std::vector<prometheus::MetricFamily> DbPoolMetrics::Collect() const {
  const storage::DbWorkers::Stats stats = workers_.GetStats();
  using prometheus::MetricType;
  return {
      Single("placement_db_workers",
             "Database worker threads, each with its own connection.",
             MetricType::Gauge, stats.workers),
      Single("placement_db_workers_busy",
             "Database worker threads running a query now.", MetricType::Gauge,
             stats.busy),
      Single("placement_db_connections_open",
             "Open PostgreSQL connections of this process: one per database "
             "worker that has connected, plus the audit writer, the evidence "
             "cache, its change listener, the health monitor and the "
             "partition maintainer.",
             MetricType::Gauge,
             static_cast<double>(storage::OpenConnectionCount())),
      Single("placement_db_queue_depth", "Database tasks waiting for a worker.",
             MetricType::Gauge, static_cast<double>(stats.queued)),
      Single("placement_db_queue_capacity",
             "Most database tasks that may wait; more are refused with "
             "RESOURCE_EXHAUSTED.",
             MetricType::Gauge, static_cast<double>(stats.queue_capacity)),
      Single("placement_db_queue_rejected_total",
             "Database tasks refused because the queue was full.",
             MetricType::Counter, static_cast<double>(stats.rejected)),
  };
}

}  // namespace placement::services
