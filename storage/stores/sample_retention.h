#ifndef PLACEMENT_STORAGE_SAMPLE_RETENTION_H_
#define PLACEMENT_STORAGE_SAMPLE_RETENTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/session/db_session.h"

namespace placement::storage {

// Retention of step samples (placementd --sample_retention_days,
// docs/RELIABILITY.md "Sample retention"): whole monthly partitions of
// step_samples are dropped, never rows one by one, and nothing else is
// touched (benchmark_runs, the evidence and cost rollups and the plans do
// not read step_samples). The runs whose samples were in a dropped
// partition get sample_streams.samples_dropped_at (migration 0018) in the
// same transaction.

// What one retention pass did.
struct SampleRetentionPass {
  // The partitions dropped (their names, as the server quotes them).
  std::vector<std::string> dropped;
  // Runs marked samples_dropped_at by those drops.
  int64_t runs_marked = 0;
  // Expired by their range but kept: a sample was stored in them within the
  // retention (a run that started before the cut and is still streaming).
  int kept_recent = 0;
  // Whether another replica held the retention lock: this pass did nothing.
  bool locked_elsewhere = false;
};

// Drops every monthly partition of step_samples whose whole range ends at
// or before now - `retention` (the server's clock), unless a sample was
// stored in it (sample_streams.updated_at) after that cut. Each partition
// is one transaction, under pg_try_advisory_xact_lock so that one replica
// drops at a time (a replica that finds the lock held stops its pass). The
// DEFAULT partition and partitions with an open bound are never dropped.
// `retention` of zero or less: drops nothing. Fails on a schema without
// migration 0018 (nothing is dropped then).
absl::StatusOr<SampleRetentionPass> DropExpiredSamplePartitions(
    DbSession& session, absl::Duration retention);

// The samples kept, over every partition of step_samples: rows as the
// planner estimates them (pg_class.reltuples, as of the last ANALYZE or
// VACUUM; never-analyzed partitions count 0) and bytes on disk with indexes
// and TOAST (pg_total_relation_size).
struct SampleFootprint {
  double rows = 0;
  double bytes = 0;
  int partitions = 0;
};
absl::StatusOr<SampleFootprint> MeasureSampleFootprint(DbSession& session);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SAMPLE_RETENTION_H_
