// The sample-batch validator on any message: never a crash, and a batch it
// accepts holds only finite, in-range figures.
#include <cmath>
#include <cstdlib>

#include "absl/time/time.h"
#include "services/api/run_validation.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placement::v1::StreamStepSamplesRequest request;
  if (!placement::fuzz::ParseInput(data, size, &request)) return 0;
  const auto violations = placement::services::ValidateSampleBatch(
      request, absl::FromUnixSeconds(1'800'000'000));
  if (!violations.empty()) return 0;
  for (const auto& s : request.samples()) {
    if (s.step() < 0 || !(s.step_time_seconds() > 0) ||
        !std::isfinite(s.memory_allocated_gb()) ||
        (s.has_loss() && !std::isfinite(s.loss()))) {
      std::abort();
    }
  }
  return 0;
}
