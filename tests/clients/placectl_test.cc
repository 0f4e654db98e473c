// placectl plan / plans end to end: a real placementd process on a real
// PostgreSQL, pools and runs set up through the gRPC API, then the placectl
// binary run as an operator or an orchestrator would run it.
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::ApiClient;
using ::placement::testing::Lora8b;
using ::placement::testing::Measured;
using ::placement::testing::NewUuid;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::PlanFor;
using ::placement::testing::RunCommand;
using ::placement::testing::TestDatabase;
using ::placement::testing::TrainingPool;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kL40s[] = "L40S-PCIE-48GB";
constexpr char kA100[] = "A100-SXM4-80GB";

// The recipe the flags below describe: Lora8b().
constexpr char kLora8bFlags[] =
    "plan --model Llama-3.1-8B --method lora --lora_rank 16 "
    "--target_modules all-linear --seq_len 2048 --micro_batch 2 "
    "--checkpointing --flash_attention --steps 10000 --team ml-platform";

// The same plan for 40,000 steps: an unmeasured runner-up is then worth a
// measurement run (at 10,000 it would not save twice the run's cost).
std::string Lora8bFlagsForABakeOff() {
  return absl::StrReplaceAll(kLora8bFlags,
                             {{"--steps 10000", "--steps 40000"}});
}

std::vector<std::string> CandidatePools(const v1::PlacePlanResponse& plan) {
  std::vector<std::string> pools;
  for (const auto& c : plan.candidates()) pools.push_back(c.pool());
  return pools;
}

template <typename Message>
Message FromJson(const std::string& json) {
  Message message;
  auto status = google::protobuf::util::JsonStringToMessage(json, &message);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json;
  return message;
}

// The table row after the header line starting with `header`, cells split on
// runs of spaces; empty when there is none.
std::vector<std::string> RowAfterHeader(const std::string& output,
                                        const std::string& header, int row) {
  std::vector<std::string> lines = absl::StrSplit(output, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], header)) continue;
    if (i + 1 + row >= lines.size()) return {};
    std::vector<std::string> cells;
    for (absl::string_view cell :
         absl::StrSplit(lines[i + 1 + row], absl::ByString("  "),
                        absl::SkipWhitespace())) {
      cells.emplace_back(absl::StripAsciiWhitespace(cell));
    }
    return cells;
  }
  return {};
}

class PlacectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.Migrate();
    auto process = PlacementdProcess::Start(db_.url());
    ASSERT_TRUE(process.ok()) << process.status();
    placementd_ = *std::move(process);
    ASSERT_TRUE(placementd_->WaitForHealth(true, absl::Seconds(10)));
    client_ = std::make_unique<ApiClient>(placementd_->channel());
    char dir[] = "/tmp/placectl-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }

  void TearDown() override {
    if (!dir_.empty()) RunCommand("rm -rf " + dir_);
  }

  // Runs placectl against this test's placementd; returns the exit code,
  // stdout in `out` (with stderr too when `with_stderr`).
  int Placectl(const std::string& args, std::string* out,
               bool with_stderr = false) {
    out->clear();
    const std::string command =
        absl::StrCat(PLACECTL_PATH, " --server 127.0.0.1:", placementd_->port(),
                     " ", args, with_stderr ? " 2>&1" : " 2>/dev/null");
    const int code = RunCommand(command, out);
    std::cerr << "$ placectl " << args << "  => exit " << code << "\n" << *out;
    return code;
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = absl::StrCat(dir_, "/", name);
    std::ofstream(path) << text;
    return path;
  }

  // One L40S training pool, visible to plans.
  void OneL40sPool() {
    client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8, 1'200'000));
    client_->PlanUntil(PlanFor(Lora8b()), [](const v1::PlacePlanResponse& p) {
      return p.candidates_size() == 1;
    });
  }

  TestDatabase db_;
  std::unique_ptr<PlacementdProcess> placementd_;
  std::unique_ptr<ApiClient> client_;
  std::string dir_;
};

