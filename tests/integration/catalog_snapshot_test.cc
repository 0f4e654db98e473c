// An incremental refresh (ReadSnapshotChanges) must give exactly the snapshot
// a full read gives at the same moment, whatever happened in between:
// uploads, pools created, updated and deleted, tokens created, revoked and
// deleted, rollups and SKUs changed by hand, tombstones pruned, and writers
// that commit out of order; a replica whose read is older than the pruned
// tombstones is refused an incremental read and reads in full; and a full
// read reads only the evals stored since the snapshot it replaces. Against
// real PostgreSQL.
#include <algorithm>
#include <functional>
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
#include "storage/stores/catalog_read.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/run_store.h"
#include "storage/stores/token_store.h"
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
  EXPECT_EQ(incremental.pool_reliability, full.pool_reliability)
      << "after step " << step;
  EXPECT_TRUE(incremental.evidence.SameRollups(full.evidence))
      << "after step " << step;
}

class CatalogSnapshotTest : public ::testing::Test {
 protected:
  CatalogSnapshotTest() : session_(db_.url()) { db_.Migrate(); }

  void Upload(const core::Pool& pool, int recipe_number, int seed,
              int evals = 0) {
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
    for (int e = 0; e < evals; ++e) {
      core::EvalEvidence eval;
      eval.serving_sku_id = "L40S-PCIE-48GB";
      eval.serving_precision = core::Precision::kBf16;
      eval.metric = absl::StrCat("metric-", e);
      eval.score = 0.5 + 0.01 * seed;
      in.evals.push_back(eval);
    }
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

  // Prunes every tombstone it may (no retention).
  storage::TombstonePruning Prune() {
    absl::StatusOr<storage::TombstonePruning> pruned =
        storage::PruneCatalogTombstones(session_, absl::ZeroDuration());
    EXPECT_TRUE(pruned.ok()) << pruned.status();
    return pruned.ok() ? *pruned : storage::TombstonePruning{};
  }

  int64_t PruningHorizon() {
    absl::StatusOr<int64_t> horizon = storage::ReadTombstoneHorizon(session_);
    EXPECT_TRUE(horizon.ok()) << horizon.status();
    return horizon.ok() ? *horizon : 0;
  }

  TestDatabase db_;
  storage::DbSession session_;
  std::set<std::string> pools_with_runs_;
};

// Long: one random walk over every kind of change (a case of a few lines
// each), with the counters it keeps asserted at its end: that the walk
// covered what it is meant to.
TEST_F(CatalogSnapshotTest, IncrementalEqualsFullAfterRandomInterleavings) {
  std::mt19937 random(2020);
  std::vector<int> pool_version(12, -1);  // -1: no such pool
  std::vector<std::string> live_tokens;
  int tokens_made = 0;
  int uploads = 0;
  int pool_deletions = 0;
  int token_deletions = 0;
  int rollup_deletions = 0;
  int prunings = 0;        // that deleted tombstones
  int refused_behind = 0;  // incremental reads refused after pruning
  int incremental_after_prune = 0;
  bool pruned_since_refresh = false;
  std::shared_ptr<CatalogSnapshot> snapshot = Full();
  ASSERT_NE(snapshot, nullptr);
  // A second replica that refreshes rarely, so that pruning often passes
  // its last read.
  std::shared_ptr<CatalogSnapshot> lagging = Full();
  ASSERT_NE(lagging, nullptr);
  // An incremental read of `base`, or a full one where pruning took
  // tombstones `base` had not seen (and only then).
  auto refresh = [&](const CatalogSnapshot& base,
                     int step) -> std::shared_ptr<CatalogSnapshot> {
    absl::StatusOr<std::shared_ptr<CatalogSnapshot>> next =
        ReadSnapshotChanges(session_, base, 0);
    if (absl::IsFailedPrecondition(next.status())) {
      EXPECT_LT(base.horizon.xmin, PruningHorizon()) << "after step " << step;
      ++refused_behind;
      return Full();
    }
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok()) return nullptr;
    EXPECT_TRUE((*next)->incremental);
    return *next;
  };
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
      case 9:  // maintenance: tombstones pruned (no retention)
        if (random() % 2 == 0 && Prune().deleted > 0) {
          ++prunings;
          pruned_since_refresh = true;
        }
        break;
      default:
        break;  // nothing: a refresh with no change
    }
    if (random() % 3 != 0) continue;  // several changes per refresh
    std::shared_ptr<CatalogSnapshot> full = Full();
    ASSERT_NE(full, nullptr);
    const bool was_pruned = pruned_since_refresh;
    pruned_since_refresh = false;
    std::shared_ptr<CatalogSnapshot> next = refresh(*snapshot, step);
    ASSERT_NE(next, nullptr);
    if (was_pruned && next->incremental) ++incremental_after_prune;
    ExpectSameSnapshot(*next, *full, step);
    if (HasFailure()) return;
    snapshot = std::move(next);
    if (random() % 6 == 0) {
      std::shared_ptr<CatalogSnapshot> caught_up = refresh(*lagging, step);
      ASSERT_NE(caught_up, nullptr);
      ExpectSameSnapshot(*caught_up, *Full(), step);
      if (HasFailure()) return;
      lagging = std::move(caught_up);
    }
  }
  // The walk did what it is meant to cover.
  EXPECT_GT(uploads, 50);
  EXPECT_GT(pool_deletions, 0);
  EXPECT_GT(token_deletions, 0);
  EXPECT_GT(rollup_deletions, 0);
  EXPECT_GT(prunings, 0);
  EXPECT_GT(refused_behind, 0);
  EXPECT_GT(incremental_after_prune, 0);
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

