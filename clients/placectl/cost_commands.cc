#include "clients/placectl/cost_commands.h"

#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "clients/placectl/recipe_file.h"
#include "core/evidence/evidence.h"
#include "core/money.h"
#include "core/recipe.h"
#include "placement/v1/cost.grpc.pb.h"

// Filters go through one --where flag (key=value pairs) so that the cost
// command shares no flag with the others' differently meant ones.
PLACECTL_FLAG(std::string, from, "", "cost",
              "first UTC day, YYYY-MM-DD (default: 29 days before --to)");
PLACECTL_FLAG(std::string, to, "", "cost",
              "last UTC day, inclusive, YYYY-MM-DD (default: today)");
PLACECTL_FLAG(std::string, group_by, "", "cost",
              "comma-separated sku,pool,recipe_key,model,method,team,outcome "
              "and one of day,week,month");
PLACECTL_FLAG(std::string, where, "", "cost",
              "filters key=value,... with keys sku, pool, recipe_key, model, "
              "method, team, outcome (a key repeated: any of its values)");
PLACECTL_FLAG(bool, csv, false, "cost", "print CSV instead of a table");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;

// A core enum as the API's: they share names and numbers (the
// static_asserts of services/api/recipe_convert.cc), and placectl does not
// link the server's converters.
template <typename Proto, typename Core>
Proto EnumToProto(Core value) {
  return static_cast<Proto>(static_cast<int>(value));
}

std::string Upper(absl::string_view s) {
  std::string out = absl::AsciiStrToUpper(s);
  for (char& c : out) {
    if (c == '-') c = '_';
  }
  return out;
}

bool ParseDay(const std::string& text, absl::CivilDay* day) {
  return absl::ParseCivilTime(text, day);
}

void SetDay(absl::CivilDay day, google::protobuf::Timestamp* out) {
  out->set_seconds(
      absl::ToUnixSeconds(absl::FromCivil(day, absl::UTCTimeZone())));
}

// The flag that set a field of GetCostReportRequest, for the service's field
// violations: "start_time" -> "--from", "filter.skus[0]" -> "--where sku=".
std::string FlagOfField(const std::string& field) {
  static const std::pair<absl::string_view, absl::string_view> kFlags[] = {
      {"start_time", "--from"},
      {"end_time", "--to"},
      {"group_by", "--group_by"},
      {"filter.skus", "--where sku="},
      {"filter.pools", "--where pool="},
      {"filter.recipe_keys", "--where recipe_key="},
      {"filter.models", "--where model="},
      {"filter.methods", "--where method="},
      {"filter.teams", "--where team="},
      {"filter.outcomes", "--where outcome="},
  };
  for (const auto& [prefix, flag] : kFlags) {
    if (absl::StartsWith(field, prefix)) {
      return absl::StrCat(flag, " (", field, ")");
    }
  }
  return field;
}

// --from and --to: the request's window, whole UTC days.
absl::Status SetRangeFromFlags(v1::GetCostReportRequest* request) {
  absl::CivilDay last = absl::ToCivilDay(absl::Now(), absl::UTCTimeZone());
  const std::string to = absl::GetFlag(FLAGS_to);
  if (!to.empty() && !ParseDay(to, &last)) {
    return absl::InvalidArgumentError("--to must be a day, YYYY-MM-DD");
  }
  absl::CivilDay first = last - 29;
  const std::string from = absl::GetFlag(FLAGS_from);
  if (!from.empty() && !ParseDay(from, &first)) {
    return absl::InvalidArgumentError("--from must be a day, YYYY-MM-DD");
  }
  if (first > last) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--from ", absl::FormatCivilTime(first), " is after --to ",
        absl::FormatCivilTime(last), to.empty() ? " (today)" : ""));
  }
  SetDay(first, request->mutable_start_time());
  SetDay(last + 1, request->mutable_end_time());
  return absl::OkStatus();
}

absl::Status SetGroupByFromFlags(v1::GetCostReportRequest* request) {
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_group_by),
                                               ',', absl::SkipWhitespace())) {
    v1::CostDimension d = v1::COST_DIMENSION_UNSPECIFIED;
    if (!v1::CostDimension_Parse(
            "COST_DIMENSION_" + Upper(absl::StripAsciiWhitespace(name)), &d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--group_by: unknown dimension '", name,
          "' (sku, pool, recipe_key, model, method, team, outcome, day, week, "
          "month)"));
    }
    request->add_group_by(d);
  }
  return absl::OkStatus();
}

