#include "services/rpc/plan_admission.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace placement::services {
namespace {

// Weight of the newest finish in the moving average of service time, once
// it rests on ten recent plans or more.
constexpr double kServiceTimeWeight = 0.1;
// Recent plans (decayed) the average must rest on before a call is refused
// for it: more than one.
constexpr double kMinServiceTimeSamples = 1.5;
// A call is admitted only with this many times the average service time
// left: plans vary about their mean (a queue's tail is about twice it),
// and the part of the caller's deadline spent before the server read the
// call (queued on the connection under a burst) is not seen here.
constexpr double kServiceTimeHeadroom = 2.0;
// The pushback's bounds, and what it aims at: refusals at most this share
// of admissions, counted over about kRateWindow, steered every
// kPushbackStep by at most a factor of 2 either way.
constexpr absl::Duration kMinPushback = absl::Milliseconds(10);
constexpr absl::Duration kMaxPushback = absl::Seconds(5);
constexpr double kRefusedPerAdmitted = 0.25;
constexpr absl::Duration kRateWindow = absl::Milliseconds(500);
constexpr absl::Duration kPushbackStep = absl::Milliseconds(100);

void TrimHeap() {
#ifdef __GLIBC__
  malloc_trim(0);  // every arena, top and free pages alike
#endif
}

PlanAdmission::Options WithDefaults(PlanAdmission::Options options) {
  options.max_planning = std::max(1, options.max_planning);
  options.max_waiting = std::max(1, options.max_waiting);
  options.max_waiting_per_caller =
      std::clamp(options.max_waiting_per_caller, 1, options.max_waiting);
  if (options.wall_clock == nullptr) options.wall_clock = absl::Now;
  if (options.steady_clock == nullptr) {
    options.steady_clock = std::chrono::steady_clock::now;
  }
  if (options.return_memory == nullptr) options.return_memory = TrimHeap;
  return options;
}

}  // namespace

PlanAdmission::PlanAdmission(Options options)
    : options_(WithDefaults(std::move(options))),
      counted_at_(options_.steady_clock()),
      pushback_(kMinPushback),
      pushback_scaled_at_(counted_at_) {}

PlanAdmission::PlanAdmission(int max_planning)
    : PlanAdmission([max_planning] {
        Options options;
        options.max_planning = max_planning;
        return options;
      }()) {}

int PlanAdmission::DefaultMaxInFlight() {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(64, 16 * cores);
}

double PlanAdmission::ServiceTimeDecay(SteadyTime now) const {
  const double idle = absl::ToDoubleSeconds(absl::FromChrono(
      std::max(now - service_time_at_, SteadyTime::duration{})));
  const double half_life =
      absl::ToDoubleSeconds(options_.service_time_half_life);
  return half_life <= 0 ? 1.0 : std::exp2(-idle / half_life);
}

void PlanAdmission::CountOutcome(SteadyTime now, bool refused) {
  const double since = absl::ToDoubleSeconds(
      absl::FromChrono(std::max(now - counted_at_, SteadyTime::duration{})));
  const double keep = std::exp(-since / absl::ToDoubleSeconds(kRateWindow));
  admitted_ *= keep;
  refused_ *= keep;
  counted_at_ = now;
  (refused ? refused_ : admitted_) += 1;
  if (absl::FromChrono(now - pushback_scaled_at_) < kPushbackStep) return;
  pushback_scaled_at_ = now;
  // Above the target share the callers come back too soon: wait longer.
  const double share =
      refused_ / (kRefusedPerAdmitted * std::max(admitted_, 1.0));
  pushback_ = std::clamp(pushback_ * std::clamp(share, 0.5, 2.0), kMinPushback,
                         kMaxPushback);
}

absl::Duration PlanAdmission::RetryPushback(double jitter) {
  absl::MutexLock lock(&mu_);
  return pushback_ * (0.5 + std::clamp(jitter, 0.0, 1.0));
}