// Pruning removes the tombstone of a pool deletion: a replica that read
// before the deletion must not read incrementally (it would keep the pool),
// while one that read after it goes on reading incrementally and still sees
// the deletions that follow.
TEST_F(CatalogSnapshotTest, ReplicaBehindThePruningHorizonReadsInFull) {
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(0, 0), "").ok());
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(1, 0), "").ok());
  std::shared_ptr<CatalogSnapshot> behind = Full();
  ASSERT_NE(behind, nullptr);
  db_.Execute("DELETE FROM pools WHERE name = 'pool-0'");
  std::shared_ptr<CatalogSnapshot> current = Changes(*behind);
  ASSERT_NE(current, nullptr);
  ASSERT_EQ(current->pools.size(), 1u);

  // The horizon never passes the cluster's oldest running transaction, and
  // other tests may share the cluster: prune until it passes the deletion.
  storage::TombstonePruning pruned = Prune();
  int64_t deleted = pruned.deleted;
  for (int i = 0; i < 600 && deleted == 0; ++i) {  // at most a minute
    absl::SleepFor(absl::Milliseconds(100));
    pruned = Prune();
    deleted += pruned.deleted;
  }
  EXPECT_EQ(deleted, 1);
  EXPECT_GT(pruned.pruned_below_xid, behind->horizon.xmin);
  // A replica that read after the deletion is passed by the horizon only
  // when transactions elsewhere in the cluster held its read's xmin back;
  // it then reads in full, as placementd does.
  if (pruned.pruned_below_xid > current->horizon.xmin) {
    EXPECT_TRUE(absl::IsFailedPrecondition(
        ReadSnapshotChanges(session_, *current, 0).status()));
    current = Full();
    ASSERT_NE(current, nullptr);
  }
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM catalog_tombstones"), "0");

  absl::StatusOr<std::shared_ptr<CatalogSnapshot>> refused =
      ReadSnapshotChanges(session_, *behind, 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();

  db_.Execute("DELETE FROM pools WHERE name = 'pool-1'");
  std::shared_ptr<CatalogSnapshot> next = Changes(*current);
  ASSERT_NE(next, nullptr);
  EXPECT_TRUE(next->incremental);
  EXPECT_TRUE(next->pools.empty());
  ExpectSameSnapshot(*next, *Full(), 0);

  // A second pruning with nothing new to prune keeps the horizon.
  EXPECT_GE(Prune().pruned_below_xid, pruned.pruned_below_xid);
}

// Pruning keeps what its retention asks for: a recent deletion's tombstone
// stays, and a replica that read before it still reads incrementally.
TEST_F(CatalogSnapshotTest, PruningKeepsTombstonesWithinTheRetention) {
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(0, 0), "").ok());
  std::shared_ptr<CatalogSnapshot> before = Full();
  ASSERT_NE(before, nullptr);
  db_.Execute("DELETE FROM pools WHERE name = 'pool-0'");
  absl::StatusOr<storage::TombstonePruning> pruned =
      storage::PruneCatalogTombstones(session_, absl::Hours(1));
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(pruned->deleted, 0);
  std::shared_ptr<CatalogSnapshot> next = Changes(*before);
  ASSERT_NE(next, nullptr);
  EXPECT_TRUE(next->pools.empty());
}

bool WaitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 600; ++i) {  // at most a minute
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return done();
}

