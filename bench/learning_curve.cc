// The learning curve (see bench/learning_curve.sh): the published fine-tuning
// measurements replayed as uploaded runs, in a random order, through the
// public API; after every k runs, every row not yet uploaded is predicted
// (PlacePlan's candidate on the row's own pool) and the median errors of the
// planner and of the analytic prior are printed against the runs seen.
//
//   learning_curve --list_groups --csv PATH
//       the publications (source groups) of the rows it replays, one a line
//   learning_curve --write_constants OUT --hold_out GROUP --csv PATH
//       fits the memory and step-time constants (core/fitting/model_fit.h, as
//       the cross-validation test does) on every usable row of the CSV whose
//       publication is not GROUP ("" fits on every row) and writes them for
//       placementd --model_constants_file (core/models/model_constants_file.h)
//   learning_curve --server H:P --csv PATH [--group GROUP]
//                  [--model_constants_file F] [--errors_out FILE]
//                  [--k 5] [--seed 1] [--max_seconds 600]
//       replays the rows (of GROUP only, when given), printing the curve and
//       appending every scored prediction to FILE; the server's prior is
//       the constants in F, with which the client also fills in what a row
//       does not publish
//   learning_curve --aggregate FILE
//       the curve over every replay appended to FILE (folds and seeds): at
//       each number of runs seen, the medians over the rows not yet
//       uploaded of every replay that had them
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
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/fitting/model_fit.h"
#include "core/models/memory_model.h"
#include "core/models/model_constants_file.h"
#include "core/models/step_time_model.h"
#include "core/recipe.h"
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
ABSL_FLAG(bool, list_groups, false,
          "print the publications of the rows replayed and exit");
ABSL_FLAG(std::string, write_constants, "",
          "fit the model constants on the rows not in --hold_out, write them "
          "here and exit");
ABSL_FLAG(std::string, hold_out, "",
          "with --write_constants: the publication left out of the fit");
ABSL_FLAG(std::string, group, "",
          "replay the rows of this publication only (all when empty)");
ABSL_FLAG(std::string, model_constants_file, "",
          "the constants the server was started with (fills in the figures "
          "a row does not publish)");
ABSL_FLAG(std::string, errors_out, "",
          "append every scored prediction here (for --aggregate)");
ABSL_FLAG(std::string, aggregate, "",
          "print the curve over every replay appended to this file and exit");