// The guide's small LoRA: measured cheaper per successful step on the L40S,
// the A100 over-bought, the serving pool never a candidate.
TEST_F(PlacectlTest, PlanFromFlagsPrintsTheRankedTableReasonsAndRejections) {
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8, 2'500'000));
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8, 1'200'000));
  v1::Pool serving = TrainingPool("h100-serve", "H100-SXM5-80GB", 1, 8);
  serving.set_purpose(v1::POOL_PURPOSE_SERVING);
  client_->CreatePool(serving);
  for (int i = 0; i < 3; ++i) {
    client_->UploadRun("l40s-train", kL40s, Lora8b(), 10, 10'000, 24);
    // 5 GPU-hours on one A100 ($12.50): the unmeasured 2-GPU tensor
    // parallel layout wins only at its optimistic edge, so the measured
    // layout stays (as in the guide test).
    client_->UploadRun("a100-train", kA100, Lora8b(), 5, 10'000, 25);
  }
  const v1::PlacePlanResponse expected =
      client_->PlanUntil(PlanFor(Lora8b()), [](const v1::PlacePlanResponse& p) {
        return Measured("l40s-train", 3)(p) && Measured("a100-train", 3)(p);
      });

  std::string out;
  ASSERT_EQ(Placectl(kLora8bFlags, &out), 0);
  // Header: plan id, recipe key, steps, settings.
  EXPECT_THAT(out, HasSubstr(absl::StrCat("recipe ", expected.recipe_key())));
  EXPECT_THAT(out, HasSubstr("10,000 steps"));
  EXPECT_THAT(out, HasSubstr("Llama-3.1-8B, lora, rank 16"));
  // Ranked: the L40S first at 10 GPU-hours x 1.20 (and the rework its
  // failure rate's prior expects: a hundredth of an hour), then the A100.
  const std::vector<std::string> first = RowAfterHeader(out, "RANK", 0);
  ASSERT_GE(first.size(), 17u) << out;
  EXPECT_EQ(first[0], "1");
  EXPECT_EQ(first[1], "l40s-train");
  EXPECT_EQ(first[2], kL40s);
  EXPECT_EQ(first[4], "single");  // the parallelism
  EXPECT_EQ(first[5], "fits");
  // Expected GPU-hours and the cost at the internal rate, as the API's.
  EXPECT_EQ(first[11], "10.01");
  EXPECT_EQ(
      first[11],
      absl::StrFormat("%.2f", expected.candidates(0).expected_gpu_hours()));
  EXPECT_EQ(first[12], "12.01");
  EXPECT_EQ(first[15], "measured (3 runs)");
  const std::vector<std::string> second = RowAfterHeader(out, "RANK", 1);
  ASSERT_GE(second.size(), 2u);
  EXPECT_EQ(second[0], "2");
  EXPECT_EQ(second[1], "a100-train");
  // Reasons and warnings per candidate.
  EXPECT_THAT(out, HasSubstr("#1 l40s-train (L40S-PCIE-48GB x1, fits)"));
  EXPECT_THAT(out, HasSubstr("    recipe rk1-"));
  EXPECT_THAT(out, HasSubstr("reason:  fit_without_offload"));
  EXPECT_THAT(out, HasSubstr("WARNING: over_bought"));
  // The serving pool, with the rule that rejected it.
  const std::vector<std::string> rejected = RowAfterHeader(out, "POOL", 0);
  ASSERT_GE(rejected.size(), 3u) << out;
  EXPECT_EQ(rejected[0], "h100-serve");
  EXPECT_EQ(rejected[2], "training_stays_off_serving_pools");
  EXPECT_THAT(out, Not(HasSubstr("BAKE-OFF")));  // both SKUs are measured

  // --json for orchestrators: the PlacePlanResponse, same ranking and costs.
  ASSERT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --json"), &out), 0);
  const auto plan = FromJson<v1::PlacePlanResponse>(out);
  EXPECT_FALSE(plan.plan_id().empty());
  EXPECT_EQ(plan.recipe_key(), expected.recipe_key());
  ASSERT_EQ(CandidatePools(plan), CandidatePools(expected));
  for (int i = 0; i < plan.candidates_size(); ++i) {
    EXPECT_EQ(plan.candidates(i).expected_cost_micros(),
              expected.candidates(i).expected_cost_micros());
    EXPECT_EQ(plan.candidates(i).basis(), v1::EVIDENCE_BASIS_MEASURED);
  }
  ASSERT_EQ(plan.rejections_size(), 1);
  EXPECT_EQ(plan.rejections(0).rule(), "training_stays_off_serving_pools");
}

// Two unmeasured pools: the job measures the first; the runner-up is
// proposed for a short run because measuring it is expected to save more
// than twice the run's cost over 40,000 steps, and the table says so in
// money.
TEST_F(PlacectlTest, UnmeasuredPlanShowsTheBakeOffAndTheEvalRequirement) {
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8));
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client_->PlanUntil(PlanFor(Lora8b()), [](const v1::PlacePlanResponse& p) {
    return p.candidates_size() == 2;
  });
  const std::string flags = absl::StrCat(Lora8bFlagsForABakeOff(),
                                         " --serving_sku L40S-PCIE-48GB "
                                         "--serving_precision fp8");
  std::string out;
  ASSERT_EQ(Placectl(flags + " --json", &out), 0);
  const auto plan = FromJson<v1::PlacePlanResponse>(out);
  ASSERT_EQ(plan.candidates_size(), 2);
  ASSERT_TRUE(plan.has_bake_off()) << out;
  ASSERT_EQ(plan.bake_off().runs_size(), 1);
  const v1::BakeOffRun& run = plan.bake_off().runs(0);

  ASSERT_EQ(Placectl(flags, &out), 0);
  EXPECT_EQ(RowAfterHeader(out, "RANK", 0).at(15), "estimated");
  // One run: a measurement run, of the runner-up only.
  EXPECT_THAT(out, HasSubstr("MEASUREMENT RUN before standardizing"));
  EXPECT_THAT(out, Not(HasSubstr("BAKE-OFF")));
  EXPECT_THAT(out, HasSubstr("EVAL REQUIRED: "));
  // No eval was uploaded: the requirement is missing, in the plan and in
  // the candidate table's last column.
  EXPECT_THAT(out, HasSubstr("EVAL: missing: no eval of "));
  EXPECT_THAT(out, HasSubstr(" on L40S-PCIE-48GB in FP8"));
  EXPECT_EQ(RowAfterHeader(out, "RANK", 0).at(17), "missing");
  // No pool reported its state: the start and finish are unknown, not now.
  EXPECT_EQ(RowAfterHeader(out, "RANK", 0).at(18), "unknown");
  const std::vector<std::string> row = RowAfterHeader(out, "  POOL", 0);
  // POOL SKU GPUS RECIPE STEPS COST EXPECTED-SAVING CHANCE WHY.
  ASSERT_EQ(row.size(), 9u) << out;
  EXPECT_EQ(row[0], plan.candidates(1).pool());
  EXPECT_EQ(row[1], plan.candidates(1).sku());
  EXPECT_EQ(row[4], absl::StrFormat("%d", run.steps()));
  EXPECT_GE(run.steps(), 50);
  for (int money : {5, 6}) {
    EXPECT_TRUE(std::regex_match(row[money], std::regex(R"(\d+\.\d\d)")))
        << "column " << money << ": " << row[money];
  }
  EXPECT_LT(std::stod(row[5]), std::stod(row[6]));  // cost below the saving
  EXPECT_EQ(row[7], absl::StrFormat("%.0f%%", 100 * run.win_probability()));
  EXPECT_EQ(row[8], "unmeasured");
  EXPECT_THAT(
      out, HasSubstr(absl::StrCat("  ", run.pool(), ": ", run.reason(), "\n")));
  EXPECT_THAT(out, HasSubstr("  expected demand: 40,000 steps"));
  // Each candidate's cost make-up and its pool's failure rate.
  EXPECT_THAT(out, HasSubstr("    cost:    start-up "));
  EXPECT_THAT(out, HasSubstr("(prior) + 40,000 steps x "));
  EXPECT_THAT(out, HasSubstr("    failure: "));
  EXPECT_THAT(out, HasSubstr("from 0 failures over 0.0 run-hours"));
}

// A team's floor on a metric, by label: a plan served in FP8 is short of it
// (no eval reports the metric) until the criterion is deleted.
TEST_F(PlacectlTest, EvalCriteriaAreSetListedAndHoldPlansShort) {
  v1::Pool pool = TrainingPool("l40s-train", kL40s, 1, 8, 1'200'000);
  (*pool.mutable_labels())["team"] = "nlp";
  client_->CreatePool(pool);
  std::string out;
  ASSERT_EQ(Placectl("eval-criteria set nlp-floor --label team=nlp "
                     "--metric exact_match --min_score 0.62",
                     &out),
            0);
  EXPECT_EQ(out,
            "eval criterion nlp-floor: exact_match >= 0.62 for label "
            "team=nlp\n");
  ASSERT_EQ(Placectl("eval-criteria list", &out), 0);
  EXPECT_EQ(RowAfterHeader(out, "NAME", 0),
            (std::vector<std::string>{"nlp-floor", "label team=nlp",
                                      "exact_match", ">= 0.62"}));
  // Refused, field named, exit 1: no selector.
  EXPECT_EQ(
      Placectl("eval-criteria set bad --metric m --min_score 1", &out, true),
      1);
  EXPECT_THAT(out, HasSubstr("criterion.pool"));
  EXPECT_EQ(Placectl("eval-criteria set bad --pool l40s-train --metric m "
                     "--min_score high",
                     &out, true),
            2);

  const std::string flags = absl::StrCat(kLora8bFlags,
                                         " --serving_sku L40S-PCIE-48GB "
                                         "--serving_precision fp8");
  ASSERT_EQ(Placectl(flags, &out), 0);
  EXPECT_THAT(out, HasSubstr("EVAL: short on L40S-PCIE-48GB in fp8: "
                             "nlp-floor: no exact_match eval, needs >= 0.62"));
  EXPECT_EQ(RowAfterHeader(out, "RANK", 0).at(17), "short");

  ASSERT_EQ(Placectl("eval-criteria delete nlp-floor", &out), 0);
  EXPECT_EQ(out, "deleted nlp-floor\n");
  ASSERT_EQ(Placectl(flags, &out), 0);
  EXPECT_THAT(out, HasSubstr("EVAL: missing: no eval of "));
}

