// The learning curve (see bench/learning_curve.sh): the published fine-tuning
// measurements replayed as uploaded runs, in a random order, through the
// public API; after every k runs, every row not yet uploaded is predicted
// (PlacePlan's candidate on the row's own pool) and the median errors of the
// planner and of the analytic prior are printed against the runs seen.
//
//   learning_curve --server H:P --csv PATH [--k 5] [--seed 1]
//                  [--max_seconds 600]
//
// Each usable row (tests/core/published_measurements.h maps it to a recipe
// and a catalog SKU; rows it cannot represent and published OOMs are left
// out) is one run of its recipe on a pool of its card (8 GPUs a node, NVLink
// when the card has it, InfiniBand between nodes: the published runs' pool
// the calibration tests assume). A row's step time is its tokens per
// optimizer step / (published tokens/s per GPU x GPUs). A figure the row
// does not publish is uploaded as the prior's own figure (it informs
// nothing beyond the prior) and is not scored.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/memory_model.h"
#include "core/step_time_model.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "placement/v1/telemetry.grpc.pb.h"
#include "services/api/recipe_convert.h"
#include "tests/core/published_measurements.h"
#include "tests/core/test_catalog.h"
#include "tests/support/fixtures.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "placementd address");
ABSL_FLAG(std::string, csv,
          "../shared/data/published_finetune_measurements.csv",
          "the published measurements");
ABSL_FLAG(int, k, 5, "predict the rows not yet uploaded after every k runs");
ABSL_FLAG(int, seed, 1, "the upload order's random seed");
ABSL_FLAG(int, max_seconds, 600, "stop after this long (a bounded bench)");
ABSL_FLAG(bool, verbose, false, "print every prediction");

