#ifndef PLACEMENT_SERVICES_RPC_PLAN_ADMISSION_H_
#define PLACEMENT_SERVICES_RPC_PLAN_ADMISSION_H_

#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace placement::services {

// Admission control of PlacePlan: what a burst far above capacity may cost.
// Without it every call that arrives is planned and queued for its record,
// and under a burst nearly all of them are finished after their caller gave
// up: the cores go to answers nobody reads (congestion collapse). So a call
// is refused at once, before any planning, when
//   - its deadline has passed: DEADLINE_EXCEEDED (the caller gave up);
//   - `max_in_flight` plans are admitted and not finished yet:
//     RESOURCE_EXHAUSTED, so that the caller backs off and retries;
//   - what is left of its deadline is shorter than admitted plans take now
//     (a moving average of admission to finish): RESOURCE_EXHAUSTED too, as
//     it would be answered too late. Only while plans are in flight: with
//     none, the average is stale and the call is admitted to measure again.
//
// After a burst (a call refused, or the bound reached) the heap the burst
// grew is handed back to the system (`return_memory`, glibc's malloc_trim by
// default) once no plan is in flight, at most once per `trim_interval`.
//
// Thread-safe.
class PlanAdmission {
 public:
  using Clock = std::function<absl::Time()>;

  // `max_in_flight` >= 1. `clock` and `return_memory` are for tests.
  explicit PlanAdmission(int max_in_flight,
                         absl::Duration trim_interval = absl::Seconds(5),
                         Clock clock = absl::Now,
                         std::function<void()> return_memory = nullptr);

  PlanAdmission(const PlanAdmission&) = delete;
  PlanAdmission& operator=(const PlanAdmission&) = delete;

  // A slot for a call whose caller waits until `deadline`, or why not (see
  // the class comment). On OK the caller must Release() the slot once the
  // call is finished.
  absl::Status TryAdmit(absl::Time deadline);

  // Frees a slot TryAdmit gave at `admitted_at` (the clock's time then).
  void Release(absl::Time admitted_at);

  int max_in_flight() const { return max_in_flight_; }
  int in_flight() const;
  // How often the heap was handed back.
  int64_t memory_returns() const;

  // The default bound: 16 plans per core, at least 64. Planning is CPU, but
  // a durable plan also waits for its record's group commit, and a closed
  // loop's next call arrives before the previous one's slot is freed.
  static int DefaultMaxInFlight();

 private:
  const int max_in_flight_;
  const absl::Duration trim_interval_;
  const Clock clock_;
  const std::function<void()> return_memory_;
  mutable absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  // Moving average of admission to finish; zero before the first.
  absl::Duration latency_ ABSL_GUARDED_BY(mu_);
  // Overloaded since the heap was last handed back.
  bool burst_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_return_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t memory_returns_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_RPC_PLAN_ADMISSION_H_