// The guide's method through placectl: the bake-off's progress, a standard
// refused before its proof and written after, listed, then retired.
TEST_F(PlacectlTest, BakeOffStatusThenAStandardWrittenAndRetired) {
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8));
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client_->PlanUntil(PlanFor(Lora8b()), [](const v1::PlacePlanResponse& p) {
    return p.candidates_size() == 2;
  });
  std::string out;
  ASSERT_EQ(Placectl(absl::StrCat(Lora8bFlagsForABakeOff(), " --json"), &out),
            0);
  const auto plan = FromJson<v1::PlacePlanResponse>(out);
  ASSERT_TRUE(plan.has_bake_off());
  ASSERT_EQ(plan.bake_off().runs_size(), 1);
  const v1::BakeOffRun& proposed = plan.bake_off().runs(0);
  const std::string status =
      absl::StrCat("bakeoff ", plan.plan_id(), " status");
  ASSERT_EQ(Placectl(status, &out), 0);
  EXPECT_THAT(out, HasSubstr(": 0 of 1 complete"));
  EXPECT_EQ(RowAfterHeader(out, "POOL", 0).at(0), proposed.pool());
  const std::string write =
      absl::StrCat("standards write --plan ", plan.plan_id(), " --pool ",
                   proposed.pool(), " --reason 'cheaper per step'");
  EXPECT_EQ(Placectl(write, &out, /*with_stderr=*/true), 1);
  EXPECT_THAT(out, HasSubstr("bake-off is 0 of 1 complete"));

  ApiClient::TimedRun run;
  run.pool = proposed.pool();
  run.sku = proposed.sku();
  for (const v1::PlacementCandidate& c : plan.candidates()) {
    if (c.pool() == proposed.pool()) run.recipe = c.recipe();
  }
  run.steps_attempted = run.steps_succeeded = proposed.steps();
  run.plan_id = plan.plan_id();
  client_->UploadTimedRun(run);
  ASSERT_EQ(Placectl(status, &out), 0);
  EXPECT_THAT(out, HasSubstr(": 1 of 1 complete"));
  EXPECT_THAT(out, HasSubstr("verdict: "));
  ASSERT_EQ(Placectl(write, &out), 0);
  EXPECT_THAT(out, HasSubstr(absl::StrCat("  pool:       ", proposed.pool())));
  ASSERT_EQ(Placectl("standards list", &out), 0);
  const std::vector<std::string> row = RowAfterHeader(out, "ID", 0);
  ASSERT_FALSE(row.empty()) << out;
  EXPECT_EQ(row.back(), "active");
  ASSERT_EQ(Placectl(absl::StrCat("standards retire ", row[0],
                                  " --reason 'the graphs say otherwise'"),
                     &out),
            0);
  EXPECT_THAT(out, HasSubstr("(retired)"));
  ASSERT_EQ(Placectl("standards list", &out), 0);
  EXPECT_THAT(out, HasSubstr("(no standard)"));
  EXPECT_EQ(Placectl("bakeoff not-a-plan status", &out), 1);
  EXPECT_EQ(Placectl(absl::StrCat("bakeoff ", plan.plan_id()), &out), 2);
}

// A 1B full fine-tune (micro-batch 2) over two A100-80GB, measured with
// activation checkpointing on (one 1,000-step run, at its estimate) and
// asked with it left open: the job runs it without checkpointing, never run
// there, and the pool ranks at the measured configuration's cost. placectl
// says so in the BASIS column and in a line of the candidate's own.
TEST_F(PlacectlTest, AJobThatMeasuresAnotherConfigurationSaysSo) {
  client_->CreatePool(TrainingPool("a100-train", kA100, 1, 8, 2'000'000));
  v1::PlacePlanRequest request;
  v1::Recipe* open = request.mutable_recipe();
  open->set_model("Llama-3.2-1B");
  open->set_method(v1::FINE_TUNE_METHOD_FULL);
  open->set_sequence_length(4096);
  open->set_micro_batch_size(2);
  open->set_precision(v1::PRECISION_BF16);
  open->set_fp32_master_weights(true);
  open->set_optimizer(v1::OPTIMIZER_ADAMW);
  open->set_gpu_count(2);
  open->set_parallelism(v1::PARALLELISM_DDP);
  request.set_total_steps(1000);
  request.set_team("ml-platform");

  v1::PlacePlanRequest on = request;
  on.mutable_recipe()->set_activation_checkpointing_mode(
      v1::ACTIVATION_CHECKPOINTING_ON);
  const v1::PlacementCandidate estimate =
      client_
          ->PlanUntil(on,
                      [](const v1::PlacePlanResponse& p) {
                        return p.candidates_size() == 1;
                      })
          .candidates(0);
  ApiClient::TimedRun run;
  run.pool = "a100-train";
  run.sku = kA100;
  run.recipe = estimate.recipe();
  run.steps_attempted = run.steps_succeeded = 1000;
  run.step_s = estimate.expected_gpu_hours() * 3600 / 2 / 1000;
  run.peak_gb = estimate.peak_memory_gb();
  client_->UploadTimedRun(run);
  client_->PlanUntil(on, Measured("a100-train", 1));

  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(request, &json).ok());
  std::string out;
  ASSERT_EQ(
      Placectl(absl::StrCat("plan --recipe ", WriteFile("open.json", json)),
               &out),
      0);
  const std::vector<std::string> row = RowAfterHeader(out, "RANK", 0);
  ASSERT_GE(row.size(), 16u) << out;
  EXPECT_EQ(row[1], "a100-train");
  EXPECT_EQ(row[15], "transferred (1 run), explored");
  EXPECT_THAT(out, HasSubstr("checkpointing off"));
  EXPECT_THAT(out, HasSubstr(absl::StrCat(
                       "explores: the job runs this configuration in place of "
                       "recipe ",
                       estimate.recipe_key(), ", measured here at ")));
  EXPECT_THAT(out, HasSubstr("(the pool ranks at that)"));
  EXPECT_THAT(out, HasSubstr("the job measures this configuration"));
}