// The fleet model is fitted again only when the rollups (or the SKUs) it is
// fitted to changed: re-reads of the same rows, due refits included, keep
// the last fit; an upload brings a new one.
TEST_F(CatalogSnapshotTest, FleetModelIsNotRefittedWhenNothingChanged) {
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(0, 0), "").ok());
  for (int i = 0; i < 4; ++i) Upload(PoolNumber(0, 0), i, 10 + i);
  // A full re-read on every turn and a refit due on every one.
  EvidenceCache cache(db_.url(), /*reread_interval=*/absl::ZeroDuration(),
                      /*refit_interval=*/absl::ZeroDuration());
  ASSERT_TRUE(WaitUntil([&] { return cache.fleet_refits_skipped() >= 3; }));
  EXPECT_EQ(cache.fleet_fits(), 1);
  std::shared_ptr<const core::FleetModel> fitted = cache.Current()->fleet;
  ASSERT_NE(fitted, nullptr);
  EXPECT_GT(fitted->step_time_cells(), 0);
  EXPECT_EQ(cache.Current()->fleet, fitted);

  Upload(PoolNumber(0, 0), 7, 99);
  ASSERT_TRUE(WaitUntil([&] {
    return cache.Current()->evidence.size() == 5 &&
           cache.Current()->fleet != fitted;
  }));
  EXPECT_EQ(cache.fleet_fits(), 2);
  EXPECT_EQ(cache.Current()->fleet->step_time_cells(),
            fitted->step_time_cells() + 1);
}

// Re-fitted on every change, a snapshot a handler reads on its own session
// (a pool's state report, before it answers) carries a fit of its own
// evidence, not the last one: a plan that waits for that report's version
// reads the same fleet model whether or not the cache's thread read the
// upload first (the queue replay's plans repeated only when nothing else
// ran on the machine).
TEST_F(CatalogSnapshotTest, AHandlersReadIsFittedWhenEveryChangeIs) {
  ASSERT_TRUE(storage::CreatePool(session_, PoolNumber(0, 0), "").ok());
  for (int i = 0; i < 4; ++i) Upload(PoolNumber(0, 0), i, 10 + i);
  EvidenceCache cache(db_.url(), /*reread_interval=*/absl::Hours(1),
                      /*refit_interval=*/absl::ZeroDuration());
  ASSERT_TRUE(WaitUntil([&] {
    return cache.Current() != nullptr && cache.Current()->fleet != nullptr;
  }));
  std::shared_ptr<const core::FleetModel> fitted = cache.Current()->fleet;

  for (int i = 4; i < 7; ++i) {
    Upload(PoolNumber(0, 0), i, 17 + i);  // succeeded: a step-time cell
    // At once, before the cache's thread is due to read it (it waits 50 ms
    // after a notification).
    ASSERT_TRUE(cache.ReloadWith(session_).ok());
    std::shared_ptr<const CatalogSnapshot> read = cache.Current();
    ASSERT_EQ(read->evidence.size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(read->fleet->step_time_cells(),
              fitted->step_time_cells() + i - 3);
  }
}

// Migration 0017's figures reach the snapshot, in a full read and in an
// incremental one: each rollup's busy and succeeded GPU time and each
// pool's failure row (read whole each time; a changed row alone is a
// change, a row gone makes the incremental read refuse).
TEST_F(CatalogSnapshotTest, StartupAndFailureEvidenceReachTheSnapshot) {
  const core::Pool pool = PoolNumber(0, 0);
  ASSERT_TRUE(storage::CreatePool(session_, pool, "").ok());
  std::shared_ptr<CatalogSnapshot> base = Full();
  ASSERT_NE(base, nullptr);
  EXPECT_TRUE(base->pool_reliability.empty());

  Upload(pool, 0, 11);  // succeeded: 100 steps of 0.31 s in 16 min
  Upload(pool, 0, 10);  // out of memory: 100 attempted of 0.3 s, 15 min
  std::shared_ptr<CatalogSnapshot> next = Changes(*base);
  ASSERT_NE(next, nullptr);
  std::shared_ptr<CatalogSnapshot> full = Full();
  ASSERT_NE(full, nullptr);
  ExpectSameSnapshot(*next, *full, 0);

  const std::string key = core::RecipeKey(RecipeNumber(0));
  const std::optional<core::EvidenceStats> stats = next->Find(key, pool.sku_id);
  ASSERT_TRUE(stats.has_value());
  ASSERT_TRUE(stats->busy_gpu_hours_per_step.has_value());
  // (100 x 0.31 + 100 x 0.3) GPU-s over 200 steps; the succeeded run's
  // 960 s less its 31 s of steps were start-up.
  EXPECT_NEAR(*stats->busy_gpu_hours_per_step, 61.0 / 3600 / 200, 1e-12);
  ASSERT_TRUE(stats->startup_gpu_hours_per_run.has_value());
  EXPECT_NEAR(*stats->startup_gpu_hours_per_run, (960.0 - 31) / 3600, 1e-9);
  const core::PoolReliabilityRollup single =
      next->PoolReliability(pool.name, false);
  EXPECT_EQ(single.runs, 2);
  EXPECT_EQ(single.attempts, 2);
  EXPECT_NEAR(single.run_hours, 31.0 / 60, 1e-12);
  EXPECT_EQ(single.preempted_attempts, 0);
  EXPECT_EQ(next->PoolReliability(pool.name, true).runs, 0);

  // A changed pool row alone: one change, applied.
  db_.Execute(
      "UPDATE pool_reliability_rollups SET preempted_attempts = 1, "
      "attempt_lost_microseconds = 360000000");
  std::shared_ptr<CatalogSnapshot> after = Changes(*next);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->changes_applied, 1);
  EXPECT_EQ(after->PoolReliability(pool.name, false).preempted_attempts, 1);
  EXPECT_NEAR(after->PoolReliability(pool.name, false).failure_lost_hours, 0.1,
              1e-12);
  full = Full();
  ASSERT_NE(full, nullptr);
  ExpectSameSnapshot(*after, *full, 1);
  EXPECT_FALSE(after->evidence.SameRollups(next->evidence));
  // Nothing changed: nothing applied.
  std::shared_ptr<CatalogSnapshot> again = Changes(*after);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->changes_applied, 0);

  // A row removed by hand: only a full read is exact.
  db_.Execute("DELETE FROM pool_reliability_rollups");
  EXPECT_TRUE(absl::IsFailedPrecondition(
      ReadSnapshotChanges(session_, *after, 0).status()));
}

