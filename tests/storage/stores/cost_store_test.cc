// The cost report, served from the daily rollups (per detail row, per day,
// pool and SKU, and per day and SKU), equals an independent GROUP BY over the
// raw runs, for runs stored concurrently, retried uploads included.
#include "storage/stores/cost_store.h"

#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "core/recipe.h"
#include "gtest/gtest.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/run_store.h"
#include "tests/storage/stored_records.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::TestDatabase;

struct PoolSpec {
  const char* name;
  const char* sku;
  int64_t rate;
  std::optional<int64_t> list_price;
};
constexpr PoolSpec kPools[] = {
    {"p-a100", "A100-SXM4-80GB", 3'210'987, 4'500'000},
    {"p-l40s", "L40S-PCIE-48GB", 1'234'567, std::nullopt},
    {"p-h100", "H100-SXM5-80GB", 5'500'001, 9'876'543},
};

// Two nodes, at the spec's rate and list price.
core::Pool PoolFor(const PoolSpec& spec) {
  core::Pool pool = testing::TrainingPool(spec.name, spec.sku,
                                          core::Fabric::kNvlink, spec.rate);
  pool.node_count = 2;
  pool.gpu_quota = 16;
  pool.list_price_micros_per_gpu_hour = spec.list_price;
  return pool;
}

absl::CivilDay Today() {
  return absl::ToCivilDay(absl::Now(), absl::UTCTimeZone());
}

// A run of random shape ending on one of the last 40 days.
RunToStore RandomRun(std::mt19937& random, int i) {
  static const char* const kTeams[] = {"", "vision", "nlp"};
  static const core::RunOutcome kOutcomes[] = {
      core::RunOutcome::kSucceeded, core::RunOutcome::kSucceeded,
      core::RunOutcome::kFailed, core::RunOutcome::kOom,
      core::RunOutcome::kPreempted};
  const PoolSpec& pool = kPools[random() % std::size(kPools)];
  core::Recipe recipe;
  recipe.model = random() % 2 == 0 ? "Llama-3.1-8B" : "Llama-2-7B";
  recipe.method = random() % 3 == 0 ? core::FineTuneMethod::kFull
                                    : core::FineTuneMethod::kLora;
  recipe.lora_rank = recipe.method == core::FineTuneMethod::kLora ? 16 : 0;
  recipe.sequence_length = 1024 << (random() % 3);
  recipe.micro_batch_size = 2;
  const char* team = kTeams[random() % std::size(kTeams)];
  const int gpus = 1 << (random() % 4);
  const absl::Time ended =
      absl::FromCivil(Today() - static_cast<int>(random() % 40),
                      absl::UTCTimeZone()) +
      absl::Seconds(random() % 86400) +
      absl::Microseconds(random() % 1'000'000);
  RunToStore in = testing::SucceededRun(recipe, PoolFor(pool), i, ended);
  core::MeasuredRun& run = in.run;
  run.team = team;
  testing::OnNvlinkGpus(gpus, &run);
  run.started = run.ended - absl::Seconds(60 + random() % 30000) -
                absl::Microseconds(random() % 1'000'000);
  run.steps_attempted = random() % 5000;
  run.steps_succeeded =
      run.steps_attempted == 0 ? 0 : random() % (run.steps_attempted + 1);
  run.retries = static_cast<int>(random() % 4);
  run.outcome = kOutcomes[random() % std::size(kOutcomes)];
  return in;
}

class CostStoreTest : public ::testing::Test {
 protected:
  CostStoreTest() : session_(db_.url()) {
    db_.Migrate();
    for (const PoolSpec& spec : kPools) {
      EXPECT_TRUE(CreatePool(session_, PoolFor(spec), spec.name).ok());
    }
  }