namespace {

using placement::core::testing::MappedRow;

struct Row {
  MappedRow mapped;
  std::string pool;
  std::optional<double> step_time_s;  // per optimizer step, published
  // The prior's peak of the kind the row publishes (allocated, reserved or
  // used on the device), over its device total: what a candidate's
  // predicted total is multiplied by to be scored against the row.
  double reported_over_total = 1;
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

// --write_constants: the constants fitted on every usable row whose
// publication is not `hold_out`, from the analytic priors (as the shipped
// ones are fitted on all of them).
int WriteConstants(const std::vector<MappedRow>& usable,
                   const std::string& hold_out, const std::string& path) {
  namespace core = placement::core;
  std::vector<core::MemoryObservation> memory;
  std::vector<core::StepTimeObservation> time;
  std::set<std::string> groups;
  for (const MappedRow& row : usable) {
    if (row.source_group == hold_out) continue;
    groups.insert(row.source_group);
    memory.push_back(core::testing::MemoryObservationOf(row));
    if (auto o = core::testing::StepTimeObservationOf(row)) {
      time.push_back(*o);
    }
  }
  core::ModelConstants constants;
  constants.memory =
      core::FitMemoryModel(memory, core::AnalyticMemoryModelConstants())
          .constants;
  constants.step_time =
      core::FitStepTimeModel(time, core::AnalyticStepTimeModelConstants())
          .constants;
  std::ofstream out(path);
  out << core::FormatModelConstants(
      constants,
      absl::StrCat(
          "fitted (core/fitting/model_fit.h) on ", memory.size(),
          " memory and ", time.size(), " step-time rows of ", groups.size(),
          " publications",
          hold_out.empty() ? "" : absl::StrCat(", leaving out ", hold_out)));
  if (!out.good()) {
    std::cerr << "learning_curve: cannot write " << path << "\n";
    return 1;
  }
  return 0;
}

// --aggregate: records "memory|time SEEN PRIOR MODEL" (one scored
// prediction each, over every replay appended) -> the curve at each SEEN.
int Aggregate(const std::string& path) {
  std::ifstream in(path);
  if (!in.is_open()) {
    std::cerr << "learning_curve: cannot read " << path << "\n";
    return 1;
  }
  struct Errors {
    std::vector<double> prior, model, exact;
    std::map<std::string, std::vector<double>> by_basis;  // memory, model
    // Rows whose recipe key on their SKU was not uploaded yet (another
    // publication's row of the same key is another run of "the same"
    // recipe to the service): prior and model.
    std::vector<double> distinct_prior, distinct_model;
  };
  std::map<int, Errors> memory, time;
  std::string kind, basis;
  int seen;
  double prior, model, exact;
  while (in >> kind >> seen >> prior >> model >> basis >> exact) {
    Errors& e = (kind == "memory" ? memory : time)[seen];
    e.prior.push_back(prior);
    e.model.push_back(model);
    e.exact.push_back(exact);
    e.by_basis[basis].push_back(model);
    if (basis != "MEASURED") {
      e.distinct_prior.push_back(prior);
      e.distinct_model.push_back(model);
    }
  }
  std::set<int> checkpoints;
  for (const auto& [n, e] : memory) checkpoints.insert(n);
  for (const auto& [n, e] : time) checkpoints.insert(n);
  std::printf("%5s %6s %9s %9s %6s %10s %10s\n", "runs", "mem_n", "mem_prior",
              "mem_model", "time_n", "time_prior", "time_model");
  for (int n : checkpoints) {
    const Errors& m = memory[n];
    const Errors& t = time[n];
    std::printf("%5d %6zu %8.1f%% %8.1f%%%s %6zu %9.2fx %9.2fx%s\n", n,
                m.model.size(), Median(m.prior), Median(m.model),
                Median(m.model) < Median(m.prior) ? "<" : " ", t.model.size(),
                Median(t.prior), Median(t.model),
                Median(t.model) < Median(t.prior) ? "<" : " ");
  }
  std::printf(
      "# memory by the candidate's basis (rows, median |error|), and the "
      "planner's median if MEASURED candidates carried the exact peak\n");
  for (int n : checkpoints) {
    std::printf("%5d", n);
    for (const auto& [name, errors] : memory[n].by_basis) {
      std::printf("  %s %zu %.1f%%", name.c_str(), errors.size(),
                  Median(errors));
    }
    std::printf("  | exact peaks %.1f%%\n", Median(memory[n].exact));
  }
  std::printf(
      "# memory over the rows whose recipe key was not uploaded yet (rows, "
      "prior, planner)\n");
  for (int n : checkpoints) {
    const Errors& m = memory[n];
    std::printf(
        "%5d %6zu %8.1f%% %8.1f%%%s\n", n, m.distinct_model.size(),
        Median(m.distinct_prior), Median(m.distinct_model),
        Median(m.distinct_model) < Median(m.distinct_prior) ? "<" : " ");
  }
  return 0;
}

// --model_constants_file: the server's prior, installed so that the client
// fills in what a row does not publish with the same figures. False (after
// saying why) when the file does not parse.
bool InstallConstantsFile(const std::string& path) {
  namespace core = placement::core;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<core::ModelConstants> constants =
      core::ParseModelConstants(text.str(), core::CurrentModelConstants());
  if (!constants.ok()) {
    std::cerr << "learning_curve: " << path << ": " << constants.status()
              << "\n";
    return false;
  }
  core::InstallModelConstants(*constants);
  return true;
}

// A replayable row: its pool, the prior's ratio of the peak it publishes
// and its step time.
Row RowOf(MappedRow mapped) {
  namespace core = placement::core;
  Row row;
  row.pool = PoolName(mapped.sku_id);
  const core::MemoryBreakdown prior_memory = core::PredictPeakMemory(
      mapped.recipe, mapped.arch, core::DefaultMemoryModelConstants());
  row.reported_over_total = prior_memory.reported_gb / prior_memory.total_gb;
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
  return row;
}

// The CSV's rows: those the fit may use, and those replayed.
struct Dataset {
  std::vector<Row> rows;              // replayed (of `group` only, when given)
  std::vector<MappedRow> usable;      // what the fit may use
  int skipped = 0;                    // not replayable
  std::map<std::string, int> groups;  // replayable rows per publication
};

Dataset LoadRows(const std::string& csv_path, const std::string& group) {
  namespace core = placement::core;
  Dataset data;
  int line = 0;
  for (const auto& csv : core::testing::ReadCsv(csv_path)) {
    MappedRow mapped = core::testing::MapRow(csv, ++line);
    if (mapped.skip_reason.empty()) data.usable.push_back(mapped);
    if (!mapped.skip_reason.empty() || !mapped.ran || mapped.sku_id.empty()) {
      ++data.skipped;
      continue;
    }
    ++data.groups[mapped.source_group];
    if (!group.empty() && mapped.source_group != group) continue;
    data.rows.push_back(RowOf(std::move(mapped)));
  }
  return data;
}

// Each row's pool, once: 8 GPUs a node, NVLink when the card has it,
// InfiniBand between nodes. False (after saying why) when one is refused.
bool CreatePools(placement::v1::CatalogService::Stub& catalog,
                 const std::vector<Row>& rows) {
  namespace v1 = placement::v1;
  namespace core = placement::core;
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
        catalog.CreatePool(Deadline().get(), request, &response);
    if (!status.ok()) {
      std::cerr << "learning_curve: CreatePool " << row.pool << ": "
                << status.error_message() << "\n";
      return false;
    }
  }
  return true;
}

// The run a row is uploaded as: its recipe on its pool, 100 steps of its
// published step time and its published peak; the prior's figures (the
// analytic model's, as the planner's prior is) for what it does not
// publish.
placement::v1::UploadBenchmarkRunRequest UploadRequest(const Row& row) {
  namespace v1 = placement::v1;
  namespace core = placement::core;
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
  return request;
}

// The scored predictions of one checkpoint, over the rows not yet uploaded.
struct Scores {
  std::vector<double> mem_prior, mem_model, time_prior, time_model;
  std::vector<std::string> mem_basis;
  std::vector<double> mem_exact;
};

void PrintPrediction(const Row& row,
                     const placement::v1::PlacementCandidate& c) {
  std::printf(
      "  row %3d %-50.50s %-11s mem %6.1f prior %6.1f model %6.1f | "
      "time %7.3f prior %7.3f model %7.3f\n",
      row.mapped.line, row.mapped.label.c_str(),
      placement::v1::EvidenceBasis_Name(c.basis()).c_str() + 15,
      row.mapped.peak_gb.value_or(0), c.prior_peak_memory_gb(),
      c.peak_memory_gb(), row.step_time_s.value_or(0), c.prior_step_time_s(),
      c.step_time_s());
}

// Step time, as an error factor: max(ratio, 1 / ratio), as the calibration
// reports.
void ScoreTime(const Row& row, const placement::v1::PlacementCandidate& c,
               Scores* scores) {
  auto factor = [&](double predicted) {
    const double r = predicted / *row.step_time_s;
    return std::max(r, 1 / r);
  };
  scores->time_prior.push_back(factor(c.prior_step_time_s()));
  scores->time_model.push_back(factor(c.step_time_s()));
}

void AppendErrors(size_t seen, const Scores& s, std::ofstream& out) {
  for (size_t j = 0; j < s.mem_model.size(); ++j) {
    out << "memory " << seen << " " << s.mem_prior[j] << " " << s.mem_model[j]
        << " " << s.mem_basis[j] << " " << s.mem_exact[j] << "\n";
  }
  for (size_t j = 0; j < s.time_model.size(); ++j) {
    out << "time " << seen << " " << s.time_prior[j] << " " << s.time_model[j]
        << " - " << s.time_model[j] << "\n";
  }
  out.flush();
}

void PrintCheckpoint(size_t seen, const Scores& s) {
  std::printf("%5zu %6zu %8.1f%% %8.1f%% %6zu %9.2fx %9.2fx\n", seen,
              s.mem_model.size(), Median(s.mem_prior), Median(s.mem_model),
              s.time_model.size(), Median(s.time_prior), Median(s.time_model));
  std::fflush(stdout);
}

// The replay: the rows uploaded in their order, every row not yet uploaded
// predicted and scored after every k.
class Replay {
 public:
  Replay(const std::vector<Row>& rows,
         placement::v1::PlacementService::Stub& placement,
         placement::v1::TelemetryService::Stub& telemetry,
         std::ofstream& errors_out)
      : rows_(rows),
        placement_(placement),
        telemetry_(telemetry),
        errors_out_(errors_out) {}

