// storage/plan_store on a real PostgreSQL: a batch of plans travels as one
// array per column, and each plan must come back with its own values.
#include "storage/stores/plan_store.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/session/db_session.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::shared_ptr<const PlanResultRecord> Result(char tag) {
  auto result = std::make_shared<PlanResultRecord>();
  result->response = std::string("result ") + tag;
  result->hash = std::string(32, tag);
  return result;
}

PlacementRecord Plan(const std::string& plan_id, const std::string& team,
                     std::shared_ptr<const PlanResultRecord> result) {
  PlacementRecord plan;
  plan.plan_id = plan_id;
  plan.team = team;
  plan.recipe_key = "rk-" + team;
  plan.objective = "LOWEST_COST";
  plan.request = "request of " + team;
  plan.result = std::move(result);
  plan.evidence_time = absl::FromUnixMicros(1'700'000'000'000'001);
  plan.created_at = absl::FromUnixMicros(1'700'000'000'000'002);
  return plan;
}

TEST(PlanStoreTest, BatchStoresEveryPlanWithItsOwnValues) {
  testing::TestDatabase db;
  db.Migrate();
  DbSession session(db.url());
  // Two results, one new and one "known" (stored by an earlier batch); plans
  // with and without a chosen pool, with and without warnings.
  std::shared_ptr<const PlanResultRecord> known = Result('k');
  PlacementRecord earlier =
      Plan("01890a5d-0000-7000-8000-000000000000", "earlier", known);
  ASSERT_TRUE(InsertPlacements(session, {&earlier}, [](const std::string&) {
                return false;
              }).ok());

  PlacementRecord a = Plan("01890a5d-0000-7000-8000-00000000000a", "a", known);
  a.chosen_pool = "pool-a";
  a.chosen_sku = "L40S-PCIE-48GB";
  a.warnings = {"first, \"quoted\"", "second {braced}"};
  PlacementRecord b =
      Plan("01890a5d-0000-7000-8000-00000000000b", "b", Result('n'));
  b.evidence_time = absl::FromUnixMicros(1'700'000'000'999'999);
  PlacementRecord c = Plan("01890a5d-0000-7000-8000-00000000000c", "c", known);
  c.chosen_pool = "pool-c";
  c.chosen_sku = "H100-SXM5-80GB";
  c.warnings = {""};
  const absl::Status inserted = InsertPlacements(
      session, {&a, &b, &c},
      [&](const std::string& hash) { return hash == known->hash; });
  ASSERT_TRUE(inserted.ok()) << inserted;

  EXPECT_EQ(
      db.QueryValue("SELECT string_agg(concat_ws('|', right(plan_id::text, 1), "
                    "team, recipe_key, coalesce(chosen_pool, '-'), "
                    "coalesce(chosen_sku, '-'), convert_from(request, 'UTF8'), "
                    "right(encode(result_hash, 'hex'), 2), "
                    "cardinality(warnings)), ' ' ORDER BY plan_id) "
                    "FROM placements WHERE team <> 'earlier'"),
      "a|a|rk-a|pool-a|L40S-PCIE-48GB|request of a|6b|2 "
      "b|b|rk-b|-|-|request of b|6e|0 "
      "c|c|rk-c|pool-c|H100-SXM5-80GB|request of c|6b|1");
  absl::StatusOr<StoredPlan> stored_a = GetPlan(session, a.plan_id);
  ASSERT_TRUE(stored_a.ok()) << stored_a.status();
  EXPECT_EQ(stored_a->result_response, "result k");
  EXPECT_THAT(stored_a->warnings,
              ElementsAre("first, \"quoted\"", "second {braced}"));
  absl::StatusOr<StoredPlan> stored_b = GetPlan(session, b.plan_id);
  ASSERT_TRUE(stored_b.ok()) << stored_b.status();
  EXPECT_EQ(stored_b->result_response, "result n");
  EXPECT_EQ(absl::ToUnixMicros(stored_b->evidence_time), 1'700'000'000'999'999);
  EXPECT_THAT(stored_b->warnings, IsEmpty());
}

TEST(PlanStoreTest, BatchWithABadPlanIdStoresNothing) {
  testing::TestDatabase db;
  db.Migrate();
  DbSession session(db.url());
  PlacementRecord good =
      Plan("01890a5d-0000-7000-8000-00000000000a", "a", Result('r'));
  PlacementRecord bad = Plan("not-a-uuid", "b", good.result);
  const absl::Status status = InsertPlacements(
      session, {&good, &bad}, [](const std::string&) { return false; });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM placements"), "0");
}

TEST(PlanStoreTest, DuplicatePlanIdRollsBackTheWholeBatch) {
  testing::TestDatabase db;
  db.Migrate();
  DbSession session(db.url());
  PlacementRecord first =
      Plan("01890a5d-0000-7000-8000-00000000000a", "a", Result('r'));
  ASSERT_TRUE(InsertPlacements(session, {&first}, [](const std::string&) {
                return false;
              }).ok());
  // Every result stored already: the insert is the whole (lone) statement.
  PlacementRecord fresh =
      Plan("01890a5d-0000-7000-8000-00000000000b", "b", first.result);
  const absl::Status status = InsertPlacements(
      session, {&fresh, &first}, [](const std::string&) { return true; });
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(db.QueryValue("SELECT string_agg(team, ',') FROM placements"), "a");
  // The session is usable after the failure: the next batch goes in.
  ASSERT_TRUE(InsertPlacements(session, {&fresh}, [](const std::string&) {
                return true;
              }).ok());
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM placements"), "2");
}

}  // namespace
}  // namespace placement::storage
