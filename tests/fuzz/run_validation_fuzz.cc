// The upload validators on any BenchmarkRun: never a crash or undefined
// behaviour, and every violation names a field under "run.".
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "services/api/run_validation.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

std::vector<placement::core::GpuSku> Catalog() {
  placement::core::GpuSku l40s;
  l40s.id = "L40S-PCIE-48GB";
  l40s.memory_gb = 48;
  l40s.form_factor = "PCIe";
  placement::core::GpuSku a100;
  a100.id = "A100-SXM4-80GB";
  a100.memory_gb = 80;
  a100.form_factor = "SXM4";
  a100.max_nvlink_gb_s = 600;
  return {l40s, a100};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placement::v1::BenchmarkRun run;
  if (!placement::fuzz::ParseInput(data, size, &run)) return 0;
  static const std::vector<placement::core::GpuSku> catalog = Catalog();
  placement::core::Pool pool;
  pool.name = "l40s";
  pool.sku_id = "L40S-PCIE-48GB";
  pool.node_count = 2;
  pool.gpus_per_node = 4;
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  for (const auto& v : placement::services::ValidateRunFields(run, now)) {
    if (!absl::StartsWith(v.field, "run")) std::abort();
  }
  for (const auto& v : placement::services::ValidateRunAgainstCatalog(
           run, run.pool() == "l40s" ? &pool : nullptr, catalog)) {
    if (!absl::StartsWith(v.field, "run.")) std::abort();
  }
  return 0;
}
