#ifndef PLACEMENT_SERVICES_METRICS_SAMPLE_RETENTION_METRICS_H_
#define PLACEMENT_SERVICES_METRICS_SAMPLE_RETENTION_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "storage/stores/sample_retention.h"

namespace placement::services {

// The step samples kept and dropped (docs/RELIABILITY.md "Sample
// retention"), refreshed by each pass of the partition maintainer:
//   placement_step_samples_rows       rows kept over every partition, as the
//       planner estimates them (pg_class.reltuples: as of the last ANALYZE
//       or autovacuum, not a count)
//   placement_step_samples_bytes      their size on disk, indexes included
//   placement_step_sample_partitions  partitions of step_samples
//   placement_step_sample_partitions_dropped_total  monthly partitions this
//       replica dropped for retention
// Every replica measures the same database, so the gauges agree across
// replicas; the counter counts what this replica dropped.
class SampleRetentionMetrics {
 public:
  explicit SampleRetentionMetrics(prometheus::Registry& registry);

  void Measured(const storage::SampleFootprint& footprint);
  void PartitionsDropped(int count);

 private:
  prometheus::Gauge& rows_;
  prometheus::Gauge& bytes_;
  prometheus::Gauge& partitions_;
  prometheus::Counter& dropped_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_METRICS_SAMPLE_RETENTION_METRICS_H_