// One --where pair, key=value, added to `f`.
absl::Status AddFilter(const std::string& key, const std::string& value,
                       v1::CostFilter* f) {
  if (key == "sku") {
    f->add_skus(value);
  } else if (key == "pool") {
    f->add_pools(value);
  } else if (key == "recipe_key") {
    f->add_recipe_keys(value);
  } else if (key == "model") {
    f->add_models(value);
  } else if (key == "team") {
    f->add_teams(value);
  } else if (key == "method") {
    const std::optional<core::FineTuneMethod> method =
        core::ParseFineTuneMethod(Upper(value));
    if (!method.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--where method=", value, ": full, lora, qlora or head-only"));
    }
    f->add_methods(EnumToProto<v1::FineTuneMethod>(*method));
  } else if (key == "outcome") {
    const std::optional<core::RunOutcome> outcome =
        core::ParseRunOutcome(Upper(value));
    if (!outcome.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--where outcome=", value,
          ": succeeded, failed, out-of-memory, collective-timeout, "
          "preempted or hardware-error"));
    }
    f->add_outcomes(EnumToProto<v1::RunOutcome>(*outcome));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--where: unknown key '", key,
                     "' (sku, pool, recipe_key, model, method, team, "
                     "outcome)"));
  }
  return absl::OkStatus();
}

absl::Status SetFilterFromFlags(v1::GetCostReportRequest* request) {
  v1::CostFilter* f = request->mutable_filter();
  for (absl::string_view pair : absl::StrSplit(absl::GetFlag(FLAGS_where), ',',
                                               absl::SkipWhitespace())) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    const std::string key(absl::StripAsciiWhitespace(kv.first));
    const std::string value(absl::StripAsciiWhitespace(kv.second));
    if (absl::Status added = AddFilter(key, value, f); !added.ok()) {
      return added;
    }
  }
  return absl::OkStatus();
}

// Builds the request from the flags; an error message on bad input.
absl::StatusOr<v1::GetCostReportRequest> RequestFromFlags() {
  v1::GetCostReportRequest request;
  if (absl::Status s = SetRangeFromFlags(&request); !s.ok()) return s;
  if (absl::Status s = SetGroupByFromFlags(&request); !s.ok()) return s;
  if (absl::Status s = SetFilterFromFlags(&request); !s.ok()) return s;
  return request;
}

std::string Period(const v1::CostReportRow& row) {
  if (!row.has_period_start_time()) return "";
  return absl::FormatTime(
      "%Y-%m-%d", absl::FromUnixSeconds(row.period_start_time().seconds()),
      absl::UTCTimeZone());
}

// One column of the report: its header, whether it is numeric, its cell.
struct Column {
  std::string header;  // table
  std::string csv;     // CSV header
  bool numeric;
  std::function<std::string(const v1::CostReportRow&)> cell;
};

bool Grouped(const v1::GetCostReportRequest& request, v1::CostDimension d) {
  for (int g : request.group_by()) {
    if (g == d) return true;
  }
  return false;
}

