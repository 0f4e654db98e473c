#include "services/rpc/plan_admission.h"

#include <malloc.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"

namespace placement::services {
namespace {

// Weight of the newest finish in the moving average of plan latency.
constexpr double kLatencyWeight = 0.1;

void TrimHeap() {
#ifdef __GLIBC__
  malloc_trim(0);  // every arena, top and free pages alike
#endif
}

}  // namespace

PlanAdmission::PlanAdmission(int max_in_flight, absl::Duration trim_interval,
                             Clock clock, std::function<void()> return_memory)
    : max_in_flight_(std::max(1, max_in_flight)),
      trim_interval_(trim_interval),
      clock_(std::move(clock)),
      return_memory_(return_memory != nullptr ? std::move(return_memory)
                                              : TrimHeap) {}

int PlanAdmission::DefaultMaxInFlight() {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(64, 16 * cores);
}

absl::Status PlanAdmission::TryAdmit(absl::Time deadline) {
  const absl::Time now = clock_();
  absl::MutexLock lock(&mu_);
  if (deadline <= now) {
    burst_ = true;
    return absl::DeadlineExceededError(
        "the deadline passed before planning began");
  }
  if (in_flight_ >= max_in_flight_) {
    burst_ = true;
    return absl::ResourceExhaustedError(
        absl::StrCat(in_flight_,
                     " plans are in flight, the most this server takes; "
                     "retry with backoff"));
  }
  if (in_flight_ > 0 && deadline - now < latency_) {
    burst_ = true;
    return absl::ResourceExhaustedError(absl::StrCat(
        "plans take about ", absl::FormatDuration(latency_),
        " now, more than the deadline leaves; retry with backoff"));
  }
  ++in_flight_;
  if (in_flight_ == max_in_flight_) burst_ = true;
  return absl::OkStatus();
}

void PlanAdmission::Release(absl::Time admitted_at) {
  const absl::Time now = clock_();
  bool return_memory = false;
  {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    const absl::Duration took =
        std::max(now - admitted_at, absl::ZeroDuration());
    latency_ = latency_ == absl::ZeroDuration()
                   ? took
                   : latency_ * (1 - kLatencyWeight) + took * kLatencyWeight;
    if (in_flight_ == 0 && burst_ && now - last_return_ >= trim_interval_) {
      burst_ = false;
      last_return_ = now;
      ++memory_returns_;
      return_memory = true;
    }
  }
  // Outside the lock: trimming a large heap takes a while, and calls are
  // admitted meanwhile.
  if (return_memory) return_memory_();
}

int PlanAdmission::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

int64_t PlanAdmission::memory_returns() const {
  absl::MutexLock lock(&mu_);
  return memory_returns_;
}

}  // namespace placement::services