  // The report's rows as text, one line a row, in key order.
  std::string Report(const CostQuery& query) {
    std::vector<std::string> lines;
    std::optional<CostGroupKey> after;
    for (;;) {
      absl::StatusOr<CostPage> page = GetCostReport(session_, query, after, 7);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) return "";
      for (const CostRow& r : page->rows) {
        lines.push_back(absl::StrCat(
            r.key.period, "|", r.key.sku, "|", r.key.pool, "|",
            r.key.recipe_key, "|", r.key.model, "|", r.key.method, "|",
            r.key.team, "|", r.key.outcome, "|", r.runs, "|", r.successful_runs,
            "|", r.retries, "|", r.steps_attempted, "|", r.successful_steps,
            "|", r.gpu_microseconds, "|", r.wasted_gpu_microseconds, "|",
            r.internal_cost_micros, "|",
            r.list_price_cost_micros.has_value()
                ? absl::StrCat(*r.list_price_cost_micros)
                : "none",
            "|",
            r.occupancy.has_value()
                ? absl::StrCat(r.occupancy->used_gpu_microseconds)
                : "-"));
      }
      if (!page->more) break;
      after = page->rows.back().key;
    }
    return absl::StrJoin(lines, "\n");
  }

  // The same figures straight from benchmark_runs and pools. `period`,
  // `sku`, `pool`, `team`, `outcome` are SQL expressions over r (runs) ('' for
  // a dimension not grouped by); `work` is the pool's GPU time in the row's
  // period over every run ('-' when not grouped by pool); `by_recipe`
  // groups by recipe key, model and method too.
  std::string Raw(const std::string& period, const std::string& sku,
                  const std::string& pool, const std::string& team,
                  const std::string& outcome, const std::string& where,
                  bool work, bool by_recipe = false) {
    const std::string recipe_keys =
        by_recipe
            ? "r.recipe_key AS k_rk, r.model AS k_model, r.method AS k_method"
            : "'' AS k_rk, '' AS k_model, '' AS k_method";
    const std::string first = absl::FormatCivilTime(Today() - 45);
    const std::string after = absl::FormatCivilTime(Today() + 1);
    const std::string in_range = absl::StrCat(
        "r.ended_at >= '", first, " 00:00:00+00' AND r.ended_at < '", after,
        " 00:00:00+00'");
    const std::string day = "(r.ended_at AT TIME ZONE 'UTC')::date";
    const std::string period_of = absl::StrReplaceAll(period, {{"DAY", day}});
    const std::string work_column =
        work
            ? absl::StrCat(
                  "(SELECT sum(w.gpu_microseconds) FROM benchmark_runs w WHERE "
                  "w.pool_name = g.k_pool AND ",
                  absl::StrReplaceAll(in_range, {{"r.", "w."}}), " AND ",
                  absl::StrReplaceAll(period_of, {{"r.", "w."}}),
                  " IS NOT DISTINCT FROM g.p)::text")
            : "'-'";
    return db_.QueryValue(absl::StrCat(
        "SELECT string_agg(concat_ws('|', coalesce(to_char(p, 'YYYY-MM-DD'), "
        "''), k_sku, k_pool, k_rk, k_model, k_method, k_team, k_outcome, runs, "
        "successful_runs, "
        "retries, steps_attempted, successful_steps, gpu_us, wasted_us, "
        "cost, coalesce(list::text, 'none'), ",
        work_column,
        "), E'\\n' ORDER BY coalesce(to_char(p, 'YYYY-MM-DD'), '') COLLATE "
        "\"C\", k_sku COLLATE \"C\", k_pool COLLATE \"C\", k_rk COLLATE \"C\", "
        "k_model COLLATE \"C\", k_method COLLATE \"C\", k_team COLLATE "
        "\"C\", k_outcome COLLATE \"C\") FROM (SELECT ",
        period_of, " AS p, ", sku, " AS k_sku, ", pool, " AS k_pool, ",
        recipe_keys, ", ", team, " AS k_team, ", outcome,
        " AS k_outcome, count(*) AS runs, count(*) FILTER (WHERE outcome = "
        "'SUCCEEDED') AS successful_runs, sum(retries) AS retries, "
        "sum(steps_attempted) AS steps_attempted, sum(steps_succeeded) AS "
        "successful_steps, "
        "sum(gpu_microseconds) AS gpu_us, sum(CASE WHEN steps_attempted = 0 "
        "AND outcome <> 'SUCCEEDED' THEN gpu_microseconds "
        "WHEN steps_attempted = 0 THEN 0 "
        "ELSE round(gpu_microseconds::numeric * (steps_attempted - "
        "steps_succeeded) / steps_attempted) END) AS wasted_us, "
        "div(sum(gpu_microseconds::numeric * "
        "p.internal_rate_micros_per_gpu_hour) + 1800000000, 3600000000) AS "
        "cost, CASE WHEN bool_and(p.list_price_micros_per_gpu_hour IS NOT "
        "NULL) THEN div(sum(gpu_microseconds::numeric * "
        "p.list_price_micros_per_gpu_hour) + 1800000000, 3600000000) END AS "
        "list FROM benchmark_runs r JOIN pools p ON p.name = r.pool_name "
        "WHERE ",
        in_range, where, " GROUP BY 1, 2, 3, 4, 5, 6, 7, 8) g"));
  }

  // The report of `query` has rows, and they are those of `raw`.
  void ExpectSameRows(const CostQuery& query, const std::string& raw) {
    const std::string report = Report(query);
    EXPECT_NE(report, "");
    EXPECT_EQ(report, raw);
  }

  // The rows of rollup table `coarse` are those of `fine` summed by `key`:
  // neither has a row the other lacks.
  void ExpectSummedRollup(const std::string& coarse, const std::string& fine,
                          const std::string& key) {
    const std::string sums =
        "runs, successful_runs, retries, steps_attempted, successful_steps, "
        "gpu_microseconds, wasted_gpu_microseconds, internal_rate_x_gpu_us, "
        "list_price_x_gpu_us, list_priced_gpu_microseconds";
    const std::string coarse_rows =
        absl::StrCat("SELECT ", key, ", ", sums, " FROM ", coarse);
    const std::string summed =
        absl::StrCat("SELECT ", key, ", ",
                     absl::StrReplaceAll(absl::StrCat("sum(", sums, ")"),
                                         {{", ", "), sum("}}),
                     " FROM ", fine, " GROUP BY ", key);
    SCOPED_TRACE(coarse);
    EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT count(*) FROM (", coarse_rows,
                                          " EXCEPT ", summed, ") d")),
              "0");
    EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT count(*) FROM (", summed,
                                          " EXCEPT ", coarse_rows, ") d")),
              "0");
    EXPECT_NE(db_.QueryValue(absl::StrCat("SELECT count(*) FROM ", coarse)),
              "0");
  }

  CostQuery Range() const {
    CostQuery q;
    q.start = Today() - 45;
    q.end = Today() + 1;
    return q;
  }

  TestDatabase db_;
  DbSession session_;
};