// Long: every way placectl takes a recipe (YAML, JSON, short enum names,
// standard input, flags over a file, a file's constraints, bad files)
// held against the one recipe key the flags give.
TEST_F(PlacectlTest, YamlAndJsonRecipeFilesGiveTheSameRecipeKeyAsFlags) {
  OneL40sPool();
  std::string out;
  ASSERT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --json"), &out), 0);
  const std::string key = FromJson<v1::PlacePlanResponse>(out).recipe_key();
  ASSERT_FALSE(key.empty());

  const std::string yaml = WriteFile("lora.yaml", R"(# an 8B LoRA
recipe:
  model: Llama-3.1-8B
  method: lora
  lora_rank: 16
  target_modules: [all-linear]
  sequence_length: 2048
  micro_batch_size: 2
  activation_checkpointing: yes
  flash_attention: true
total_steps: 10000
constraints:
  objective: cost
  deadline: 48h
  required_labels: {team: ml-platform}
team: ml-platform
)");
  const std::string json = WriteFile("lora.json", R"({
  "recipe": {
    "model": "Llama-3.1-8B",
    "method": "FINE_TUNE_METHOD_LORA",
    "loraRank": 16,
    "targetModules": ["all-linear"],
    "sequenceLength": "2048",
    "microBatchSize": 2,
    "activationCheckpointing": true,
    "flashAttention": true
  },
  "totalSteps": "10000",
  "constraints": {"objective": "OBJECTIVE_LOWEST_COST", "maxGpus": 8},
  "team": "ml-platform"
})");
  // The enums by their short names say the same.
  const std::string enums = WriteFile("enums.yaml", R"(recipe:
  model: Llama-3.1-8B
  method: lora
  lora_rank: 16
  target_modules: all-linear
  sequence_length: 2048
  micro_batch_size: 2
  activation_checkpointing: on
  attention: flash
total_steps: 10000
team: ml-platform
)");
  for (const std::string& file : {yaml, json, enums}) {
    ASSERT_EQ(Placectl(absl::StrCat("plan --recipe ", file, " --json"), &out),
              0);
    const auto plan = FromJson<v1::PlacePlanResponse>(out);
    EXPECT_EQ(plan.recipe_key(), key) << file;
    EXPECT_EQ(CandidatePools(plan), std::vector<std::string>{"l40s-train"});
  }

  // Standard input, for orchestrators that pipe the request.
  ASSERT_EQ(Placectl(absl::StrCat("plan --recipe=- --json < ", json), &out), 0);
  EXPECT_EQ(FromJson<v1::PlacePlanResponse>(out).recipe_key(), key);

  // Flags override the file's fields.
  ASSERT_EQ(Placectl(absl::StrCat("plan --recipe ", yaml,
                                  " --seq_len 4096 --lora_rank 32 --json"),
                     &out),
            0);
  auto plan = FromJson<v1::PlacePlanResponse>(out);
  EXPECT_NE(plan.recipe_key(), key);
  EXPECT_EQ(plan.recipe().sequence_length(), 4096);
  EXPECT_EQ(plan.recipe().lora_rank(), 32);
  EXPECT_EQ(plan.recipe().model(), "Llama-3.1-8B");
  // The file's constraints count: no pool carries this label (exit 3: no
  // candidate).
  ASSERT_EQ(Placectl(absl::StrCat("plan --recipe ", yaml,
                                  " --labels region=eu --json"),
                     &out),
            3);
  plan = FromJson<v1::PlacePlanResponse>(out);
  EXPECT_EQ(plan.candidates_size(), 0);
  ASSERT_EQ(plan.rejections_size(), 1);

  // Unknown fields and bad values are errors naming the field.
  const std::string typo = WriteFile("typo.yaml", R"(recipe:
  model: Llama-3.1-8B
  lora_rnk: 16
total_steps: 10
)");
  EXPECT_EQ(Placectl(absl::StrCat("plan --recipe ", typo), &out, true), 2);
  EXPECT_THAT(out, HasSubstr("recipe.lora_rnk (line 3): unknown field"));
  const std::string bad_enum =
      WriteFile("bad.json", R"({"recipe": {"method": "lorax"}})");
  EXPECT_EQ(Placectl(absl::StrCat("plan --recipe ", bad_enum), &out, true), 2);
  EXPECT_THAT(out, HasSubstr("recipe.method"));
  EXPECT_THAT(out, HasSubstr("lorax"));
  EXPECT_EQ(Placectl(absl::StrCat("plan --recipe ", dir_, "/missing.yaml"),
                     &out, true),
            2);
}

TEST_F(PlacectlTest, NewRecipeFlagsGiveTheKeyOfTheFormerOnes) {
  OneL40sPool();
  std::string out;
  ASSERT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --json"), &out), 0);
  const std::string key = FromJson<v1::PlacePlanResponse>(out).recipe_key();
  const std::string flags =
      "plan --model Llama-3.1-8B --method lora --lora_rank 16 "
      "--target_modules all-linear --seq_len 2048 --micro_batch 2 "
      "--activation_checkpointing on --attention flash --steps 10000 "
      "--team ml-platform";
  ASSERT_EQ(Placectl(absl::StrCat(flags, " --json"), &out), 0);
  const auto plan = FromJson<v1::PlacePlanResponse>(out);
  EXPECT_EQ(plan.recipe_key(), key);
  EXPECT_EQ(plan.recipe().attention(), v1::ATTENTION_IMPLEMENTATION_FLASH);
  EXPECT_EQ(plan.recipe().activation_checkpointing_mode(),
            v1::ACTIVATION_CHECKPOINTING_ON);
  // SDPA is another setting, so another key.
  ASSERT_EQ(Placectl(absl::StrCat(flags, " --attention sdpa --json"), &out), 0);
  EXPECT_NE(FromJson<v1::PlacePlanResponse>(out).recipe_key(), key);
  EXPECT_EQ(Placectl(absl::StrCat(flags, " --attention fast"), &out, true), 2);
  EXPECT_THAT(out, HasSubstr("--attention"));
}

TEST_F(PlacectlTest, MemoryFlagsAndFileKeysSayTheSameRecipe) {
  OneL40sPool();
  std::string out;
  ASSERT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --json"), &out), 0);
  const auto standard = FromJson<v1::PlacePlanResponse>(out);
  ASSERT_EQ(
      Placectl(absl::StrCat(kLora8bFlags,
                            " --loss chunked-cross-entropy"
                            " --packing padded-per-batch --mean_tokens 300"
                            " --framework torchtune"
                            " --reported_peak allocated --json"),
               &out),
      0);
  const auto flags = FromJson<v1::PlacePlanResponse>(out);
  EXPECT_NE(flags.recipe_key(), standard.recipe_key());
  EXPECT_EQ(flags.recipe().loss_implementation(),
            v1::LOSS_IMPLEMENTATION_CHUNKED_CROSS_ENTROPY);
  EXPECT_EQ(flags.recipe().sequence_packing(),
            v1::SEQUENCE_PACKING_PADDED_PER_BATCH);
  EXPECT_EQ(flags.recipe().mean_tokens_per_sample(), 300);
  EXPECT_EQ(flags.recipe().training_framework(),
            v1::TRAINING_FRAMEWORK_TORCHTUNE);
  EXPECT_EQ(flags.recipe().reported_peak(), v1::PEAK_MEMORY_KIND_ALLOCATED);
  EXPECT_LT(flags.predicted_memory().total_gb(),
            standard.predicted_memory().total_gb());
  EXPECT_DOUBLE_EQ(flags.predicted_memory().reported_gb(),
                   flags.predicted_memory().allocated_gb());

  const std::string yaml = WriteFile("memory.yaml", R"(recipe:
  model: Llama-3.1-8B
  method: lora
  lora_rank: 16
  target_modules: all-linear
  sequence_length: 2048
  micro_batch_size: 2
  activation_checkpointing: on
  attention: flash
  loss_implementation: chunked-cross-entropy
  sequence_packing: padded-per-batch
  mean_tokens_per_sample: 300
  training_framework: torchtune
  reported_peak: allocated
total_steps: 10000
team: ml-platform
)");
  ASSERT_EQ(Placectl(absl::StrCat("plan --recipe ", yaml, " --json"), &out), 0);
  EXPECT_EQ(FromJson<v1::PlacePlanResponse>(out).recipe_key(),
            flags.recipe_key());

  // The table says what the recipe asked for.
  ASSERT_EQ(Placectl(absl::StrCat("plan --recipe ", yaml), &out), 0);
  EXPECT_THAT(out, HasSubstr("chunked-cross-entropy loss, padded-per-batch, "
                             "mean 300 tokens/sample, torchtune"));
  EXPECT_THAT(out, HasSubstr("(allocated "));

  // A bad name is a usage error naming the flag or the key; a bad value
  // the service's refusal naming the field.
  EXPECT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --packing zipped"), &out, true), 2);
  EXPECT_THAT(out, HasSubstr("--packing"));
  const std::string bad = WriteFile("bad-memory.yaml", R"(recipe:
  model: Llama-3.1-8B
  training_framework: pytorch-lightning
total_steps: 10
)");
  EXPECT_EQ(Placectl(absl::StrCat("plan --recipe ", bad), &out, true), 2);
  EXPECT_THAT(out, HasSubstr("recipe.training_framework (line 3)"));
  EXPECT_EQ(Placectl(absl::StrCat(kLora8bFlags,
                                  " --packing padded-per-batch"
                                  " --mean_tokens 5000"),
                     &out, true),
            1);
  EXPECT_THAT(out, HasSubstr("recipe.mean_tokens_per_sample"));
}

