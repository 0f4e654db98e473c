#ifndef PLACEMENT_SERVICES_RPC_PLAN_ADMISSION_H_
#define PLACEMENT_SERVICES_RPC_PLAN_ADMISSION_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace placement::services {

// How a refusal for time begins: the plan time it quotes follows, as
// absl::FormatDuration writes it, up to the next space.
inline constexpr absl::string_view kPlanTimeRefusal = "plans take about ";

// Admission control of PlacePlan: what a burst far above capacity may cost,
// and what one caller may hold.
//
// Planning slots. Without them every call that arrives is planned and queued
// for its record, and under a burst nearly all of them are finished after
// their caller gave up: the cores go to answers nobody reads (congestion
// collapse). A plan holds one of `max_planning` slots from admission until
// it is answered, and a call is refused at once, before any planning, when
//   - its deadline has passed: DEADLINE_EXCEEDED (the caller gave up);
//   - every slot is held: RESOURCE_EXHAUSTED, so that the caller backs off
//     and retries;
//   - what is left of its deadline is less than twice what admitted plans
//     take now (ServiceTime(), a mean: plans vary about it, and the part of
//     the deadline spent before the server read the call is not seen):
//     RESOURCE_EXHAUSTED too, as it would likely be answered too late.
//     Only while plans are in flight, and only once the mean rests on more
//     than one recent plan: with none in flight the call is admitted to
//     measure again, and one plan alone (the first after a start or a
//     quiet moment, planned without the cache, often many times slower
//     than the cached plans that follow) is no measure of "now".
// What plans take is measured on the monotonic clock, from admission to
// answer, and only for plans that held a planning slot: a plan that waits
// for evidence (below) holds none and is not counted. It is a moving
// average that decays by half every `service_time_half_life` in which no
// plan finished, so that an estimate a slow moment left behind recovers
// even if every call is refused meanwhile. The newest plan weighs a tenth,
// or more while few plans are recent (1 / the recent plans, counted with
// the same half-life): after a quiet moment the plans that follow replace
// what the last one left behind, instead of a tenth at a time.
//
// Waiting slots. A plan that must first wait for this replica's evidence to
// include an upload (read your writes: up to 2 s) waits without a planning
// slot, in one of `max_waiting` waiting slots, at most
// `max_waiting_per_caller` of them per caller (its token): a caller that
// sends only evidence versions far ahead fills its own share and has its
// own plans refused, nobody else's. Once its wait ends it is planned on the
// evidence cache's threads (a few) and answered in the same slot.
//
// Pushback. A caller refused with RESOURCE_EXHAUSTED is told when to retry
// (RetryPushback, sent as gRPC's grpc-retry-pushback-ms): refused calls
// cost the server almost what answered ones do (the connection's work, the
// call, the refusal), so under a burst the pushback grows until they are at
// most a quarter of the plans admitted (each interval of 100 ms it is
// scaled by how far the refusals of the last moments are from that), and
// shrinks back once they are fewer. Each caller gets it with jitter, so that
// refused callers do not come back together.
//
// After a burst (a call refused, or every planning slot held) the heap the
// burst grew is handed back to the system (`return_memory`, glibc's
// malloc_trim by default) once no plan holds a slot, at most once per
// `trim_interval`.
//
// Thread-safe.
class PlanAdmission {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  struct Options {
    int max_planning = DefaultMaxInFlight();
    int max_waiting = 1024;
    int max_waiting_per_caller = 256;
    absl::Duration trim_interval = absl::Seconds(5);
    absl::Duration service_time_half_life = absl::Seconds(1);
    // What deadlines are compared with (gRPC's deadlines are wall times),
    // and what service times are measured by; null: the real clocks.
    std::function<absl::Time()> wall_clock;
    std::function<SteadyTime()> steady_clock;
    std::function<void()> return_memory;  // null: malloc_trim
  };

  explicit PlanAdmission(Options options);
  // `max_planning` slots, the rest as Options' defaults.
  explicit PlanAdmission(int max_planning);

  PlanAdmission(const PlanAdmission&) = delete;
  PlanAdmission& operator=(const PlanAdmission&) = delete;

  // A planning slot for a call whose caller waits until `deadline`, or why
  // not (see the class comment). On OK: when it was admitted (monotonic),
  // which the caller hands to Release once the call is finished.
  absl::StatusOr<SteadyTime> TryAdmit(absl::Time deadline);
  // Frees a planning slot TryAdmit gave at `admitted_at`; the time since is
  // one service-time sample.
  void Release(SteadyTime admitted_at);

  // How long a call refused now with RESOURCE_EXHAUSTED should wait before
  // it retries (see the class comment); `jitter` in [0, 1) picks it from
  // [1/2, 3/2] of the current pushback.
  absl::Duration RetryPushback(double jitter);

  // A waiting slot for `caller`, or RESOURCE_EXHAUSTED when every one is
  // held or `caller` holds its share (DEADLINE_EXCEEDED past `deadline`).
  // On OK the caller must DoneWaiting(caller) once the call is finished.
  absl::Status TryWait(absl::Time deadline, const std::string& caller);
  void DoneWaiting(const std::string& caller);

  int max_in_flight() const { return options_.max_planning; }
  int in_flight() const;
  int waiting() const;
  // What admitted plans take now (decayed): what shedding compares with.
  absl::Duration ServiceTime() const;
  // How often the heap was handed back.
  int64_t memory_returns() const;

  // The default planning bound: 16 plans per core, at least 64. Planning is
  // CPU, but a durable plan also waits for its record's group commit, and a
  // closed loop's next call arrives before the previous one's slot is freed.
  static int DefaultMaxInFlight();

 private:
  // The decay since the last plan finished, 2^(-idle / half-life): of the
  // service time and of the plans it rests on alike.
  double ServiceTimeDecay(SteadyTime now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts an admission (or a refusal) and steers the pushback.
  void CountOutcome(SteadyTime now, bool refused)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  // Moving average of admission to answer, as of `service_time_at_`; zero
  // before the first. How many plans it rests on, decayed with it.
  absl::Duration service_time_ ABSL_GUARDED_BY(mu_);
  double service_time_samples_ ABSL_GUARDED_BY(mu_) = 0;
  SteadyTime service_time_at_ ABSL_GUARDED_BY(mu_);
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, int> waiting_by_caller_ ABSL_GUARDED_BY(mu_);
  // Admissions and RESOURCE_EXHAUSTED refusals, decayed (time constant
  // kRateWindow) as of `counted_at_`; the pushback they steer, last scaled
  // at `pushback_scaled_at_`.
  double admitted_ ABSL_GUARDED_BY(mu_) = 0;
  double refused_ ABSL_GUARDED_BY(mu_) = 0;
  SteadyTime counted_at_ ABSL_GUARDED_BY(mu_);
  absl::Duration pushback_ ABSL_GUARDED_BY(mu_);
  SteadyTime pushback_scaled_at_ ABSL_GUARDED_BY(mu_);
  // Overloaded since the heap was last handed back.
  bool burst_ ABSL_GUARDED_BY(mu_) = false;
  SteadyTime last_return_ ABSL_GUARDED_BY(mu_) = SteadyTime::min();
  int64_t memory_returns_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_PLAN_ADMISSION_H_
