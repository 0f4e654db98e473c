#ifndef PLACEMENT_SERVICES_CONSOLE_MODELS_H_
#define PLACEMENT_SERVICES_CONSOLE_MODELS_H_

// What each page shows: the API's own answers, as the readings that the RPC
// handlers call return them (services/rpc/readings.h), and what the console
// derives from them (figures.h). A section the viewer's role may not read
// is absent (nullopt) and named in `withheld`. page_reads.h fills these;
// render/ turns them into HTML without any I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "core/evidence/evidence.h"
#include "core/evidence/pool_reliability.h"
#include "placement/v1/catalog.pb.h"
#include "placement/v1/cost.pb.h"
#include "placement/v1/placement.pb.h"
#include "services/console/render/charts.h"
#include "services/console/routes.h"

namespace placement::services::console {

// What every page's frame shows.
struct PageFrame {
  PageId page = PageId::kPools;
  std::string title;
  std::string viewer;  // Viewer::Describe()
  // The pages the viewer may open, in navigation order.
  std::vector<const Route*> nav;
  absl::Time rendered_at = absl::InfinitePast();
  // When the replica's snapshot (pools, evidence, standards) was read.
  absl::Time snapshot_time = absl::InfinitePast();
  // Sections left out because the role table does not let the viewer call
  // the RPC they show: "cost per successful step (GetCostReport)".
  std::vector<std::string> withheld;
};

// A range of whole UTC days, [first, end).
struct DayRange {
  absl::CivilDay first;
  absl::CivilDay end;  // exclusive
  int days() const { return static_cast<int>(end - first); }
};

// Failed attempts of one of the pool's causes, as the reliability rollup
// counts them (per failed attempt: a run's retries are failed attempts),
// and the hours that cause is counted over: every run's for preemptions
// and hardware errors, the multi-GPU runs' for collective timeouts
// (core::PoolReliabilityRollup::ExposureHours).
struct CauseFailures {
  core::RunOutcome cause;
  int64_t failed_attempts = 0;
  double exposure_hours = 0;
};

// A pool's failures as plans price them (core::EstimateFailureRate) and the
// failed attempts behind them by cause, from the snapshot's reliability
// rollups.
struct PoolFailures {
  int64_t runs = 0;
  int64_t attempts = 0;
  double run_hours = 0;
  core::FailureRate single_gpu_layout;
  core::FailureRate multi_gpu_layout;
  std::vector<CauseFailures> by_cause;  // preempted, hardware, collective
};

// A pool's cost over the page's range: GetCostReport's row grouped by pool,
// and the band its days span (DailyCostBand).
struct PoolCost {
  v1::CostReportRow row;
  std::optional<ChartBand> band;  // currency units per successful step
  int band_days = 0;              // days with successful steps
};

struct PoolsPage {
  DayRange range;
  v1::ListPoolsResponse pools;  // one page of ListPools (up to 1000)
  // By pool name; absent without the role for the section.
  std::optional<std::map<std::string, PoolCost>> cost;
  std::optional<std::map<std::string, PoolFailures>> failures;
  std::optional<std::map<std::string, std::vector<v1::Standard>>> standards;
};

struct PoolPage {
  DayRange range;
  v1::Pool pool;
  // GetCostReport for the pool: over the range, by day, by outcome, and by
  // day and outcome.
  struct Cost {
    PoolCost total;
    std::vector<v1::CostReportRow> by_day;
    std::vector<v1::CostReportRow> by_outcome;
    std::vector<v1::CostReportRow> by_day_and_outcome;
  };
  std::optional<Cost> cost;
  std::optional<PoolFailures> failures;
  std::optional<std::vector<v1::Standard>> standards;  // in force on it
};

// One recorded plan in the list.
struct PlanRow {
  std::string plan_id;
  absl::Time created_at = absl::InfinitePast();
  std::string team;
  std::string model;
  std::string method;  // short name ("LORA")
  std::string recipe_key;
  std::string objective;
  std::string chosen_pool;
  std::string chosen_sku;
  int64_t total_steps = 0;
  int64_t warnings = 0;
};

struct PlansPage {
  std::vector<PlanRow> plans;
  std::string older_than;  // the plan id the next page starts before; ""
};

struct PlanPage {
  v1::GetPlanResponse plan;  // GetPlan's answer
  // GetBakeOffStatus's answer; absent without the role, or when the plan
  // proposed no bake-off.
  std::optional<v1::GetBakeOffStatusResponse> bake_off;
};

// The predicted-against-observed pairs of one SKU behind its accuracy row.
struct AccuracyPoints {
  std::string sku;
  std::vector<ChartPoint> peak_memory_gb;
  std::vector<ChartPoint> gpu_hours_per_step;  // runs with a successful step
  int limit = 0;  // the newest `limit` outcomes are drawn
};

struct AccuracyPage {
  std::optional<absl::CivilDay> from;
  std::optional<absl::CivilDay> to;      // inclusive, as the form shows it
  v1::GetPlanAccuracyResponse accuracy;  // GetPlanAccuracy's answer
  std::vector<AccuracyPoints> points;    // one per SKU of `accuracy`
};

// The cost page groups by one dimension.
enum class CostGrouping { kTeam, kSku, kPool };
const char* CostGroupingName(CostGrouping grouping);  // "team", "sku", "pool"

struct CostPage {
  DayRange range;
  CostGrouping by = CostGrouping::kTeam;
  v1::CostReportRow total;  // GetCostReport without grouping ("" rows: none)
  bool has_total = false;
  std::vector<v1::CostReportRow> rows;        // grouped by `by`
  std::vector<v1::CostReportRow> daily_rows;  // grouped by `by` and day
  bool truncated = false;  // more rows than the page reads (kMaxCostRows)
};

// What a plan of a standard's proving request says now, on this replica's
// evidence: the same planning PlacePlan does (services/rpc/plan_on_snapshot).
struct StandardNow {
  bool checked = false;
  std::string error;        // why it could not be checked
  std::string governed_by;  // the standard that governs the recipe now
  bool applied = false;
  std::string reason;
  bool contradicted = false;
  std::vector<std::string> contradictions;
};

struct StandardsPage {
  std::vector<v1::Standard> standards;  // ListStandards, retired included
  std::string next_page_token;
  // By standard id, for active ones; absent without the role to read plans.
  std::optional<std::map<std::string, StandardNow>> now;
};

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_MODELS_H_