// Long: the independent GROUP BY is written out here, beside the report it
// checks, so that it shares no code with the store.
TEST_F(CostStoreTest, ReportsEqualAGroupByOverRawRunsWithRetriedUploads) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 random(seed);
  std::vector<RunToStore> runs;
  for (int i = 0; i < 300; ++i) runs.push_back(RandomRun(random, i));
  // Four uploaders, each sending its share of runs [from, to) and then every
  // one of them again (a retry after a lost acknowledgement): each run must
  // count once.
  const auto upload = [&](size_t from, size_t to) {
    std::vector<std::thread> uploaders;
    for (size_t t = 0; t < 4; ++t) {
      uploaders.emplace_back([&, t] {
        DbSession session(db_.url());
        for (int pass = 0; pass < 2; ++pass) {
          for (size_t i = from + t; i < to; i += (pass == 0 ? 4 : 1)) {
            absl::StatusOr<RunAck> ack = InsertRun(session, runs[i]);
            if (!ack.ok()) {
              // Two first uploads of one run at once: one of them is told to
              // retry; the retry is answered from the stored run.
              ASSERT_TRUE(absl::IsAborted(ack.status())) << ack.status();
              ASSERT_TRUE(InsertRun(session, runs[i]).ok());
            }
          }
        }
      });
    }
    for (auto& thread : uploaders) thread.join();
  };
  upload(0, 200);
  ASSERT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "200");

  // Served from cost_daily_sku_rollups: by SKU and day (its rows as they
  // are); by SKU and month; everything together; by day filtered by SKU; by
  // SKU and day filtered by SKU.
  CostQuery by_sku_day = Range();
  by_sku_day.by_sku = true;
  by_sku_day.period = CostPeriod::kDay;
  ExpectSameRows(by_sku_day,
                 Raw("DAY", "r.sku_id", "''", "''", "''", "", false));

  CostQuery by_sku_month = Range();
  by_sku_month.by_sku = true;
  by_sku_month.period = CostPeriod::kMonth;
  ExpectSameRows(by_sku_month, Raw("date_trunc('month', DAY::timestamp)::date",
                                   "r.sku_id", "''", "''", "''", "", false));

  ExpectSameRows(Range(), Raw("NULL::date", "''", "''", "''", "''", "", false));

  CostQuery one_sku_day = Range();
  one_sku_day.period = CostPeriod::kDay;
  one_sku_day.skus = {"H100-SXM5-80GB"};
  ExpectSameRows(one_sku_day,
                 Raw("DAY", "''", "''", "''", "''",
                     " AND r.sku_id IN ('H100-SXM5-80GB')", false));

  CostQuery two_skus_day = by_sku_day;
  two_skus_day.skus = {"A100-SXM4-80GB", "H100-SXM5-80GB"};
  ExpectSameRows(
      two_skus_day,
      Raw("DAY", "r.sku_id", "''", "''", "''",
          " AND r.sku_id IN ('A100-SXM4-80GB', 'H100-SXM5-80GB')", false));

  // Served from cost_daily_pool_rollups: by pool and month (with the pool's
  // work); filtered by SKU and pool.
  CostQuery by_pool_month = Range();
  by_pool_month.by_pool = true;
  by_pool_month.period = CostPeriod::kMonth;
  ExpectSameRows(by_pool_month, Raw("date_trunc('month', DAY::timestamp)::date",
                                    "''", "r.pool_name", "''", "''", "", true));

  CostQuery by_pool_sku_day = Range();
  by_pool_sku_day.by_pool = true;
  by_pool_sku_day.by_sku = true;
  by_pool_sku_day.period = CostPeriod::kDay;
  ExpectSameRows(by_pool_sku_day,
                 Raw("DAY", "r.sku_id", "r.pool_name", "''", "''", "", true));

  CostQuery filtered = Range();
  filtered.by_sku = true;
  filtered.skus = {"A100-SXM4-80GB", "L40S-PCIE-48GB"};
  filtered.pools = {"p-a100"};
  ExpectSameRows(
      filtered, Raw("NULL::date", "r.sku_id", "''", "''", "''",
                    " AND r.sku_id IN ('A100-SXM4-80GB', 'L40S-PCIE-48GB') AND "
                    "r.pool_name IN ('p-a100')",
                    false));

  // Served from cost_daily_rollups: by team and outcome; filtered by team.
  CostQuery by_team = Range();
  by_team.by_team = true;
  by_team.by_outcome = true;
  by_team.by_pool = true;
  ExpectSameRows(by_team, Raw("NULL::date", "''", "r.pool_name", "r.team",
                              "r.outcome", "", true));

  // Grouped by every dimension and day: the detailed rollup's rows.
  CostQuery by_all_day = Range();
  by_all_day.by_sku = by_all_day.by_pool = by_all_day.by_recipe_key = true;
  by_all_day.by_model = by_all_day.by_method = by_all_day.by_team = true;
  by_all_day.by_outcome = true;
  by_all_day.period = CostPeriod::kDay;
  ExpectSameRows(by_all_day, Raw("DAY", "r.sku_id", "r.pool_name", "r.team",
                                 "r.outcome", "", true, true));

  CostQuery one_team = Range();
  one_team.by_sku = true;
  one_team.period = CostPeriod::kWeek;
  one_team.teams = {"vision"};
  ExpectSameRows(one_team,
                 Raw("date_trunc('week', DAY::timestamp)::date", "r.sku_id",
                     "''", "''", "''", " AND r.team = 'vision'", false));

  // Each coarser rollup is exactly the finer one, summed, row for row.
  ExpectSummedRollup("cost_daily_pool_rollups", "cost_daily_rollups",
                     "day, pool_name, sku_id");
  ExpectSummedRollup("cost_daily_sku_rollups", "cost_daily_pool_rollups",
                     "day, sku_id");

  // More uploads into the same days, after this session has prepared (and
  // many times run) the report statements: the reports follow them.
  upload(200, 300);
  ASSERT_EQ(db_.QueryValue("SELECT count(*) FROM benchmark_runs"), "300");
  ExpectSameRows(by_sku_day,
                 Raw("DAY", "r.sku_id", "''", "''", "''", "", false));
  ExpectSameRows(by_pool_month, Raw("date_trunc('month', DAY::timestamp)::date",
                                    "''", "r.pool_name", "''", "''", "", true));
  ExpectSameRows(by_team, Raw("NULL::date", "''", "r.pool_name", "r.team",
                              "r.outcome", "", true));
  ExpectSameRows(by_pool_sku_day,
                 Raw("DAY", "r.sku_id", "r.pool_name", "''", "''", "", true));
  ExpectSameRows(by_all_day, Raw("DAY", "r.sku_id", "r.pool_name", "r.team",
                                 "r.outcome", "", true, true));
  ExpectSummedRollup("cost_daily_pool_rollups", "cost_daily_rollups",
                     "day, pool_name, sku_id");
  ExpectSummedRollup("cost_daily_sku_rollups", "cost_daily_pool_rollups",
                     "day, sku_id");
}

}  // namespace
}  // namespace placement::storage
