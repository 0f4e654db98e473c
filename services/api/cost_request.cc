#include "services/api/cost_request.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/civil_time.h"
#include "common/proto_bytes.h"
#include "core/evidence/evidence.h"
#include "core/fnv1a.h"
#include "core/recipe.h"
#include "services/api/cost_convert.h"
#include "services/api/page_token.h"
#include "services/api/recipe_convert.h"

namespace placement::services {
namespace {

constexpr int64_t kSecondsPerDay = 86400;

// The UTC day that starts at `t`, or a violation of `field`.
std::optional<absl::CivilDay> MidnightDay(const google::protobuf::Timestamp& t,
                                          const std::string& field,
                                          core::FieldViolations& violations) {
  if (t.nanos() != 0 || t.seconds() % kSecondsPerDay != 0) {
    violations.push_back(
        {field, "must be 00:00:00 UTC: costs are rolled up by UTC day"});
    return std::nullopt;
  }
  return absl::ToCivilDay(absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

// Page tokens carry the request's fingerprint and the last row's key, each
// field length-prefixed ("<len>:<bytes>") so that any text survives.
std::string CursorKey(const std::string& fingerprint,
                      const storage::CostGroupKey& key) {
  std::string out = fingerprint;
  for (const std::string* field :
       {&key.period, &key.sku, &key.pool, &key.recipe_key, &key.model,
        &key.method, &key.team, &key.outcome}) {
    absl::StrAppend(&out, field->size(), ":", *field);
  }
  return out;
}

absl::StatusOr<std::optional<storage::CostGroupKey>> CursorFromKey(
    const std::string& fingerprint, const std::string& key) {
  if (key.empty()) return std::nullopt;
  const absl::Status bad = core::InvalidArgumentWithViolations(
      {{"page_token",
        "is not a page token of this request (the range, "
        "filter and grouping must not change between pages)"}});
  absl::string_view rest = key;
  if (!absl::ConsumePrefix(&rest, fingerprint)) return bad;
  storage::CostGroupKey cursor;
  for (std::string* field :
       {&cursor.period, &cursor.sku, &cursor.pool, &cursor.recipe_key,
        &cursor.model, &cursor.method, &cursor.team, &cursor.outcome}) {
    const size_t colon = rest.find(':');
    size_t length = 0;
    if (colon == absl::string_view::npos ||
        !absl::SimpleAtoi(rest.substr(0, colon), &length) ||
        length > rest.size() - colon - 1) {
      return bad;
    }
    *field = std::string(rest.substr(colon + 1, length));
    rest.remove_prefix(colon + 1 + length);
  }
  if (!rest.empty()) return bad;
  return cursor;
}

// The range: two UTC midnights, start before end.
void CheckRange(const v1::GetCostReportRequest& in, storage::CostQuery& q,
                core::FieldViolations& violations) {
  std::optional<absl::CivilDay> start, end;
  if (!in.has_start_time()) {
    violations.push_back({"start_time", "is required"});
  } else {
    start = MidnightDay(in.start_time(), "start_time", violations);
  }
  if (!in.has_end_time()) {
    violations.push_back({"end_time", "is required"});
  } else {
    end = MidnightDay(in.end_time(), "end_time", violations);
  }
  if (!start || !end) return;
  if (*start > *end) {
    violations.push_back({"start_time", "must not be after end_time"});
  } else if (*start == *end) {
    violations.push_back(
        {"end_time", "must be after start_time: the range is empty"});
  } else {
    q.start = *start;
    q.end = *end;
  }
}

// Names of one filter field, copied into `into`; empty names are refused
// unless `allow_empty` (a run's team may be empty).
template <typename Names>
void CheckNames(const Names& values, const char* field, bool allow_empty,
                std::vector<std::string>& into,
                core::FieldViolations& violations) {
  for (int i = 0; i < values.size(); ++i) {
    if (values[i].empty() && !allow_empty) {
      violations.push_back(
          {absl::StrCat("filter.", field, "[", i, "]"), "must not be empty"});
    }
    into.push_back(values[i]);
  }
}

void CheckFilter(const v1::CostFilter& f, storage::CostQuery& q,
                 core::FieldViolations& violations) {
  CheckNames(f.skus(), "skus", false, q.skus, violations);
  CheckNames(f.pools(), "pools", false, q.pools, violations);
  CheckNames(f.recipe_keys(), "recipe_keys", false, q.recipe_keys, violations);
  CheckNames(f.models(), "models", false, q.models, violations);
  CheckNames(f.teams(), "teams", true, q.teams, violations);
  for (int i = 0; i < f.methods_size(); ++i) {
    const v1::FineTuneMethod m = f.methods(i);
    if (m == v1::FINE_TUNE_METHOD_UNSPECIFIED ||
        !v1::FineTuneMethod_IsValid(m)) {
      violations.push_back({absl::StrCat("filter.methods[", i, "]"),
                            "must be a known fine-tuning method"});
      continue;
    }
    q.methods.push_back(core::FineTuneMethodName(MethodFromProto(m)));
  }
  for (int i = 0; i < f.outcomes_size(); ++i) {
    const v1::RunOutcome o = f.outcomes(i);
    if (o == v1::RUN_OUTCOME_UNSPECIFIED || !v1::RunOutcome_IsValid(o)) {
      violations.push_back({absl::StrCat("filter.outcomes[", i, "]"),
                            "must be a known run outcome"});
      continue;
    }
    q.outcomes.push_back(core::RunOutcomeName(OutcomeFromProto(o)));
  }
}

// Sets the query's grouping flag of dimension `d`; returns the period it
// names (kNone for the other dimensions).
storage::CostPeriod GroupBy(v1::CostDimension d, storage::CostQuery& q) {
  switch (d) {
    case v1::COST_DIMENSION_SKU:
      q.by_sku = true;
      break;
    case v1::COST_DIMENSION_POOL:
      q.by_pool = true;
      break;
    case v1::COST_DIMENSION_RECIPE_KEY:
      q.by_recipe_key = true;
      break;
    case v1::COST_DIMENSION_MODEL:
      q.by_model = true;
      break;
    case v1::COST_DIMENSION_METHOD:
      q.by_method = true;
      break;
    case v1::COST_DIMENSION_TEAM:
      q.by_team = true;
      break;
    case v1::COST_DIMENSION_OUTCOME:
      q.by_outcome = true;
      break;
    case v1::COST_DIMENSION_DAY:
      return storage::CostPeriod::kDay;
    case v1::COST_DIMENSION_WEEK:
      return storage::CostPeriod::kWeek;
    case v1::COST_DIMENSION_MONTH:
      return storage::CostPeriod::kMonth;
    default:
      break;
  }
  return storage::CostPeriod::kNone;
}

// Known dimensions, none repeated, at most one period.
void CheckGrouping(const v1::GetCostReportRequest& in, storage::CostQuery& q,
                   core::FieldViolations& violations) {
  std::vector<int> seen;
  for (int i = 0; i < in.group_by_size(); ++i) {
    const int d = in.group_by(i);
    const std::string field = absl::StrCat("group_by[", i, "]");
    if (d == v1::COST_DIMENSION_UNSPECIFIED || !v1::CostDimension_IsValid(d)) {
      violations.push_back({field, "must be a known cost dimension"});
      continue;
    }
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) {
      violations.push_back({field, "repeats a dimension"});
      continue;
    }
    seen.push_back(d);
    const storage::CostPeriod period =
        GroupBy(static_cast<v1::CostDimension>(d), q);
    if (period == storage::CostPeriod::kNone) continue;
    if (q.period != storage::CostPeriod::kNone) {
      violations.push_back(
          {field, "at most one of DAY, WEEK and MONTH may be grouped by"});
    } else {
      q.period = period;
    }
  }
}

void AppendViolations(const absl::Status& status,
                      core::FieldViolations& violations) {
  for (const auto& v : core::ViolationsFromStatus(status)) {
    violations.push_back(v);
  }
}

// The page size, and the cursor of a page token made for this same request.
void CheckPage(const v1::GetCostReportRequest& in, CostRequest& out,
               core::FieldViolations& violations) {
  absl::StatusOr<int> page_size =
      EffectivePageSize(in.page_size(), "page_size");
  if (!page_size.ok()) {
    AppendViolations(page_size.status(), violations);
  } else {
    out.page_size = *page_size;
  }
  out.fingerprint = CostRequestFingerprint(in);
  absl::StatusOr<std::optional<storage::CostGroupKey>> after =
      CostCursorFromPageToken(out.fingerprint, in.page_token());
  if (!after.ok()) {
    AppendViolations(after.status(), violations);
  } else {
    out.after = *after;
  }
}

}  // namespace

// FNV-1a, not absl::Hash: absl::Hash is salted per process.
std::string CostRequestFingerprint(const v1::GetCostReportRequest& request) {
  v1::GetCostReportRequest copy = request;
  copy.clear_page_size();
  copy.clear_page_token();
  return absl::StrFormat("%016x",
                         core::Fnv1a64(common::DeterministicBytes(copy)));
}

std::string CostPageToken(const std::string& fingerprint,
                          const storage::CostGroupKey& last) {
  return EncodePageToken(CursorKey(fingerprint, last));
}

absl::StatusOr<std::optional<storage::CostGroupKey>> CostCursorFromPageToken(
    const std::string& fingerprint, const std::string& page_token) {
  absl::StatusOr<std::string> key = DecodePageToken(page_token, "page_token");
  if (!key.ok()) return key.status();
  return CursorFromKey(fingerprint, *key);
}

absl::StatusOr<CostRequest> ValidateCostRequest(
    const v1::GetCostReportRequest& in) {
  core::FieldViolations violations;
  CostRequest out;
  CheckRange(in, out.query, violations);
  CheckFilter(in.filter(), out.query, violations);
  CheckGrouping(in, out.query, violations);
  CheckPage(in, out, violations);
  if (!violations.empty()) {
    return core::InvalidArgumentWithViolations(violations);
  }
  return out;
}

core::FieldViolations CheckCostSkus(const std::vector<std::string>& skus,
                                    const std::vector<core::GpuSku>& catalog) {
  core::FieldViolations violations;
  for (size_t i = 0; i < skus.size(); ++i) {
    const bool exact =
        std::any_of(catalog.begin(), catalog.end(),
                    [&](const core::GpuSku& sku) { return sku.id == skus[i]; });
    if (exact) continue;
    const std::vector<std::string> candidates =
        core::SkuCandidates(skus[i], catalog);
    violations.push_back(
        {absl::StrCat("filter.skus[", i, "]"),
         candidates.empty()
             ? "names no SKU of the catalog"
             : absl::StrCat("is not an exact SKU name; did you mean one of: ",
                            absl::StrJoin(candidates, ", "), "?")});
  }
  return violations;
}

void CostPageToProto(const storage::CostPage& page, const CostRequest& request,
                     v1::GetCostReportResponse* response) {
  for (const storage::CostRow& row : page.rows) {
    CostRowToProto(row, request.query, response->add_rows());
  }
  if (page.more) {
    response->set_next_page_token(
        CostPageToken(request.fingerprint, page.rows.back().key));
  }
}

}  // namespace placement::services
