#ifndef PLACEMENT_SERVICES_API_TELEMETRY_CONVERT_H_
#define PLACEMENT_SERVICES_API_TELEMETRY_CONVERT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/pool.h"
#include "core/sku.h"
#include "placement/v1/telemetry.pb.h"
#include "services/api/run_convert.h"
#include "storage/records/eval_records.h"
#include "storage/records/run_records.h"
#include "storage/records/sample_records.h"

namespace placement::services {

// Conversions between the telemetry messages and storage's run and sample
// records (storage/records/, without libpqxx); the pure part of a run's
// conversion is UploadedRunFromProto (run_convert.h).

// A validated upload (ValidateRunFields, ValidateRunAgainstCatalog) ready to
// store: `converted` (its one conversion, UploadedRunFromProto), the bytes
// as sent, and the core run with the catalog's SKU id and the pool's name;
// the team defaults to the pool's "team" label. The evals' serving SKUs are
// resolved in `catalog` (kept as sent where they do not resolve: validation
// refused those).
storage::RunToStore RunToStoreFromProto(
    const v1::BenchmarkRun& run, UploadedRun converted, const core::Pool& pool,
    const std::string& sku_id, const std::vector<core::GpuSku>& catalog = {});

void StoredEvalToProto(const storage::StoredEval& stored,
                       v1::StoredEvalResult* out);

void AckToProto(const storage::RunAck& ack,
                v1::UploadBenchmarkRunResponse* response);

// DATA_LOSS when the stored upload bytes do not parse.
absl::Status StoredRunToProto(const storage::StoredRun& stored,
                              v1::GetBenchmarkRunResponse* response);

void RunSummaryToProto(const storage::RunSummary& summary,
                       v1::BenchmarkRunSummary* out);

// The samples of one validated stream message (ValidateSampleBatch).
std::vector<storage::StepSampleRow> SampleRowsFromProto(
    const v1::StreamStepSamplesRequest& request);

void SampleProgressToProto(const std::string& run_id,
                           const storage::SampleProgress& progress,
                           v1::GetSampleProgressResponse* response);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_TELEMETRY_CONVERT_H_