TEST_F(PlacectlTest, AdapterTypeFlagAndFileKeySayTheSameRecipe) {
  OneL40sPool();
  std::string out;
  ASSERT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --json"), &out), 0);
  const auto lora = FromJson<v1::PlacePlanResponse>(out);
  ASSERT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --adapter_type dora --json"), &out),
      0);
  const auto dora = FromJson<v1::PlacePlanResponse>(out);
  EXPECT_EQ(dora.recipe().adapter_type(), v1::ADAPTER_TYPE_DORA);
  EXPECT_NE(dora.recipe_key(), lora.recipe_key());
  // DoRA keeps the base and LoRA outputs of every target module.
  EXPECT_GT(dora.predicted_memory().total_gb(),
            lora.predicted_memory().total_gb());
  ASSERT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --adapter_type lora --json"), &out),
      0);
  EXPECT_EQ(FromJson<v1::PlacePlanResponse>(out).recipe_key(),
            lora.recipe_key());

  const std::string yaml = WriteFile("dora.yaml", R"(recipe:
  model: Llama-3.1-8B
  method: lora
  adapter_type: dora
  lora_rank: 16
  target_modules: all-linear
  sequence_length: 2048
  micro_batch_size: 2
  activation_checkpointing: on
  attention: flash
total_steps: 10000
team: ml-platform
)");
  ASSERT_EQ(Placectl(absl::StrCat("plan --recipe ", yaml), &out), 0);
  EXPECT_THAT(out, HasSubstr("lora, dora adapter, rank 16"));
  ASSERT_EQ(Placectl(absl::StrCat("plan --recipe ", yaml, " --json"), &out), 0);
  EXPECT_EQ(FromJson<v1::PlacePlanResponse>(out).recipe_key(),
            dora.recipe_key());

  // A rank on a type without one is the service's refusal naming the
  // field; an unknown name a usage error naming the flag.
  EXPECT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --adapter_type ia3"), &out, true),
      1);
  EXPECT_THAT(out, HasSubstr("recipe.lora_rank"));
  EXPECT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --adapter_type qlora"), &out, true),
      2);
  EXPECT_THAT(out, HasSubstr("--adapter_type"));
}

TEST_F(PlacectlTest, PoolsCreateAndUpdateTakeTheInterNodeFabric) {
  std::string out;
  ASSERT_EQ(Placectl("pools create --name a100-multi --sku A100-SXM4-80GB "
                     "--nodes 2 --gpus_per_node 8 --fabric nvlink "
                     "--inter_node_fabric infiniband --inter_node_gb_s 25 "
                     "--rate 2.10 --json",
                     &out),
            0);
  auto pool = FromJson<v1::Pool>(out);
  EXPECT_EQ(pool.inter_node_fabric(), v1::INTER_NODE_FABRIC_INFINIBAND);
  EXPECT_EQ(pool.inter_node_bandwidth_gb_s_per_gpu(), 25);
  ASSERT_EQ(Placectl("pools list", &out), 0);
  EXPECT_THAT(out, HasSubstr("infiniband 25 GB/s"));

  // NONE with the bandwidth still set is a conflict the server names.
  EXPECT_EQ(
      Placectl("pools update a100-multi --inter_node_fabric none", &out, true),
      1);
  EXPECT_THAT(out, HasSubstr("pool.inter_node_bandwidth_gb_s_per_gpu"));
  ASSERT_EQ(Placectl("pools update a100-multi --inter_node_fabric none "
                     "--inter_node_gb_s 0 --json",
                     &out),
            0);
  pool = FromJson<v1::Pool>(out);
  EXPECT_EQ(pool.inter_node_fabric(), v1::INTER_NODE_FABRIC_NONE);
  EXPECT_EQ(pool.gpu_quota(), 16);  // untouched
  EXPECT_EQ(Placectl("pools update a100-multi --inter_node_fabric token-ring",
                     &out, true),
            2);
  EXPECT_THAT(out, HasSubstr("--inter_node_fabric"));
}

TEST_F(PlacectlTest, BadRecipePrintsTheFieldViolationAndExitsOne) {
  OneL40sPool();
  std::string out;
  EXPECT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --lora_rank 0 --steps 0"),
                     &out, true),
            1);
  EXPECT_THAT(out, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(out, HasSubstr("\n  recipe.lora_rank: "));
  EXPECT_THAT(out, HasSubstr("\n  total_steps: "));
  // Malformed flags are usage errors, caught before any call.
  EXPECT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --method lorax"), &out, true),
            2);
  EXPECT_THAT(out, HasSubstr("--method"));
  EXPECT_THAT(out, HasSubstr("head-only"));
  EXPECT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --deadline soon"), &out, true), 2);
  EXPECT_EQ(Placectl("plan extra-argument", &out, true), 2);
}

// A scheduler's hook must tell "no pool can take it" from "no answer": the
// plan is printed (and recorded) and placectl exits 3, not 0 or 1.
TEST_F(PlacectlTest, PlanWithNoCandidateExitsThreeAndStillPrintsThePlan) {
  OneL40sPool();
  const std::string tensor_on_pcie =
      absl::StrCat(kLora8bFlags, " --gpus 4 --parallelism tensor");
  std::string out;
  ASSERT_EQ(Placectl(absl::StrCat(tensor_on_pcie, " --json"), &out), 3);
  const auto plan = FromJson<v1::PlacePlanResponse>(out);
  EXPECT_FALSE(plan.plan_id().empty());
  EXPECT_EQ(plan.candidates_size(), 0);
  ASSERT_EQ(plan.rejections_size(), 1);
  EXPECT_EQ(plan.rejections(0).rule(), "collectives_need_fabric");
  EXPECT_EQ(
      Placectl(absl::StrCat("plans get ", plan.plan_id(), " --json"), &out), 0);
  EXPECT_EQ(Placectl(tensor_on_pcie, &out), 3);
  EXPECT_THAT(out, HasSubstr("No pool can take this recipe"));
  EXPECT_EQ(Placectl(kLora8bFlags, &out), 0);
}