// The columns of the dimensions grouped by (all of them with `all`), in
// the order the CSV and table show them.
void AddKeyColumns(const v1::GetCostReportRequest& request, bool all,
                   std::vector<Column>* columns) {
  auto grouped = [&](v1::CostDimension d) { return Grouped(request, d); };
  const bool by_period = grouped(v1::COST_DIMENSION_DAY) ||
                         grouped(v1::COST_DIMENSION_WEEK) ||
                         grouped(v1::COST_DIMENSION_MONTH);
  auto key = [&](bool on, const char* header, const char* csv, auto cell) {
    if (on || all) columns->push_back({header, csv, false, cell});
  };
  key(by_period,
      grouped(v1::COST_DIMENSION_WEEK)    ? "WEEK OF"
      : grouped(v1::COST_DIMENSION_MONTH) ? "MONTH"
                                          : "DAY (UTC)",
      "period_start", Period);
  key(grouped(v1::COST_DIMENSION_SKU), "SKU", "sku",
      [](const auto& r) { return r.sku(); });
  key(grouped(v1::COST_DIMENSION_POOL), "POOL", "pool",
      [](const auto& r) { return r.pool(); });
  key(grouped(v1::COST_DIMENSION_RECIPE_KEY), "RECIPE KEY", "recipe_key",
      [](const auto& r) { return r.recipe_key(); });
  key(grouped(v1::COST_DIMENSION_MODEL), "MODEL", "model",
      [](const auto& r) { return r.model(); });
  key(grouped(v1::COST_DIMENSION_METHOD), "METHOD", "method",
      [](const v1::CostReportRow& r) {
        return r.method() == v1::FINE_TUNE_METHOD_UNSPECIFIED
                   ? std::string()
                   : EnumShortName(*v1::FineTuneMethod_descriptor(),
                                   r.method());
      });
  key(grouped(v1::COST_DIMENSION_TEAM), "TEAM", "team",
      [](const auto& r) { return r.team(); });
  key(grouped(v1::COST_DIMENSION_OUTCOME), "OUTCOME", "outcome",
      [](const v1::CostReportRow& r) {
        return r.outcome() == v1::RUN_OUTCOME_UNSPECIFIED
                   ? std::string()
                   : EnumShortName(*v1::RunOutcome_descriptor(), r.outcome());
      });
}

// The figures of every row: runs, GPU-hours, steps and what they cost.
void AddFigureColumns(std::vector<Column>* columns) {
  auto num = [&](const char* header, const char* csv, auto cell) {
    columns->push_back({header, csv, true, cell});
  };
  num("RUNS", "runs", [](const auto& r) { return absl::StrCat(r.runs()); });
  num("OK", "successful_runs",
      [](const auto& r) { return absl::StrCat(r.successful_runs()); });
  num("FAILED", "failed_runs",
      [](const auto& r) { return absl::StrCat(r.failed_runs()); });
  num("RETRIES", "retries",
      [](const auto& r) { return absl::StrCat(r.retries()); });
  num("GPU-H", "gpu_hours",
      [](const auto& r) { return absl::StrFormat("%.2f", r.gpu_hours()); });
  num("WASTED GPU-H", "wasted_gpu_hours", [](const auto& r) {
    return absl::StrFormat("%.2f", r.wasted_gpu_hours());
  });
  num("OK STEPS", "successful_steps",
      [](const auto& r) { return absl::StrCat(r.successful_steps()); });
  num("GPU-H/1K STEPS", "gpu_hours_per_1k_successful_steps",
      [](const v1::CostReportRow& r) {
        return r.successful_steps() == 0
                   ? std::string("-")
                   : absl::StrFormat("%.4f",
                                     r.gpu_hours_per_1k_successful_steps());
      });
  num("COST", "internal_cost", [](const auto& r) {
    return core::FormatMicros(r.internal_cost_micros());
  });
  num("COST/STEP", "internal_cost_per_successful_step",
      [](const v1::CostReportRow& r) {
        return r.internal_cost_per_successful_step().empty()
                   ? std::string("-")
                   : r.internal_cost_per_successful_step();
      });
  num("LIST COST/STEP", "list_price_cost_per_successful_step",
      [](const v1::CostReportRow& r) {
        return !r.has_list_price() ||
                       r.list_price_cost_per_successful_step().empty()
                   ? std::string("-")
                   : r.list_price_cost_per_successful_step();
      });
  num("OBSERVED/LIST", "observed_over_list_price_ratio",
      [](const v1::CostReportRow& r) {
        return r.has_list_price()
                   ? absl::StrFormat("%.3f", r.observed_over_list_price_ratio())
                   : std::string("-");
      });
}

// The pool's occupancy and the cost per step it implies: rows grouped by
// pool only (or `all`).
void AddPoolColumns(std::vector<Column>* columns) {
  columns->push_back(
      {"OCCUPANCY", "occupancy", true, [](const v1::CostReportRow& r) {
         return r.has_pool_occupancy()
                    ? absl::StrFormat("%.1f%%",
                                      100 * r.pool_occupancy().occupancy())
                    : std::string("-");
       }});
  columns->push_back(
      {"AMORTIZED COST/STEP", "amortized_cost_per_successful_step", true,
       [](const v1::CostReportRow& r) {
         return r.pool_occupancy().amortized_cost_per_successful_step().empty()
                    ? std::string("-")
                    : r.pool_occupancy().amortized_cost_per_successful_step();
       }});
}

