// An incremental refresh (ReadSnapshotChanges) must give exactly the snapshot
// a full read gives at the same moment, whatever happened in between:
// uploads, pools created, updated and deleted, tokens created, revoked and
// deleted, rollups and SKUs changed by hand, and writers that commit out of
// order. Against real PostgreSQL.
#include <algorithm>
#include <memory>
#include <pqxx/pqxx>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/uuid.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "placement/v1/recipe.pb.h"
#include "services/api/recipe_convert.h"
#include "services/plan/evidence_cache.h"
#include "storage/pool_store.h"
#include "storage/run_store.h"
#include "storage/token_store.h"
#include "tests/support/test_database.h"

namespace placement::services {
namespace {

using ::placement::testing::TestDatabase;

constexpr const char* kSkus[] = {"A100-SXM4-80GB", "H100-SXM5-80GB",
                                 "L40S-PCIE-48GB"};

core::Recipe RecipeNumber(int n) {
  core::Recipe r;
  r.model = n % 2 == 0 ? "Llama-3.1-8B" : "Qwen2.5-7B";
  r.method = core::FineTuneMethod::kLora;
  r.lora_rank = 8 << (n / 2 % 3);
  r.sequence_length = 1024 << (n / 6 % 3);
  r.micro_batch_size = 1 + n / 18 % 2;
  r.attention = core::AttentionImplementation::kFlash;
  return core::NormalizeRecipe(r);
}

core::Pool PoolNumber(int n, int version) {
  core::Pool pool;
  pool.name = absl::StrCat("pool-", n);
  pool.sku_id = kSkus[n % 3];
  pool.node_count = 2;
  pool.gpus_per_node = 8;
  pool.fabric = core::Fabric::kNvlink;
  pool.purpose = core::PoolPurpose::kTraining;
  pool.exclusive = n % 2 == 0;
  pool.gpu_quota = 16 - version % 8;
  pool.internal_rate_micros_per_gpu_hour = 2'000'000 + 1000 * version;
  pool.labels = {{"version", absl::StrCat(version)}};
  return pool;
}

// Comparable views of a snapshot.
using TokenView = std::tuple<std::string, std::string, std::string, int>;
std::vector<TokenView> Tokens(const CatalogSnapshot& s) {
  std::vector<TokenView> out;
  for (const auto& [hash, p] : s.tokens) {
    out.emplace_back(hash, p.token_id, p.name, static_cast<int>(p.role));
  }
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<std::tuple<std::string, double, int>> Skus(
    const CatalogSnapshot& s) {
  std::vector<std::tuple<std::string, double, int>> out;
  for (const core::GpuSku& sku : s.skus) {
    out.emplace_back(sku.id, sku.memory_gb, sku.tdp_w);
  }
  return out;
}

// The exact peak-memory figures of every rollup, and the peak the planner
// fits with (compared on their own too, so that a change to
// EvidenceStats's equality cannot drop them).
using PeakView =
    std::tuple<std::string, std::string, double, bool, int64_t, double, double,
               int64_t, double, double, int64_t, double, double>;
std::vector<PeakView> ExactPeaks(const CatalogSnapshot& s) {
  std::vector<PeakView> out;
  for (const core::KeyedEvidence& e : s.evidence.All()) {
    const core::EvidenceStats& st = e.stats;
    out.emplace_back(st.recipe_key, st.sku_id, st.peak_memory_gb,
                     st.peak_memory_exact, st.succeeded_peak.runs,
                     st.succeeded_peak.sum_gb, st.succeeded_peak.max_gb,
                     st.succeeded_allocated.runs, st.succeeded_allocated.sum_gb,
                     st.succeeded_allocated.max_gb, st.succeeded_reserved.runs,
                     st.succeeded_reserved.sum_gb,
                     st.succeeded_reserved.max_gb);
  }
  return out;
}

void ExpectSameSnapshot(const CatalogSnapshot& incremental,
                        const CatalogSnapshot& full, int step) {
  EXPECT_EQ(ExactPeaks(incremental), ExactPeaks(full)) << "after step " << step;
  EXPECT_EQ(Skus(incremental), Skus(full)) << "after step " << step;
  EXPECT_EQ(incremental.pools, full.pools) << "after step " << step;
  EXPECT_EQ(Tokens(incremental), Tokens(full)) << "after step " << step;
  EXPECT_EQ(incremental.evidence.All(), full.evidence.All())
      << "after step " << step;
}

class CatalogSnapshotTest : public ::testing::Test {
 protected:
  CatalogSnapshotTest() : session_(db_.url()) { db_.Migrate(); }

  void Upload(const core::Pool& pool, int recipe_number, int seed) {
    storage::RunToStore in;
    in.recipe = RecipeNumber(recipe_number);
    in.recipe_proto = RecipeToProto(in.recipe).SerializeAsString();
    core::MeasuredRun& run = in.run;
    run.run_id = common::NewUuid();
    run.recipe_key = core::RecipeKey(in.recipe);
    run.sku_id = pool.sku_id;
    run.pool_name = pool.name;
    run.gpu_count = 1;
    run.started = absl::FromUnixSeconds(1'760'000'000);
    run.ended = run.started + absl::Minutes(5 + seed % 50);
    run.steps_attempted = 100;
    run.steps_succeeded = 50 + seed % 50;
    run.step_time_mean_s = run.step_time_p50_s = 0.2 + 0.01 * (seed % 40);
    run.step_time_p95_s = run.step_time_p50_s * 1.3;
    // Peaks off the histogram's bucket edges; every other run reports the
    // allocator's peaks too.
    run.peak_memory_gb = 10 + seed % 30 + 0.01 * (seed % 97);
    if (seed % 2 == 0) {
      run.peak_memory_allocated_gb =
          run.peak_memory_gb - 0.5 - 0.01 * (seed % 7);
      run.peak_memory_reserved_gb = run.peak_memory_gb;
    }
    run.offload = core::Offload::kNone;
    run.interconnect = core::Interconnect::kNone;
    run.outcome =
        seed % 5 == 0 ? core::RunOutcome::kOom : core::RunOutcome::kSucceeded;
    in.upload = absl::StrCat("run ", run.run_id);
    in.agent_id = "agent";
    in.tokens_per_second = 1000;
    absl::StatusOr<storage::RunAck> ack = storage::InsertRun(session_, in);
    ASSERT_TRUE(ack.ok()) << ack.status();
    pools_with_runs_.insert(pool.name);
  }

  std::string CreateToken(int n) {
    storage::TokenRecord token;
    token.token_id = common::NewUuid();
    token.name = absl::StrCat("token-", n);
    token.role = n % 2 == 0 ? "AGENT" : "PLANNER";
    token.secret_hash = std::string(32, static_cast<char>('a' + n % 26));
    token.secret_hash[0] = static_cast<char>(n & 0xff);
    token.secret_hash[1] = static_cast<char>((n >> 8) & 0xff);
    EXPECT_TRUE(storage::InsertToken(session_, token).ok());
    return token.token_id;
  }

  std::shared_ptr<CatalogSnapshot> Full() {
    absl::StatusOr<std::shared_ptr<CatalogSnapshot>> full =
        ReadFullSnapshot(session_, 0);
    EXPECT_TRUE(full.ok()) << full.status();
    return full.ok() ? *full : nullptr;
  }

  std::shared_ptr<CatalogSnapshot> Changes(const CatalogSnapshot& base) {
    absl::StatusOr<std::shared_ptr<CatalogSnapshot>> next =
        ReadSnapshotChanges(session_, base, 0);
    EXPECT_TRUE(next.ok()) << next.status();
    return next.ok() ? *next : nullptr;
  }

  TestDatabase db_;
  storage::DbSession session_;
  std::set<std::string> pools_with_runs_;
};

TEST_F(CatalogSnapshotTest, IncrementalEqualsFullAfterRandomInterleavings) {
  std::mt19937 random(2020);
  std::vector<int> pool_version(12, -1);  // -1: no such pool
  std::vector<std::string> live_tokens;
  int tokens_made = 0;
  int uploads = 0;
  int pool_deletions = 0;
  int token_deletions = 0;
  int rollup_deletions = 0;
  std::shared_ptr<CatalogSnapshot> snapshot = Full();
  ASSERT_NE(snapshot, nullptr);
  for (int step = 0; step < 400; ++step) {
    const int n = static_cast<int>(random() % pool_version.size());
    switch (random() % 10) {
      case 0:
      case 1:
      case 2: {  // an upload to an existing pool
        if (pool_version[n] < 0) break;
        Upload(PoolNumber(n, pool_version[n]), static_cast<int>(random() % 36),
               static_cast<int>(random() % 1000000));
        ++uploads;
        break;
      }
      case 3: {  // create or update a pool
        if (pool_version[n] < 0) {
          pool_version[n] = 0;
          ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(n, 0), "").ok());
        } else {
          const int version = ++pool_version[n];
          ASSERT_TRUE(storage::UpdatePool(session_, PoolNumber(n, 0).name,
                                          [&](core::Pool& pool) {
                                            pool = PoolNumber(n, version);
                                            return absl::OkStatus();
                                          })
                          .ok());
        }
        break;
      }
      case 4: {  // delete a pool (only one without runs can go)
        const std::string name = PoolNumber(n, 0).name;
        if (pool_version[n] < 0 || pools_with_runs_.count(name) > 0) break;
        db_.Execute(
            absl::StrCat("DELETE FROM pools WHERE name = '", name, "'"));
        pool_version[n] = -1;
        ++pool_deletions;
        break;
      }
      case 5:
        live_tokens.push_back(CreateToken(tokens_made++));
        break;
      case 6: {  // revoke, or delete by hand
        if (live_tokens.empty()) break;
        const size_t i = random() % live_tokens.size();
        if (random() % 3 == 0) {
          db_.Execute(absl::StrCat("DELETE FROM api_tokens WHERE token_id = '",
                                   live_tokens[i], "'"));
          ++token_deletions;
        } else {
          ASSERT_TRUE(storage::RevokeToken(session_, live_tokens[i]).ok());
        }
        live_tokens.erase(live_tokens.begin() + i);
        break;
      }
      case 7:  // a rollup removed by hand (a cleanup)
        if (random() % 4 == 0) {
          db_.Execute(
              "DELETE FROM evidence_rollups WHERE (recipe_key, sku_id) IN "
              "(SELECT recipe_key, sku_id FROM evidence_rollups "
              "ORDER BY recipe_key LIMIT 1)");
          ++rollup_deletions;
        }
        break;
      case 8:  // a SKU's figures corrected by hand
        db_.Execute(absl::StrCat("UPDATE skus SET tdp_w = ", 300 + step,
                                 " WHERE sku_id = '", kSkus[n % 3], "'"));
        break;
      default:
        break;  // nothing: a refresh with no change
    }
    if (random() % 3 != 0) continue;  // several changes per refresh
    std::shared_ptr<CatalogSnapshot> next = Changes(*snapshot);
    ASSERT_NE(next, nullptr);
    EXPECT_TRUE(next->incremental);
    std::shared_ptr<CatalogSnapshot> full = Full();
    ASSERT_NE(full, nullptr);
    ExpectSameSnapshot(*next, *full, step);
    if (HasFailure()) return;
    snapshot = std::move(next);
  }
  // The walk did what it is meant to cover.
  EXPECT_GT(uploads, 50);
  EXPECT_GT(pool_deletions, 0);
  EXPECT_GT(token_deletions, 0);
  EXPECT_GT(rollup_deletions, 0);
  EXPECT_GT(snapshot->evidence.size(), 20u);
  EXPECT_GT(snapshot->pools.size(), 3u);
  // The exact figures compared above are there to compare.
  int with_allocated = 0;
  for (const core::KeyedEvidence& e : snapshot->evidence.All()) {
    EXPECT_TRUE(e.stats.peak_memory_exact) << e.stats.recipe_key;
    if (e.stats.successful_runs > 0) {
      EXPECT_EQ(e.stats.succeeded_peak.runs, e.stats.successful_runs);
      EXPECT_EQ(e.stats.peak_memory_gb, e.stats.succeeded_peak.max_gb);
    }
    with_allocated += e.stats.succeeded_allocated.runs > 0;
  }
  EXPECT_GT(with_allocated, 5);
}

// A writer that began (and took its transaction id) before another but
// commits after it, and after a refresh that saw the other: a change number
// drawn at write time would let the refresh's "newest seen" skip it.
TEST_F(CatalogSnapshotTest, ChangeCommittedAfterALaterOneIsNotMissed) {
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(0, 0), "").ok());
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(1, 0), "").ok());
  std::shared_ptr<CatalogSnapshot> snapshot = Full();
  ASSERT_NE(snapshot, nullptr);

  pqxx::connection slow_connection(db_.url());
  pqxx::work slow(slow_connection);
  slow.exec("UPDATE pools SET gpu_quota = 3 WHERE name = 'pool-0'");

  ASSERT_TRUE(storage::UpdatePool(session_, "pool-1", [](core::Pool& pool) {
                pool.gpu_quota = 5;
                return absl::OkStatus();
              }).ok());
  snapshot = Changes(*snapshot);
  ASSERT_NE(snapshot, nullptr);
  ASSERT_EQ(snapshot->pools.size(), 2u);
  EXPECT_EQ(snapshot->pools[0].gpu_quota, 16);  // not committed yet
  EXPECT_EQ(snapshot->pools[1].gpu_quota, 5);

  slow.commit();
  snapshot = Changes(*snapshot);
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->pools[0].gpu_quota, 3);
  ExpectSameSnapshot(*snapshot, *Full(), 0);
}

// A stored rollup whose key is not its recipe's key (as after a change of
// the key's definition) cannot be applied exactly: the incremental read says
// so, and a full read is the answer.
TEST_F(CatalogSnapshotTest, RollupUnderAnotherKeyAsksForAFullRead) {
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(0, 0), "").ok());
  std::shared_ptr<CatalogSnapshot> snapshot = Full();
  ASSERT_NE(snapshot, nullptr);
  Upload(PoolNumber(0, 0), 1, 1);
  db_.Execute("UPDATE evidence_rollups SET recipe_key = 'rk1-old'");
  absl::StatusOr<std::shared_ptr<CatalogSnapshot>> next =
      ReadSnapshotChanges(session_, *snapshot, 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(next.status())) << next.status();
}

}  // namespace
}  // namespace placement::services