// A server that accepts connections and never answers (a hung process, a
// proxy with no backend) costs a caller --rpc_timeout, then exit 1.
TEST_F(PlacectlTest, RpcTimeoutEndsACallToAServerThatNeverAnswers) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(listen(listener, 16), 0);  // the kernel accepts; nobody answers
  ASSERT_EQ(
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string hung = absl::StrCat(
      PLACECTL_PATH, " --server 127.0.0.1:", ntohs(address.sin_port));
  std::string out;
  EXPECT_EQ(RunCommand(absl::StrCat(hung, " --rpc_timeout 300ms ", kLora8bFlags,
                                    " 2>&1"),
                       &out),
            1);
  EXPECT_THAT(out, HasSubstr("DEADLINE_EXCEEDED"));
  EXPECT_EQ(
      RunCommand(absl::StrCat(hung, " --rpc_timeout 300ms skus 2>&1"), &out),
      1);
  EXPECT_THAT(out, HasSubstr("DEADLINE_EXCEEDED"));
  EXPECT_EQ(RunCommand(absl::StrCat(hung, " --rpc_timeout 0s skus 2>&1"), &out),
            2);
  EXPECT_THAT(out, HasSubstr("--rpc_timeout"));
  close(listener);
}

TEST_F(PlacectlTest, PlansGetRoundTripsAndAccuracyShowsTheSkuOfARunOfThePlan) {
  OneL40sPool();
  client_->UploadRun("l40s-train", kL40s, Lora8b(), 10, 10'000, 24);
  client_->PlanUntil(PlanFor(Lora8b()), Measured("l40s-train", 1));
  std::string out;
  ASSERT_EQ(Placectl(absl::StrCat(kLora8bFlags,
                                  " --request_id job-7 --deadline 36h --json"),
                     &out),
            0);
  const auto plan = FromJson<v1::PlacePlanResponse>(out);
  ASSERT_FALSE(plan.plan_id().empty());

  ASSERT_EQ(Placectl("plans get " + plan.plan_id() + " --json", &out), 0);
  const auto stored = FromJson<v1::GetPlanResponse>(out);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(stored.plan(), plan))
      << stored.plan().DebugString();
  EXPECT_EQ(stored.request().request_id(), "job-7");
  EXPECT_EQ(stored.request().total_steps(), 10'000);
  EXPECT_EQ(stored.request().constraints().deadline().seconds(), 36 * 3600);
  EXPECT_EQ(stored.request().recipe().lora_rank(), 16);

  ASSERT_EQ(Placectl("plans get " + plan.plan_id(), &out), 0);
  EXPECT_THAT(out, HasSubstr("request id job-7"));
  EXPECT_THAT(out, HasSubstr("deadline 36h"));
  EXPECT_THAT(out, HasSubstr("plan " + plan.plan_id()));
  EXPECT_EQ(RowAfterHeader(out, "RANK", 0).at(1), "l40s-train");
  EXPECT_EQ(Placectl("plans get " + NewUuid(), &out, true), 1);
  EXPECT_THAT(out, HasSubstr("NOT_FOUND"));

  // No run has carried the plan out yet.
  ASSERT_EQ(Placectl("plans accuracy", &out), 0);
  EXPECT_THAT(out, Not(HasSubstr(kL40s)));
  // A run carries it out: 12 GPU-hours against the predicted 10.
  client_->UploadRun("l40s-train", kL40s, Lora8b(), 12, 10'000, 30,
                     v1::RUN_OUTCOME_SUCCEEDED, 0, v1::OFFLOAD_NONE,
                     plan.plan_id());
  ASSERT_EQ(Placectl("plans accuracy", &out), 0);
  const std::vector<std::string> row = RowAfterHeader(out, "SKU", 0);
  ASSERT_GE(row.size(), 5u) << out;
  EXPECT_EQ(row[0], kL40s);
  EXPECT_EQ(row[1], "1");
  // (10 - 12) / 12: the planner under-predicted by 16.7% (16.6% with the
  // failure prior's small expected rework in the prediction).
  EXPECT_THAT(row[4], HasSubstr("| -16.6"));
  ASSERT_EQ(Placectl("plans accuracy --json", &out), 0);
  const auto accuracy = FromJson<v1::GetPlanAccuracyResponse>(out);
  ASSERT_EQ(accuracy.skus_size(), 1);
  EXPECT_EQ(accuracy.skus(0).sku(), kL40s);
  EXPECT_EQ(accuracy.skus(0).runs(), 1);
  // The analytic prior's errors on the same run, beside the planner's:
  // (prior - 30) / 30 on memory.
  const v1::ModelAccuracy& prior = accuracy.skus(0).prior();
  EXPECT_EQ(prior.runs(), 1);
  EXPECT_EQ(prior.runs_with_successful_steps(), 1);
  EXPECT_NEAR(prior.peak_memory_mean_error_pct(),
              100 * (plan.candidates(0).prior_peak_memory_gb() - 30) / 30,
              0.01);
  ASSERT_GE(row.size(), 7u) << out;
  EXPECT_THAT(row[5], HasSubstr(absl::StrFormat(
                          "| %+.1f", prior.peak_memory_mean_error_pct())));
  EXPECT_THAT(row[6],
              HasSubstr(absl::StrFormat(
                  "| %+.1f", prior.gpu_hours_per_step_mean_error_pct())));
  // A window that ends before the run was recorded holds nothing.
  ASSERT_EQ(Placectl("plans accuracy --until 2020-01-01T00:00:00Z", &out), 0);
  EXPECT_THAT(out, Not(HasSubstr(kL40s)));
  ASSERT_EQ(Placectl("plans accuracy --since 2020-01-01T00:00:00Z", &out), 0);
  EXPECT_THAT(out, HasSubstr(kL40s));
  EXPECT_EQ(Placectl("plans accuracy --since yesterday", &out, true), 2);
  EXPECT_EQ(Placectl("plans", &out, true), 2);
}

TEST_F(PlacectlTest, CostWhereTakesTheMethodAndOutcomeNames) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client_->UploadRun("l40s-train", kL40s, Lora8b(), 1, 100, 24);
  std::string out;
  ASSERT_EQ(Placectl("cost --group_by pool,method --where method=lora", &out),
            0);
  EXPECT_THAT(out, HasSubstr("l40s-train"));
  ASSERT_EQ(
      Placectl(
          "cost --group_by pool --where method=head-only,outcome=succeeded",
          &out),
      0);
  EXPECT_THAT(out, Not(HasSubstr("l40s-train")));
  ASSERT_EQ(Placectl("cost --group_by pool --where outcome=succeeded", &out),
            0);
  EXPECT_THAT(out, HasSubstr("l40s-train"));
  EXPECT_EQ(Placectl("cost --where method=lorax", &out, true), 2);
  EXPECT_THAT(out, HasSubstr("full, lora, qlora or head-only"));
  EXPECT_EQ(Placectl("cost --where outcome=unspecified", &out, true), 2);
}

}  // namespace
// One unmeasured pool: no bake-off, the job itself measures it. Every
// money cell of the table has two decimals, whatever the rate's precision,
// and the start-up says it is a prior.
TEST_F(PlacectlTest, OneUnmeasuredPoolHasNoBakeOffAndMoneyHasTwoDecimals) {
  v1::Pool pool = TrainingPool("l40s-train", kL40s, 1, 8, 1'366'667);
  pool.set_list_price_micros_per_gpu_hour(2'333'333);
  client_->CreatePool(pool);
  client_->PlanUntil(PlanFor(Lora8b()), [](const v1::PlacePlanResponse& p) {
    return p.candidates_size() == 1;
  });
  std::string out;
  ASSERT_EQ(Placectl(kLora8bFlags, &out), 0);
  EXPECT_THAT(out, Not(HasSubstr("MEASUREMENT RUN")));
  EXPECT_THAT(out, Not(HasSubstr("BAKE-OFF")));
  const std::vector<std::string> row = RowAfterHeader(out, "RANK", 0);
  ASSERT_GE(row.size(), 17u) << out;
  // RANK POOL SKU GPUS PARALLELISM FIT PEAK STEP GPU-H/1K START-UP REWORK
  // EXPECTED COST LIST.
  EXPECT_TRUE(std::regex_match(row[9], std::regex(R"(\d+\.\d\d prior)")))
      << row[9];
  for (int two_decimals : {10, 11, 12, 13}) {
    EXPECT_TRUE(std::regex_match(row[two_decimals], std::regex(R"(\d+\.\d\d)")))
        << "column " << two_decimals << ": " << row[two_decimals];
  }
}