namespace {

using placement::core::testing::MappedRow;

struct Row {
  MappedRow mapped;
  std::string pool;
  std::optional<double> step_time_s;  // per optimizer step, published
};

std::unique_ptr<grpc::ClientContext> Deadline() {
  return placement::testing::Deadline(30);
}

std::string PoolName(const std::string& sku) {
  return absl::AsciiStrToLower(sku);
}

// The planner's candidate for `row` on its pool, planned with every upload
// so far in its evidence.
std::optional<placement::v1::PlacementCandidate> Predict(
    placement::v1::PlacementService::Stub& stub, const Row& row,
    int64_t min_version) {
  placement::v1::PlacePlanRequest request;
  *request.mutable_recipe() =
      placement::services::RecipeToProto(row.mapped.recipe);
  request.set_total_steps(1000);
  request.set_min_evidence_version(min_version);
  request.mutable_constraints()->add_allowed_pools(row.pool);
  placement::v1::PlacePlanResponse plan;
  grpc::Status status = stub.PlacePlan(Deadline().get(), request, &plan);
  if (!status.ok()) return std::nullopt;
  for (const auto& c : plan.candidates()) {
    if (c.pool() == row.pool) return c;
  }
  return std::nullopt;  // rejected on its own card (a published OOM-edge row)
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  namespace v1 = placement::v1;
  namespace core = placement::core;
  const absl::Time stop =
      absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_max_seconds));
  const int k = std::max(1, absl::GetFlag(FLAGS_k));

  std::vector<Row> rows;
  int line = 0, skipped = 0;
  for (const auto& csv : core::testing::ReadCsv(absl::GetFlag(FLAGS_csv))) {
    MappedRow mapped = core::testing::MapRow(csv, ++line);
    if (!mapped.skip_reason.empty() || !mapped.ran || mapped.sku_id.empty()) {
      ++skipped;
      continue;
    }
    Row row;
    row.pool = PoolName(mapped.sku_id);
    if (mapped.tokens_per_s_per_gpu && *mapped.tokens_per_s_per_gpu > 0) {
      const core::GpuSku& sku = core::testing::Sku(mapped.sku_id);
      const double tokens =
          core::EstimateStepTime(
              mapped.recipe, mapped.arch, sku,
              core::testing::PublishedRunPool(sku, mapped.recipe.gpu_count))
              .tokens_per_step;
      row.step_time_s =
          tokens / (*mapped.tokens_per_s_per_gpu * mapped.recipe.gpu_count);
    }
    row.mapped = std::move(mapped);
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    std::cerr << "learning_curve: no usable row in " << absl::GetFlag(FLAGS_csv)
              << "\n";
    return 1;
  }
  std::mt19937 rng(absl::GetFlag(FLAGS_seed));
  std::shuffle(rows.begin(), rows.end(), rng);

  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                                     grpc::InsecureChannelCredentials());
  auto catalog = v1::CatalogService::NewStub(channel);
  auto placement = v1::PlacementService::NewStub(channel);
  auto telemetry = v1::TelemetryService::NewStub(channel);
  std::map<std::string, bool> pools;
  for (const Row& row : rows) {
    if (pools[row.pool]) continue;
    pools[row.pool] = true;
    v1::CreatePoolRequest request;
    *request.mutable_pool() =
        placement::testing::TrainingPool(row.pool, row.mapped.sku_id, 8, 8);
    const core::GpuSku& sku = core::testing::Sku(row.mapped.sku_id);
    request.mutable_pool()->set_fabric(sku.HasNvlink() ? v1::FABRIC_NVLINK
                                                       : v1::FABRIC_PCIE);
    request.mutable_pool()->set_inter_node_fabric(
        v1::INTER_NODE_FABRIC_INFINIBAND);
    v1::CreatePoolResponse response;
    grpc::Status status =
        catalog->CreatePool(Deadline().get(), request, &response);
    if (!status.ok()) {
      std::cerr << "learning_curve: CreatePool " << row.pool << ": "
                << status.error_message() << "\n";
      return 1;
    }
  }
  std::printf("# %zu rows replayed (%d left out), seed %d, k %d\n", rows.size(),
              skipped, absl::GetFlag(FLAGS_seed), k);
  std::printf("%5s %6s %9s %9s %6s %9s %9s\n", "runs", "mem_n", "mem_prior",
              "mem_model", "time_n", "time_prior", "time_model");

  int64_t version = 0;
  auto checkpoint = [&](size_t seen) {
    std::vector<double> mem_prior, mem_model, time_prior, time_model;
    for (size_t i = seen; i < rows.size(); ++i) {
      const Row& row = rows[i];
      auto c = Predict(*placement, row, version);
      if (!c) continue;
      if (absl::GetFlag(FLAGS_verbose)) {
        std::printf(
            "  row %3d %-50.50s %-11s mem %6.1f prior %6.1f model %6.1f | "
            "time %7.3f prior %7.3f model %7.3f\n",
            row.mapped.line, row.mapped.label.c_str(),
            v1::EvidenceBasis_Name(c->basis()).c_str() + 15,
            row.mapped.peak_gb.value_or(0), c->prior_peak_memory_gb(),
            c->peak_memory_gb(), row.step_time_s.value_or(0),
            c->prior_step_time_s(), c->step_time_s());
      }
      if (row.mapped.peak_gb && *row.mapped.peak_gb > 0) {
        const double measured = *row.mapped.peak_gb;
        mem_prior.push_back(
            100 * std::fabs(c->prior_peak_memory_gb() / measured - 1));
        mem_model.push_back(100 *
                            std::fabs(c->peak_memory_gb() / measured - 1));
      }
      if (row.step_time_s) {
        // Error factor: max(ratio, 1 / ratio), as the calibration reports.
        auto factor = [&](double predicted) {
          const double r = predicted / *row.step_time_s;
          return std::max(r, 1 / r);
        };
        time_prior.push_back(factor(c->prior_step_time_s()));
        time_model.push_back(factor(c->step_time_s()));
      }
    }
    std::printf("%5zu %6zu %8.1f%% %8.1f%% %6zu %9.2fx %9.2fx\n", seen,
                mem_model.size(), Median(mem_prior), Median(mem_model),
                time_model.size(), Median(time_prior), Median(time_model));
    std::fflush(stdout);
  };

  checkpoint(0);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (absl::Now() > stop) {
      std::printf("# stopped after %d s (--max_seconds)\n",
                  absl::GetFlag(FLAGS_max_seconds));
      return 0;
    }
    const Row& row = rows[i];
    // The prior's figures (the analytic model's, as the planner's prior
    // is), for what the row does not publish.
    const core::GpuSku& card = core::testing::Sku(row.mapped.sku_id);
    const double prior_peak_gb =
        core::PredictPeakMemory(row.mapped.recipe, row.mapped.arch,
                                core::DefaultMemoryModelConstants())
            .total_gb;
    const double prior_step_s =
        core::EstimateStepTime(
            row.mapped.recipe, row.mapped.arch, card,
            core::testing::PublishedRunPool(card, row.mapped.recipe.gpu_count))
            .step_time_s;
    v1::UploadBenchmarkRunRequest request;
    v1::BenchmarkRun* run = request.mutable_run();
    *run = placement::testing::SucceededRun(row.pool, row.mapped.sku_id);
    *run->mutable_recipe() =
        placement::services::RecipeToProto(row.mapped.recipe);
    const int gpus = row.mapped.recipe.gpu_count;
    run->set_gpu_count(gpus);
    run->clear_node_names();
    for (int n = 0; n < (gpus + 7) / 8; ++n) {
      run->add_node_names(absl::StrCat("node-", n));
    }
    const double step = row.step_time_s.value_or(prior_step_s);
    const double peak = row.mapped.peak_gb.value_or(prior_peak_gb);
    const int64_t steps = 100;
    const int64_t end = run->end_time().seconds();
    run->mutable_start_time()->set_seconds(
        end - static_cast<int64_t>(std::ceil(step * steps)) - 1);
    run->set_steps_attempted(steps);
    run->set_steps_succeeded(steps);
    run->set_step_time_mean_seconds(step);
    run->set_step_time_p50_seconds(step);
    run->set_step_time_p95_seconds(step);
    run->set_tokens_per_second(0);
    run->set_peak_memory_gb(peak);
    if (gpus > 1) {
      run->set_collectives_opened(true);
      run->set_interconnect(core::testing::Sku(row.mapped.sku_id).HasNvlink()
                                ? v1::INTERCONNECT_NVLINK
                                : v1::INTERCONNECT_PCIE);
    }
    v1::UploadBenchmarkRunResponse response;
    grpc::Status status =
        telemetry->UploadBenchmarkRun(Deadline().get(), request, &response);
    if (!status.ok()) {
      std::printf("# row %d (%s) not uploaded: %s\n", row.mapped.line,
                  row.mapped.label.c_str(), status.error_message().c_str());
    } else {
      version = std::max(version, response.evidence_version());
    }
    if ((i + 1) % k == 0 || i + 1 == rows.size()) checkpoint(i + 1);
  }
  return 0;
}