std::vector<Column> Columns(const v1::GetCostReportRequest& request, bool all) {
  std::vector<Column> columns;
  AddKeyColumns(request, all, &columns);
  AddFigureColumns(&columns);
  if (Grouped(request, v1::COST_DIMENSION_POOL) || all) {
    AddPoolColumns(&columns);
  }
  return columns;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Every page of the report `request` asks for; the error is printed.
std::optional<v1::GetCostReportResponse> FetchReport(
    v1::GetCostReportRequest* request) {
  auto stub = v1::CostService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::GetCostReportResponse all;
  request->set_page_size(1000);
  do {
    v1::GetCostReportResponse response;
    grpc::Status status =
        stub->GetCostReport(ContextWithDeadline().get(), *request, &response);
    if (!status.ok()) {
      std::cerr << "placectl: " << DescribeError(status, FlagOfField) << "\n";
      return std::nullopt;
    }
    for (auto& row : *response.mutable_rows()) *all.add_rows() = row;
    request->set_page_token(response.next_page_token());
  } while (!request->page_token().empty());
  return all;
}

// --csv: every column, "-" cells empty.
void PrintCsv(const v1::GetCostReportRequest& request,
              const v1::GetCostReportResponse& report) {
  const std::vector<Column> columns = Columns(request, /*all=*/true);
  std::vector<std::string> header;
  for (const Column& c : columns) header.push_back(c.csv);
  std::cout << absl::StrJoin(header, ",") << "\n";
  for (const v1::CostReportRow& row : report.rows()) {
    std::vector<std::string> cells;
    for (const Column& c : columns) {
      std::string cell = c.cell(row);
      cells.push_back(CsvField(cell == "-" ? "" : cell));
    }
    std::cout << absl::StrJoin(cells, ",") << "\n";
  }
}

// The table of the dimensions grouped by, and what the pool columns mean
// when they are shown.
void PrintTable(const v1::GetCostReportRequest& request,
                const v1::GetCostReportResponse& report) {
  const std::vector<Column> columns = Columns(request, /*all=*/false);
  std::vector<std::string> header;
  std::vector<bool> numeric;
  for (const Column& c : columns) {
    header.push_back(c.header);
    numeric.push_back(c.numeric);
  }
  clients::Table table(header, numeric);
  for (const v1::CostReportRow& row : report.rows()) {
    std::vector<std::string> cells;
    for (const Column& c : columns) cells.push_back(c.cell(row));
    table.AddRow(cells);
  }
  if (table.empty()) {
    std::cout << "no runs ended in the range\n";
    return;
  }
  table.Print(std::cout);
  if (Grouped(request, v1::COST_DIMENSION_POOL)) {
    // The two pool columns are right by definition and surprising without
    // it (a tiny run on an idle pool: 0.0% and a large cost per step).
    std::cout
        << "\nOCCUPANCY: GPU-hours of all runs that ended on the pool in the "
           "row's window, over the pool's GPUs x the window's hours.\n"
           "AMORTIZED COST/STEP: the internal cost / occupancy / successful "
           "steps: the pool's idle hours\n"
           "  charged to the work that ran (a pool used 25% of the time "
           "costs four times its rate per used hour).\n"
           "  See docs/FINANCE.md.\n";
  }
}

}  // namespace

int RunCost(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "usage: placectl cost [--from YYYY-MM-DD] [--to YYYY-MM-DD] "
                 "[--group_by sku,day,...] [--where team=x,outcome=failed,...] "
                 "[--csv | --json]\n";
    return 2;
  }
  absl::StatusOr<v1::GetCostReportRequest> request = RequestFromFlags();
  if (!request.ok()) {
    std::cerr << "placectl: " << request.status().message() << "\n";
    return 2;
  }
  const std::optional<v1::GetCostReportResponse> report =
      FetchReport(&*request);
  if (!report) return 1;
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(*report);
  } else if (absl::GetFlag(FLAGS_csv)) {
    PrintCsv(*request, *report);
  } else {
    PrintTable(*request, *report);
  }
  return 0;
}

}  // namespace placement::placectl