std::string ShortEnumRunLine(const v1::BenchmarkRun& run) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  EXPECT_TRUE(
      google::protobuf::util::MessageToJsonString(run, &json, options).ok());
  // The short names recipe files take.
  for (const auto& [full, short_name] :
       std::vector<std::pair<std::string, std::string>>{
           {"\"RUN_OUTCOME_SUCCEEDED\"", "\"succeeded\""},
           {"\"FINE_TUNE_METHOD_LORA\"", "\"lora\""},
           {"\"PRECISION_BF16\"", "\"bf16\""},
           {"\"OFFLOAD_NONE\"", "\"none\""},
           {"\"INTERCONNECT_NONE\"", "\"none\""},
           {"\"PARALLELISM_SINGLE\"", "\"single\""}}) {
    json = absl::StrReplaceAll(json, {{full, short_name}});
  }
  return json;
}

TEST_F(PlacectlTest, RunsUploadTakesShortEnumNamesAndRefusesABadFileAsUsage) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  const v1::BenchmarkRun first = testing::SucceededRun("l40s-train", kL40s);
  v1::BenchmarkRun second = testing::SucceededRun("l40s-train", kL40s);
  const std::string line = ShortEnumRunLine(first);
  ASSERT_THAT(line, HasSubstr("\"succeeded\""));
  ASSERT_THAT(line, HasSubstr("\"lora\""));
  // Which peak it reports, and both allocator peaks, by short name too.
  v1::BenchmarkRun reserved = testing::SucceededRun("l40s-train", kL40s);
  reserved.set_peak_memory_kind(v1::PEAK_MEMORY_KIND_RESERVED);
  reserved.set_peak_memory_allocated_gb(29.5);
  reserved.set_peak_memory_reserved_gb(31.5);
  const std::string reserved_line =
      absl::StrReplaceAll(ShortEnumRunLine(reserved),
                          {{"\"PEAK_MEMORY_KIND_RESERVED\"", "\"reserved\""}});
  ASSERT_THAT(reserved_line, HasSubstr("\"peak_memory_kind\":\"reserved\""));
  const std::string good = WriteFile("good.jsonl", line + "\n");
  std::string out;
  ASSERT_EQ(Placectl("runs upload " + good, &out, true), 0);
  EXPECT_THAT(out, HasSubstr("stored 1, already stored 0, failed 0"));
  // Not a terminal: no progress bar.
  EXPECT_THAT(out, Not(HasSubstr("[#")));
  ASSERT_EQ(Placectl("runs upload " + good, &out, true), 0);
  EXPECT_THAT(out, HasSubstr("stored 0, already stored 1, failed 0"));

  // A bad line: exit 2, naming the file, the line and the field; nothing of
  // the file is sent, not even its good lines.
  std::string misspelt = ShortEnumRunLine(second);
  misspelt = absl::StrReplaceAll(misspelt, {{"\"succeeded\"", "\"succeded\""}});
  const std::string bad =
      WriteFile("bad.jsonl",
                ShortEnumRunLine(testing::SucceededRun("l40s-train", kL40s)) +
                    "\n" + misspelt + "\n{not json\n");
  EXPECT_EQ(Placectl("runs upload " + bad, &out, true), 2);
  EXPECT_THAT(out, HasSubstr(bad + " line 2: outcome"));
  EXPECT_THAT(out, HasSubstr("succeded"));
  EXPECT_THAT(out, HasSubstr(bad + " line 3: "));
  EXPECT_THAT(out, Not(HasSubstr("INVALID_ARGUMENT")));
  EXPECT_EQ(Placectl("runs upload " + dir_ + "/missing.jsonl", &out, true), 2);
  EXPECT_THAT(out, HasSubstr(dir_ + "/missing.jsonl"));
  EXPECT_EQ(Placectl("runs upload /dev/null", &out, true), 2);
  EXPECT_THAT(out, HasSubstr("holds no runs"));
  ASSERT_EQ(Placectl("--json runs list", &out), 0);
  EXPECT_EQ(FromJson<v1::ListBenchmarkRunsResponse>(out).runs_size(), 1);
  ASSERT_EQ(Placectl("runs upload " +
                         WriteFile("reserved.jsonl", reserved_line + "\n"),
                     &out, true),
            0);
  ASSERT_EQ(Placectl("runs get " + reserved.run_id(), &out), 0);
  const auto stored = FromJson<v1::GetBenchmarkRunResponse>(out);
  EXPECT_EQ(stored.run().peak_memory_kind(), v1::PEAK_MEMORY_KIND_RESERVED);
  EXPECT_DOUBLE_EQ(stored.run().peak_memory_allocated_gb(), 29.5);
  EXPECT_DOUBLE_EQ(stored.run().peak_memory_reserved_gb(), 31.5);

  // A run the service refuses is the service's word: exit 1.
  second.set_pool("no-such-pool");
  const std::string refused =
      WriteFile("refused.jsonl", ShortEnumRunLine(second) + "\n");
  EXPECT_EQ(Placectl("runs upload " + refused, &out, true), 1);
  EXPECT_THAT(out, HasSubstr("INVALID_ARGUMENT"));

  // A directory of run files, with a progress bar on a terminal (script(1)
  // gives placectl one).
  const std::string runs_dir = dir_ + "/runs";
  ASSERT_EQ(RunCommand("mkdir " + runs_dir), 0);
  for (int i = 0; i < 3; ++i) {
    std::ofstream(absl::StrCat(runs_dir, "/", i, ".jsonl"))
        << ShortEnumRunLine(testing::SucceededRun("l40s-train", kL40s)) << "\n";
  }
  std::ofstream(runs_dir + "/notes.txt") << "not a run file\n";
  const std::string command =
      absl::StrCat(PLACECTL_PATH, " --server 127.0.0.1:", placementd_->port(),
                   " runs upload ", runs_dir);
  ASSERT_EQ(RunCommand("script -qec '" + command + "' /dev/null", &out), 0)
      << out;
  EXPECT_THAT(out, HasSubstr("stored 3, already stored 0, failed 0"));
  EXPECT_THAT(out, HasSubstr("] 3/3 runs uploaded, 0 failed"));
  EXPECT_THAT(out, HasSubstr("[###"));
}

