#include "services/metrics/sample_retention_metrics.h"

namespace placement::services {

SampleRetentionMetrics::SampleRetentionMetrics(prometheus::Registry& registry)
    : rows_(prometheus::BuildGauge()
                .Name("placement_step_samples_rows")
                .Help("Step sample rows kept, as PostgreSQL estimates them "
                      "(pg_class.reltuples over the partitions).")
                .Register(registry)
                .Add({})),
      bytes_(prometheus::BuildGauge()
                 .Name("placement_step_samples_bytes")
                 .Help("Bytes on disk of the step sample partitions, indexes "
                       "and TOAST included.")
                 .Register(registry)
                 .Add({})),
      partitions_(prometheus::BuildGauge()
                      .Name("placement_step_sample_partitions")
                      .Help("Partitions of step_samples (the monthly ones and "
                            "the default).")
                      .Register(registry)
                      .Add({})),
      dropped_(prometheus::BuildCounter()
                   .Name("placement_step_sample_partitions_dropped_total")
                   .Help("Monthly step_samples partitions this replica "
                         "dropped for sample retention.")
                   .Register(registry)
                   .Add({})) {}

void SampleRetentionMetrics::Measured(
    const storage::SampleFootprint& footprint) {
  rows_.Set(footprint.rows);
  bytes_.Set(footprint.bytes);
  partitions_.Set(footprint.partitions);
}

void SampleRetentionMetrics::PartitionsDropped(int count) {
  if (count > 0) dropped_.Increment(count);
}

}  // namespace placement::services