// Eval rows are never updated nor deleted: a full read (every 10 minutes,
// after each reconnection) takes the evals of the snapshot it replaces as
// they are and reads only those stored since, where it read every eval of
// the history each time. What it holds is what a first read of everything
// gets. A table emptied by hand (TRUNCATE) is another table: read again,
// and an incremental read refuses.
TEST_F(CatalogSnapshotTest, AFullReadReadsOnlyTheEvalsStoredSinceTheLast) {
  const core::Pool pool = PoolNumber(0, 0);
  ASSERT_TRUE(storage::CreatePool(session_, pool, "").ok());
  Upload(pool, 0, 1, /*evals=*/3);
  std::shared_ptr<CatalogSnapshot> first = Full();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->evals_read, 3);

  Upload(pool, 0, 2, /*evals=*/2);
  absl::StatusOr<std::shared_ptr<CatalogSnapshot>> second =
      ReadFullSnapshot(session_, 0, first.get());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->evals_read, 2);
  EXPECT_EQ((*second)->evidence.eval_count(), 5u);
  std::shared_ptr<CatalogSnapshot> everything = Full();
  ASSERT_NE(everything, nullptr);
  EXPECT_EQ(everything->evals_read, 5);
  const std::string key = core::RecipeKey(RecipeNumber(0));
  auto evals_of = [&](const CatalogSnapshot& snapshot) {
    std::vector<std::tuple<std::string, std::string, double>> out;
    for (const core::EvalEvidence& e :
         snapshot.FindEvals(key, "L40S-PCIE-48GB", core::Precision::kBf16)) {
      out.emplace_back(e.run_id, e.metric, e.score);
    }
    return out;
  };
  EXPECT_EQ(evals_of(**second), evals_of(*everything));
  EXPECT_EQ(evals_of(**second).size(), 5u);

  Upload(pool, 0, 3, /*evals=*/1);
  std::shared_ptr<CatalogSnapshot> third = Changes(**second);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->evals_read, 1);
  EXPECT_EQ(third->evidence.eval_count(), 6u);

  db_.Execute("TRUNCATE eval_results");
  EXPECT_TRUE(absl::IsFailedPrecondition(
      ReadSnapshotChanges(session_, *third, 0).status()));
  absl::StatusOr<std::shared_ptr<CatalogSnapshot>> emptied =
      ReadFullSnapshot(session_, 0, third.get());
  ASSERT_TRUE(emptied.ok()) << emptied.status();
  EXPECT_EQ((*emptied)->evidence.eval_count(), 0u);
}

}  // namespace
}  // namespace placement::services