  // Returns the exit code: 0, also when --max_seconds stops it early.
  int Run(int k, absl::Time stop) {
    Checkpoint(0);
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (absl::Now() > stop) {
        std::printf("# stopped after %d s (--max_seconds)\n",
                    absl::GetFlag(FLAGS_max_seconds));
        return 0;
      }
      Upload(rows_[i]);
      if ((i + 1) % k == 0 || i + 1 == rows_.size()) Checkpoint(i + 1);
    }
    return 0;
  }

 private:
  void Upload(const Row& row) {
    const placement::v1::UploadBenchmarkRunRequest request = UploadRequest(row);
    placement::v1::UploadBenchmarkRunResponse response;
    grpc::Status status =
        telemetry_.UploadBenchmarkRun(Deadline().get(), request, &response);
    if (!status.ok()) {
      std::printf("# row %d (%s) not uploaded: %s\n", row.mapped.line,
                  row.mapped.label.c_str(), status.error_message().c_str());
    } else {
      version_ = std::max(version_, response.evidence_version());
    }
  }

  void Checkpoint(size_t seen) {
    Scores scores;
    for (size_t i = seen; i < rows_.size(); ++i) {
      const Row& row = rows_[i];
      auto c = Predict(placement_, row, version_);
      if (!c) continue;
      if (absl::GetFlag(FLAGS_verbose)) PrintPrediction(row, *c);
      if (row.mapped.peak_gb && *row.mapped.peak_gb > 0) {
        ScoreMemory(seen, row, *c, &scores);
      }
      if (row.step_time_s) ScoreTime(row, *c, &scores);
    }
    if (errors_out_.is_open()) AppendErrors(seen, scores, errors_out_);
    PrintCheckpoint(seen, scores);
  }