absl::StatusOr<PlanAdmission::SteadyTime> PlanAdmission::TryAdmit(
    absl::Time deadline) {
  const absl::Time wall_now = options_.wall_clock();
  const SteadyTime now = options_.steady_clock();
  absl::MutexLock lock(&mu_);
  if (deadline <= wall_now) {
    burst_ = true;
    return absl::DeadlineExceededError(
        "the deadline passed before planning began");
  }
  if (in_flight_ >= options_.max_planning) {
    burst_ = true;
    CountOutcome(now, /*refused=*/true);
    return absl::ResourceExhaustedError(
        absl::StrCat(in_flight_,
                     " plans are in flight, the most this server takes; "
                     "retry with backoff"));
  }
  if (const double decay = ServiceTimeDecay(now);
      in_flight_ > 0 &&
      service_time_samples_ * decay >= kMinServiceTimeSamples) {
    const absl::Duration plan_time = service_time_ * decay;
    if (deadline - wall_now < kServiceTimeHeadroom * plan_time) {
      burst_ = true;
      CountOutcome(now, /*refused=*/true);
      return absl::ResourceExhaustedError(absl::StrCat(
          kPlanTimeRefusal, absl::FormatDuration(plan_time),
          " now, too much of what the deadline leaves; retry with backoff"));
    }
  }
  ++in_flight_;
  if (in_flight_ == options_.max_planning) burst_ = true;
  CountOutcome(now, /*refused=*/false);
  return now;
}

void PlanAdmission::Release(SteadyTime admitted_at) {
  const SteadyTime now = options_.steady_clock();
  bool return_memory = false;
  {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    const absl::Duration took =
        absl::FromChrono(std::max(now - admitted_at, SteadyTime::duration{}));
    const double decay = ServiceTimeDecay(now);
    service_time_samples_ = service_time_samples_ * decay + 1;
    const double weight =
        std::max(kServiceTimeWeight, 1 / service_time_samples_);
    service_time_ = service_time_ * decay * (1 - weight) + took * weight;
    service_time_at_ = now;
    if (in_flight_ == 0 && burst_ &&
        (last_return_ == SteadyTime::min() ||
         absl::FromChrono(now - last_return_) >= options_.trim_interval)) {
      burst_ = false;
      last_return_ = now;
      ++memory_returns_;
      return_memory = true;
    }
  }
  // Outside the lock: trimming a large heap takes a while, and calls are
  // admitted meanwhile.
  if (return_memory) options_.return_memory();
}

absl::Status PlanAdmission::TryWait(absl::Time deadline,
                                    const std::string& caller) {
  const absl::Time wall_now = options_.wall_clock();
  absl::MutexLock lock(&mu_);
  if (deadline <= wall_now) {
    return absl::DeadlineExceededError(
        "the deadline passed before planning began");
  }
  if (waiting_ >= options_.max_waiting) {
    return absl::ResourceExhaustedError(absl::StrCat(
        waiting_,
        " plans are waiting for this replica's evidence, the most it holds; "
        "retry with backoff"));
  }
  int& mine = waiting_by_caller_[caller];
  if (mine >= options_.max_waiting_per_caller) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "this caller has ", mine,
        " plans waiting for this replica's evidence (min_evidence_version), "
        "the most one caller may; retry with backoff"));
  }
  ++mine;
  ++waiting_;
  return absl::OkStatus();
}

void PlanAdmission::DoneWaiting(const std::string& caller) {
  absl::MutexLock lock(&mu_);
  --waiting_;
  auto it = waiting_by_caller_.find(caller);
  if (it != waiting_by_caller_.end() && --it->second <= 0) {
    waiting_by_caller_.erase(it);
  }
}

int PlanAdmission::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

int PlanAdmission::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

absl::Duration PlanAdmission::ServiceTime() const {
  const SteadyTime now = options_.steady_clock();
  absl::MutexLock lock(&mu_);
  return service_time_ * ServiceTimeDecay(now);
}

int64_t PlanAdmission::memory_returns() const {
  absl::MutexLock lock(&mu_);
  return memory_returns_;
}

}  // namespace placement::services