// Every command and command group answers --help on stdout with exit 0,
// listing its own flags one a line; a flag of another command is refused.
TEST_F(PlacectlTest, HelpExitsZeroForEveryCommandAndListsItsOwnFlags) {
  struct Case {
    const char* command;
    std::vector<std::string> lists;
  };
  const std::vector<Case> cases = {
      {"", {"pools create", "runs upload", "plans accuracy", "--server"}},
      {"skus", {"usage: placectl skus"}},
      {"pools", {"pools create", "pools update"}},
      {"pools list", {"usage: placectl pools list"}},
      {"pools get", {"usage: placectl pools get"}},
      {"pools create",
       {"\n  --name=VALUE", "\n  --labels=VALUE", "\n  --rate=VALUE"}},
      {"pools update", {"\n  --quota=VALUE", "\n  --labels=VALUE"}},
      {"runs", {"runs upload", "runs list"}},
      {"runs upload", {"usage: placectl runs upload"}},
      {"runs list", {"\n  --pool=VALUE", "\n  --limit=VALUE"}},
      {"runs get", {"usage: placectl runs get"}},
      {"cost", {"\n  --from=VALUE", "\n  --group_by=VALUE", "\n  --csv"}},
      {"plan",
       {"\n  --seq_len=VALUE", "\n  --objective=VALUE", "\n  --labels=VALUE",
        "\n  --recipe=VALUE", "\n  --loss=VALUE", "\n  --packing=VALUE",
        "\n  --mean_tokens=VALUE", "\n  --framework=VALUE",
        "\n  --reported_peak=VALUE"}},
      {"plans", {"plans get", "plans accuracy"}},
      {"plans get", {"usage: placectl plans get"}},
      {"plans accuracy", {"\n  --since=VALUE", "\n  --until=VALUE"}},
      {"tokens", {"tokens create", "tokens revoke", "tokens list"}},
      {"tokens create",
       {"\n  --role=VALUE", "\n  --name=VALUE", "\n  --team=VALUE"}},
      {"tokens revoke", {"usage: placectl tokens revoke"}},
      {"tokens list", {"usage: placectl tokens list"}},
      {"eval-criteria", {"eval-criteria set", "eval-criteria delete"}},
      {"eval-criteria set",
       {"\n  --pool=VALUE", "\n  --label=VALUE", "\n  --metric=VALUE",
        "\n  --min_score=VALUE", "\n  --max_score=VALUE"}},
  };
  for (const Case& c : cases) {
    std::string out;
    EXPECT_EQ(Placectl(absl::StrCat(c.command, " --help"), &out, true), 0)
        << c.command;
    EXPECT_THAT(out, Not(HasSubstr("No flags matched"))) << c.command;
    for (const std::string& text : c.lists) {
      EXPECT_THAT(out, HasSubstr(text)) << c.command;
    }
  }
  // --labels means what it means for each command.
  std::string out;
  ASSERT_EQ(Placectl("pools create --help", &out), 0);
  EXPECT_THAT(out, HasSubstr("the pool's labels"));
  EXPECT_THAT(out, Not(HasSubstr("--seq_len")));
  ASSERT_EQ(Placectl("plan --help", &out), 0);
  EXPECT_THAT(out, HasSubstr("labels a pool must carry"));
  EXPECT_THAT(out, Not(HasSubstr("--gpus_per_node")));
  // Flags of another command are usage errors.
  EXPECT_EQ(Placectl("pools create --name p --seq_len 4", &out, true), 2);
  EXPECT_THAT(out, HasSubstr("placectl pools create does not take --seq_len"));
  EXPECT_EQ(Placectl("plan --gpus_per_node 8", &out, true), 2);
  EXPECT_EQ(Placectl("skus --no_such_flag", &out, true), 2);
  EXPECT_EQ(Placectl("runs list --limit many", &out, true), 2);
  EXPECT_THAT(out, HasSubstr("--limit"));
}

// The exit-code contract with the per-command flags: global flags before
// or after the command, 0 placed, 3 nothing fits, 1 refused, 2 usage.
TEST_F(PlacectlTest, ExitCodesHoldWithFlagsBeforeOrAfterTheCommand) {
  OneL40sPool();
  std::string out;
  EXPECT_EQ(Placectl(absl::StrCat("--rpc_timeout 10s ", kLora8bFlags), &out),
            0);
  EXPECT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --rpc_timeout 10s --json"), &out),
      0);
  EXPECT_EQ(Placectl(absl::StrCat(kLora8bFlags,
                                  " --rpc_timeout 10s --gpus 4 --parallelism "
                                  "tensor"),
                     &out),
            3);
  EXPECT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --lora_rank 0"), &out), 1);
  EXPECT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --lora_rank=sixteen"), &out, true),
      2);
  EXPECT_THAT(out, HasSubstr("--lora_rank"));
  EXPECT_EQ(Placectl("plan --steps", &out, true), 2);  // a value is missing
  EXPECT_EQ(Placectl("frobnicate", &out, true), 2);
  EXPECT_EQ(Placectl("", &out, true), 2);
}

TEST_F(PlacectlTest, ErrorsNameTheFlagsTheFileAndTheModelMeant) {
  OneL40sPool();
  std::string out;
  // An unknown model: the service's "did you mean".
  EXPECT_EQ(Placectl(absl::StrReplaceAll(kLora8bFlags,
                                         {{"Llama-3.1-8B", "Lama-3.1-8B"}}),
                     &out, true),
            1);
  EXPECT_THAT(out, HasSubstr("did you mean Llama-3.1-8B?"));
  // An empty token file is said to be empty, before any call.
  EXPECT_EQ(Placectl("--token_file /dev/null skus", &out, true), 2);
  EXPECT_THAT(out, HasSubstr("token file /dev/null is empty"));
  // cost's range errors name --from and --to.
  EXPECT_EQ(Placectl("cost --from 2026-03-05 --to 2026-03-01", &out, true), 2);
  EXPECT_THAT(out, HasSubstr("--from 2026-03-05 is after --to 2026-03-01"));
  EXPECT_THAT(out, Not(HasSubstr("start_time")));
  // --objective: cost|time|deadline|delay, and the enum's own names.
  EXPECT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --objective fastest"), &out, true),
      2);
  EXPECT_THAT(out, HasSubstr("expected cost, time, deadline or delay"));
  ASSERT_EQ(Placectl(absl::StrCat(kLora8bFlags, " --objective time"), &out), 0);
  EXPECT_THAT(out, HasSubstr("objective shortest time"));
  ASSERT_EQ(
      Placectl(absl::StrCat(kLora8bFlags, " --objective lowest-cost"), &out),
      0);
  EXPECT_THAT(out, HasSubstr("objective lowest cost"));
}

TEST_F(PlacectlTest, CostByPoolExplainsOccupancyAndAmortizedCost) {
  client_->CreatePool(TrainingPool("l40s-train", kL40s, 1, 8));
  client_->UploadRun("l40s-train", kL40s, Lora8b(), 1, 100, 24);
  std::string out;
  ASSERT_EQ(Placectl("cost --group_by pool", &out), 0);
  EXPECT_THAT(out, HasSubstr("OCCUPANCY"));
  EXPECT_THAT(out, HasSubstr("\nOCCUPANCY: GPU-hours of all runs"));
  EXPECT_THAT(out, HasSubstr("AMORTIZED COST/STEP: the internal cost / "
                             "occupancy / successful steps"));
  ASSERT_EQ(Placectl("cost --group_by sku", &out), 0);
  EXPECT_THAT(out, Not(HasSubstr("OCCUPANCY:")));
}

}  // namespace placement
