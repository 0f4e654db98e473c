// storage/plan_listing on a real PostgreSQL: recent plans page newest first
// without gaps or repeats, and outcomes come back newest first, bounded.
#include "storage/stores/plan_listing.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "storage/session/db_session.h"
#include "storage/stores/plan_store.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

std::string PlanId(int i) {
  return absl::StrFormat("01890a5d-0000-7000-8000-%012d", i);
}

TEST(PlanListingTest, RecentPlansPageNewestFirst) {
  testing::TestDatabase db;
  db.Migrate();
  DbSession session(db.url());
  auto result = std::make_shared<PlanResultRecord>();
  result->response = "result";
  result->hash = std::string(32, 'r');
  std::vector<PlacementRecord> plans(7);
  std::vector<const PlacementRecord*> batch;
  for (int i = 0; i < 7; ++i) {
    PlacementRecord& plan = plans[i];
    plan.plan_id = PlanId(i);
    plan.team = absl::StrCat("team-", i);
    plan.recipe_key = "rk";
    plan.objective = "LOWEST_COST";
    plan.request = absl::StrCat("request ", i);
    plan.result = result;
    plan.warnings = std::vector<std::string>(i % 3, "w");
    plan.evidence_time = absl::FromUnixSeconds(1'700'000'000);
    plan.created_at = absl::FromUnixSeconds(1'700'000'000 + i);
    if (i % 2 == 0) plan.chosen_pool = "pool";
    batch.push_back(&plan);
  }
  ASSERT_TRUE(InsertPlacements(session, batch, [](const std::string&) {
                return false;
              }).ok());

  std::vector<std::string> seen;
  std::string before;
  for (int page = 0; page < 4; ++page) {
    absl::StatusOr<PlanSummaryPage> listed =
        ListRecentPlans(session, before, 3, {});
    ASSERT_TRUE(listed.ok()) << listed.status();
    for (const PlanSummary& plan : listed->plans) seen.push_back(plan.plan_id);
    if (!listed->more) break;
    before = listed->plans.back().plan_id;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{PlanId(6), PlanId(5), PlanId(4),
                                            PlanId(3), PlanId(2), PlanId(1),
                                            PlanId(0)}));
  // A listing for teams holds their plans only.
  absl::StatusOr<PlanSummaryPage> of_teams =
      ListRecentPlans(session, "", 10, {"team-2", "team-5"});
  ASSERT_TRUE(of_teams.ok()) << of_teams.status();
  ASSERT_EQ(of_teams->plans.size(), 2u);
  EXPECT_EQ(of_teams->plans[0].plan_id, PlanId(5));
  EXPECT_EQ(of_teams->plans[1].plan_id, PlanId(2));
  EXPECT_FALSE(of_teams->more);
  absl::StatusOr<PlanSummaryPage> first = ListRecentPlans(session, "", 1, {});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->plans.size(), 1u);
  const PlanSummary& newest = first->plans[0];
  EXPECT_TRUE(first->more);
  EXPECT_EQ(newest.team, "team-6");
  EXPECT_EQ(newest.request, "request 6");
  EXPECT_EQ(newest.chosen_pool, "pool");
  EXPECT_EQ(newest.warnings, 0);
  EXPECT_EQ(newest.created_at, absl::FromUnixSeconds(1'700'000'006));
}

TEST(PlanListingTest, OutcomesOfOneSkuNewestFirstAndBounded) {
  testing::TestDatabase db;
  db.Migrate();
  DbSession session(db.url());
  // Outcomes reference stored runs, runs their pools: rows written straight.
  db.Execute(
      "INSERT INTO pools (name, sku_id, node_count, gpus_per_node, fabric, "
      "purpose, exclusive, gpu_quota, internal_rate_micros_per_gpu_hour) "
      "VALUES ('l40s', 'L40S-PCIE-48GB', 1, 4, 'PCIE', 'TRAINING', true, 4, "
      "900000), ('a100', 'A100-SXM4-80GB', 1, 4, 'NVLINK', 'TRAINING', true, "
      "4, 990000)");
  db.Execute(
      "INSERT INTO benchmark_runs (run_id, fingerprint, agent_id, pool_name, "
      "sku_id, recipe_key, model, method, gpu_count, started_at, ended_at, "
      "gpu_microseconds, steps_attempted, steps_succeeded, step_time_mean_s, "
      "step_time_p50_s, step_time_p95_s, tokens_per_second, peak_memory_gb, "
      "offload, interconnect, collectives_opened, retries, outcome, "
      "exclusive, upload) "
      "SELECT md5('run' || i)::uuid, sha256(convert_to('run' || i, 'UTF8')), "
      "'a', CASE WHEN i <= 5 THEN 'l40s' ELSE 'a100' END, "
      "CASE WHEN i <= 5 THEN 'L40S-PCIE-48GB' ELSE 'A100-SXM4-80GB' END, 'rk', "
      "'m', 'LORA', 1, now() - interval '2 h', "
      "now() - interval '1 h', 3600000000, 10, 10, 1, 1, 1, 1, 20, 'NONE', "
      "'NONE', false, 0, 'SUCCEEDED', true, '\\x' FROM generate_series(1, 8) "
      "i");
  db.Execute(
      "INSERT INTO plan_outcomes (run_id, plan_id, pool_name, sku_id, basis, "
      "predicted_peak_memory_gb, observed_peak_memory_gb, "
      "predicted_gpu_hours_per_successful_step, "
      "observed_gpu_hours_per_successful_step, recorded_at) "
      "SELECT run_id, run_id, pool_name, sku_id, 'MEASURED', 20 + i, 21, 0.1, "
      "CASE WHEN i = 2 THEN NULL ELSE 0.11 END, "
      "timestamptz '2026-01-01' + make_interval(hours => i::int) "
      "FROM (SELECT run_id, pool_name, sku_id, row_number() OVER (ORDER BY "
      "run_id) AS i FROM benchmark_runs WHERE sku_id = 'L40S-PCIE-48GB') r");
  absl::StatusOr<std::vector<PlanOutcomePoint>> all =
      ListPlanOutcomes(session, "L40S-PCIE-48GB", absl::InfinitePast(),
                       absl::InfiniteFuture(), 100, {});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 5u);
  for (size_t i = 1; i < all->size(); ++i) {
    EXPECT_GT((*all)[i - 1].recorded_at, (*all)[i].recorded_at);
  }
  EXPECT_EQ((*all)[0].predicted_peak_memory_gb, 25);
  EXPECT_EQ((*all)[3].predicted_peak_memory_gb, 22);
  EXPECT_FALSE((*all)[3].observed_gpu_hours_per_successful_step.has_value());
  EXPECT_EQ((*all)[0].observed_gpu_hours_per_successful_step, 0.11);
  absl::StatusOr<std::vector<PlanOutcomePoint>> newest =
      ListPlanOutcomes(session, "L40S-PCIE-48GB", absl::FromUnixSeconds(0),
                       absl::FromCivil(absl::CivilSecond(2026, 1, 1, 4, 0, 0),
                                       absl::UTCTimeZone()),
                       2, {});
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 2u);  // hours 1-3 are in the window, 2 drawn
  EXPECT_EQ((*newest)[0].predicted_peak_memory_gb, 23);
  absl::StatusOr<std::vector<PlanOutcomePoint>> other =
      ListPlanOutcomes(session, "H100-SXM5-80GB", absl::InfinitePast(),
                       absl::InfiniteFuture(), 100, {});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->empty());
  // For a team: only outcomes of its recorded plans (none here).
  absl::StatusOr<std::vector<PlanOutcomePoint>> of_team =
      ListPlanOutcomes(session, "L40S-PCIE-48GB", absl::InfinitePast(),
                       absl::InfiniteFuture(), 100, {"team-a"});
  ASSERT_TRUE(of_team.ok()) << of_team.status();
  EXPECT_TRUE(of_team->empty());
}

}  // namespace
}  // namespace placement::storage
