#include "services/api/timing_convert.h"

#include <cmath>

#include "common/proto_time.h"

namespace placement::services {

v1::StartStatus StartStatusToProto(core::StartStatus status) {
  switch (status) {
    case core::StartStatus::kKnown:
      return v1::START_STATUS_KNOWN;
    case core::StartStatus::kNoState:
      return v1::START_STATUS_NO_STATE;
    case core::StartStatus::kStale:
      return v1::START_STATUS_STALE;
    case core::StartStatus::kUnknownRunTimes:
      return v1::START_STATUS_UNKNOWN_RUN_TIMES;
    case core::StartStatus::kTooLarge:
      return v1::START_STATUS_TOO_LARGE;
  }
  return v1::START_STATUS_UNSPECIFIED;
}

void SecondsToProto(double seconds, google::protobuf::Duration* out) {
  common::DurationToProto(
      absl::Milliseconds(std::llround(std::max(0.0, seconds) * 1000)), out);
}

void CandidateTimingToProto(const core::CandidateTiming& t,
                            v1::CandidateTiming* out) {
  out->set_status(StartStatusToProto(t.status));
  out->set_reason(t.reason);
  SecondsToProto(t.run_p10_s, out->mutable_run_band()->mutable_low());
  SecondsToProto(t.run_p90_s, out->mutable_run_band()->mutable_high());
  out->set_calibrated(t.calibrated);
  out->set_calibration_forecasts(t.calibration_pits);
  if (t.state_observed != absl::InfinitePast()) {
    common::TimeToProto(t.state_observed, out->mutable_state_observe_time());
    common::DurationToProto(t.state_age, out->mutable_state_age());
  }
  out->set_jobs_ahead(t.jobs_ahead);
  out->set_gpus_ahead(t.gpus_ahead);
  if (!t.known()) return;  // unknown is never shown as zero
  SecondsToProto(t.start_p50_s, out->mutable_expected_start());
  SecondsToProto(t.start_p10_s, out->mutable_start_band()->mutable_low());
  SecondsToProto(t.start_p90_s, out->mutable_start_band()->mutable_high());
  for (const auto& [p, seconds] : t.start_quantiles) {
    v1::StartQuantile* q = out->add_start_quantiles();
    q->set_probability(p);
    SecondsToProto(seconds, q->mutable_within());
  }
  SecondsToProto(t.start_mean_s, out->mutable_mean_start());
  for (double seconds : t.uncalibrated_start_levels_s) {
    SecondsToProto(seconds, out->add_uncalibrated_start_levels());
  }
  SecondsToProto(t.finish_p50_s, out->mutable_expected_finish());
  SecondsToProto(t.finish_p10_s, out->mutable_finish_band()->mutable_low());
  SecondsToProto(t.finish_p90_s, out->mutable_finish_band()->mutable_high());
  SecondsToProto(t.finish_mean_s, out->mutable_mean_finish());
}

void DeadlineVerdictToProto(const core::DeadlineVerdict& v,
                            v1::DeadlineVerdict* out) {
  common::DurationToProto(v.deadline, out->mutable_deadline());
  out->set_met(v.met);
  out->set_pool(v.pool_name);
  if (v.finish_p90_s > 0)
    SecondsToProto(v.finish_p90_s, out->mutable_finish_p90());
  out->set_candidates_meeting(v.candidates_meeting);
  out->set_chance_met(v.chance_met);
  out->set_reason(v.reason);
}

}  // namespace placement::services