  // Scored as the cross-validation scores the model: the figure of the kind
  // the row publishes. A prediction (the prior, or the prior x the fleet's
  // memory scale) is a device total, so it is converted with the prior's
  // own ratio; a measured or transferred peak is a figure of the kind the
  // runs uploaded, as it stands.
  void ScoreMemory(size_t seen, const Row& row,
                   const placement::v1::PlacementCandidate& c,
                   Scores* scores) const {
    namespace v1 = placement::v1;
    const double measured = *row.mapped.peak_gb;
    const double prior = c.prior_peak_memory_gb() * row.reported_over_total;
    const bool predicted = c.basis() == v1::EVIDENCE_BASIS_ESTIMATED;
    const double model =
        c.peak_memory_gb() * (predicted ? row.reported_over_total : 1);
    scores->mem_prior.push_back(100 * std::fabs(prior / measured - 1));
    scores->mem_model.push_back(100 * std::fabs(model / measured - 1));
    scores->mem_basis.push_back(v1::EvidenceBasis_Name(c.basis()).substr(15));
    double exact = model;
    if (c.basis() == v1::EVIDENCE_BASIS_MEASURED) {
      const double peak =
          ExactMeasuredPeak(seen, c.recipe_key(), row.mapped.sku_id);
      if (peak > 0) exact = peak;
    }
    scores->mem_exact.push_back(100 * std::fabs(exact / measured - 1));
  }

