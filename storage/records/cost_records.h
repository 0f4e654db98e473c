#ifndef PLACEMENT_STORAGE_COST_RECORDS_H_
#define PLACEMENT_STORAGE_COST_RECORDS_H_

// The records of the cost store (cost_store.h), without libpqxx: the API
// layer's converters and request validation see these types alone.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/civil_time.h"

namespace placement::storage {

// The time bucket of a cost report row (UTC; weeks start on Monday).
enum class CostPeriod { kNone, kDay, kWeek, kMonth };

// A cost report over the daily cost rollups (migrations/0004_cost.up.sql):
// the runs that ended on UTC days [start, end), filtered and grouped.
// Filters hold names as stored ("A100-SXM4-80GB", "LORA", "SUCCEEDED"); an
// empty list matches anything.
struct CostQuery {
  absl::CivilDay start;  // inclusive
  absl::CivilDay end;    // exclusive; after start (the caller validates)
  std::vector<std::string> skus;
  std::vector<std::string> pools;
  std::vector<std::string> recipe_keys;
  std::vector<std::string> models;
  std::vector<std::string> methods;
  std::vector<std::string> teams;
  std::vector<std::string> outcomes;
  bool by_sku = false;
  bool by_pool = false;
  bool by_recipe_key = false;
  bool by_model = false;
  bool by_method = false;
  bool by_team = false;
  bool by_outcome = false;
  CostPeriod period = CostPeriod::kNone;
};

// The group of a row; "" for each dimension not grouped by. `period` is the
// first day of the row's day, week or month ("YYYY-MM-DD"). Rows are ordered
// by the key's fields in this order, byte-wise: the key of a page's last row
// is where the next page starts.
struct CostGroupKey {
  std::string period;
  std::string sku;
  std::string pool;
  std::string recipe_key;
  std::string model;
  std::string method;
  std::string team;
  std::string outcome;

  friend bool operator==(const CostGroupKey&, const CostGroupKey&) = default;
};

// A pool's occupancy over a row's window (the report range, or the part of
// the row's period inside it): set only when the report is grouped by pool.
struct PoolOccupancy {
  double available_gpu_hours = 0;     // the pool's GPUs x the window's hours
  int64_t used_gpu_microseconds = 0;  // all work on the pool, unfiltered
  double occupancy = 0;               // used / available
  // Internal cost per successful step with the pool's idle hours charged
  // too: the row's internal cost / occupancy / successful steps, in
  // nano-units (1e-9 of the currency), rounded half up once. Absent without
  // successful steps.
  std::optional<int64_t> amortized_cost_per_successful_step_nanos;
};

// Sums of one group. GPU time and money are exact: GPU-microseconds are
// integer sums, money is summed as exact integer products in SQL numeric and
// rounded half up once, here.
struct CostRow {
  CostGroupKey key;
  int64_t runs = 0;
  int64_t successful_runs = 0;
  int64_t retries = 0;
  int64_t steps_attempted = 0;
  int64_t successful_steps = 0;  // kept by every run (docs/FINANCE.md)
  int64_t gpu_microseconds = 0;
  int64_t wasted_gpu_microseconds = 0;
  // Absent without successful steps.
  std::optional<double> gpu_hours_per_1k_successful_steps;
  // At the internal rates snapshotted when each run was stored.
  int64_t internal_cost_micros = 0;
  std::optional<int64_t> internal_cost_per_successful_step_nanos;
  // At list price: absent unless every run of the row had one.
  std::optional<int64_t> list_price_cost_micros;
  std::optional<int64_t> list_price_cost_per_successful_step_nanos;
  // Internal cost over list-price cost (exact quotient as a double).
  std::optional<double> observed_over_list_price_ratio;
  std::optional<PoolOccupancy> occupancy;
};

struct CostPage {
  std::vector<CostRow> rows;
  bool more = false;  // whether rows after the last one exist
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_COST_RECORDS_H_
