#include "services/api/cost_convert.h"

#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "common/proto_time.h"
#include "core/evidence/evidence.h"
#include "core/recipe.h"
#include "core/units.h"
#include "services/api/recipe_convert.h"

namespace placement::services {

std::string DecimalFromNanos(int64_t nanos) {
  return absl::StrFormat("%d.%09d", nanos / 1'000'000'000,
                         nanos % 1'000'000'000);
}

void CostRowToProto(const storage::CostRow& r, const storage::CostQuery& q,
                    v1::CostReportRow* out) {
  out->set_sku(r.key.sku);
  out->set_pool(r.key.pool);
  out->set_recipe_key(r.key.recipe_key);
  out->set_model(r.key.model);
  if (!r.key.method.empty()) {
    out->set_method(
        MethodToProto(core::ParseFineTuneMethod(r.key.method)
                          .value_or(core::FineTuneMethod::kUnspecified)));
  }
  out->set_team(r.key.team);
  if (!r.key.outcome.empty()) {
    out->set_outcome(
        OutcomeToProto(core::ParseRunOutcome(r.key.outcome)
                           .value_or(core::RunOutcome::kUnspecified)));
  }
  absl::CivilDay period;
  if (q.period != storage::CostPeriod::kNone &&
      absl::ParseCivilTime(r.key.period, &period)) {
    common::TimeToProto(absl::FromCivil(period, absl::UTCTimeZone()),
                        out->mutable_period_start_time());
  }
  out->set_runs(r.runs);
  out->set_successful_runs(r.successful_runs);
  out->set_failed_runs(r.runs - r.successful_runs);
  out->set_retries(r.retries);
  out->set_steps_attempted(r.steps_attempted);
  out->set_successful_steps(r.successful_steps);
  out->set_gpu_microseconds(r.gpu_microseconds);
  out->set_gpu_hours(core::HoursFromMicroseconds(r.gpu_microseconds));
  out->set_wasted_gpu_microseconds(r.wasted_gpu_microseconds);
  out->set_wasted_gpu_hours(
      core::HoursFromMicroseconds(r.wasted_gpu_microseconds));
  out->set_gpu_hours_per_1k_successful_steps(
      r.gpu_hours_per_1k_successful_steps.value_or(0));
  out->set_internal_cost_micros(r.internal_cost_micros);
  if (r.internal_cost_per_successful_step_nanos) {
    out->set_internal_cost_per_successful_step(
        DecimalFromNanos(*r.internal_cost_per_successful_step_nanos));
  }
  if (r.list_price_cost_micros) {
    out->set_has_list_price(true);
    out->set_list_price_cost_micros(*r.list_price_cost_micros);
    if (r.list_price_cost_per_successful_step_nanos) {
      out->set_list_price_cost_per_successful_step(
          DecimalFromNanos(*r.list_price_cost_per_successful_step_nanos));
    }
    out->set_observed_over_list_price_ratio(
        r.observed_over_list_price_ratio.value_or(0));
  }
  if (r.occupancy) {
    v1::PoolOccupancy* o = out->mutable_pool_occupancy();
    o->set_available_gpu_hours(r.occupancy->available_gpu_hours);
    o->set_used_gpu_hours(
        core::HoursFromMicroseconds(r.occupancy->used_gpu_microseconds));
    o->set_occupancy(r.occupancy->occupancy);
    if (r.occupancy->amortized_cost_per_successful_step_nanos) {
      o->set_amortized_cost_per_successful_step(DecimalFromNanos(
          *r.occupancy->amortized_cost_per_successful_step_nanos));
    }
  }
}

}  // namespace placement::services