  // What exact peaks would give a MEASURED candidate: the largest published
  // peak of the uploaded rows of its recipe key on its SKU (the evidence's
  // p95 is capped at the largest peak seen; with the few runs of a key here
  // it is that peak), where the evidence reads it back from a histogram
  // bucket 12% wide.
  double ExactMeasuredPeak(size_t seen, const std::string& key,
                           const std::string& sku) const {
    double peak = 0;
    for (size_t j = 0; j < seen; ++j) {
      const Row& up = rows_[j];
      if (up.mapped.sku_id == sku && up.mapped.peak_gb &&
          placement::core::RecipeKey(up.mapped.recipe) == key) {
        peak = std::max(peak, *up.mapped.peak_gb);
      }
    }
    return peak;
  }

  const std::vector<Row>& rows_;
  placement::v1::PlacementService::Stub& placement_;
  placement::v1::TelemetryService::Stub& telemetry_;
  std::ofstream& errors_out_;
  int64_t version_ = 0;
};

// Replays `rows` (in their order) against --server: their pools, then the
// curve. Returns the exit code.
int ReplayRows(const std::vector<Row>& rows, int skipped,
               const std::string& group, int k, absl::Time stop) {
  namespace v1 = placement::v1;
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                                     grpc::InsecureChannelCredentials());
  auto catalog = v1::CatalogService::NewStub(channel);
  auto placement = v1::PlacementService::NewStub(channel);
  auto telemetry = v1::TelemetryService::NewStub(channel);
  if (!CreatePools(*catalog, rows)) return 1;
  std::printf("# %zu rows replayed (%d left out%s%s), seed %d, k %d\n",
              rows.size(), skipped, group.empty() ? "" : "; publication ",
              group.c_str(), absl::GetFlag(FLAGS_seed), k);
  std::ofstream errors_out;
  if (const std::string path = absl::GetFlag(FLAGS_errors_out); !path.empty()) {
    errors_out.open(path, std::ios::app);
    if (!errors_out.is_open()) {
      std::cerr << "learning_curve: cannot append to " << path << "\n";
      return 1;
    }
  }
  std::printf("%5s %6s %9s %9s %6s %9s %9s\n", "runs", "mem_n", "mem_prior",
              "mem_model", "time_n", "time_prior", "time_model");
  return Replay(rows, *placement, *telemetry, errors_out).Run(k, stop);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (const std::string path = absl::GetFlag(FLAGS_aggregate); !path.empty()) {
    return Aggregate(path);
  }
  if (const std::string path = absl::GetFlag(FLAGS_model_constants_file);
      !path.empty() && !InstallConstantsFile(path)) {
    return 1;
  }
  const absl::Time stop =
      absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_max_seconds));
  const int k = std::max(1, absl::GetFlag(FLAGS_k));
  const std::string group = absl::GetFlag(FLAGS_group);
  Dataset data = LoadRows(absl::GetFlag(FLAGS_csv), group);
  if (absl::GetFlag(FLAGS_list_groups)) {
    for (const auto& [name, count] : data.groups) {
      std::printf("%s\n", name.c_str());
    }
    return 0;
  }
  if (const std::string path = absl::GetFlag(FLAGS_write_constants);
      !path.empty()) {
    return WriteConstants(data.usable, absl::GetFlag(FLAGS_hold_out), path);
  }
  if (data.rows.empty()) {
    std::cerr << "learning_curve: no usable row in " << absl::GetFlag(FLAGS_csv)
              << "\n";
    return 1;
  }
  std::mt19937 rng(absl::GetFlag(FLAGS_seed));
  std::shuffle(data.rows.begin(), data.rows.end(), rng);
  return ReplayRows(data.rows, data.skipped, group, k, stop);
}
