#ifndef PLACEMENT_CLIENTS_AGENT_GPU_PROBE_H_
#define PLACEMENT_CLIENTS_AGENT_GPU_PROBE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clients/agent/sku_naming.h"

namespace placement::agent {

// The slice of NVML the agent uses, behind an interface so that tests hand
// it a fake instead of a GPU.
class Nvml {
 public:
  virtual ~Nvml() = default;
  // The GPUs with their names, memory and active NVLink links.
  virtual absl::StatusOr<std::vector<GpuSighting>> Devices() = 0;
  // Memory in use on each GPU right now, in bytes (index as Devices()).
  virtual absl::StatusOr<std::vector<uint64_t>> MemoryUsedBytes() = 0;
};

// NVML from the driver, loaded at run time with dlopen(`library`) so the
// agent has no build dependency on CUDA. NotFound when the library is not
// there (no driver); Internal when nvmlInit fails.
absl::StatusOr<std::unique_ptr<Nvml>> LoadNvml(
    const std::string& library = "libnvidia-ml.so.1");

// Parses `nvidia-smi --query-gpu=name,memory.total[,...] --format=csv`
// output. Columns are found by their header names, so order and extra
// columns do not matter; units ("81920 MiB") are accepted.
absl::StatusOr<std::vector<GpuSighting>> ParseNvidiaSmiCsv(
    absl::string_view csv);

// Adds to `gpus` the active links counted in `nvidia-smi nvlink -s` output
// ("GPU 0: ..." followed by "Link 0: 25 GB/s" or "Link 0: <inactive>").
void ApplyNvlinkStatus(absl::string_view status,
                       std::vector<GpuSighting>* gpus);

// The query the agent runs (and the fixtures were recorded with).
inline constexpr char kNvidiaSmiQuery[] =
    "--query-gpu=index,name,memory.total,pci.bus_id --format=csv";

// Names the node: NVML when `nvml` is non-null, else `nvidia_smi` (the
// binary to run) with kNvidiaSmiQuery and `nvlink -s`. `nvml_problem` says
// why NVML is null (LoadNvml's error), for the problem when neither answers.
NodeDetection DetectNode(Nvml* nvml, const std::string& nvidia_smi,
                         const std::string& nvml_problem = "");

}  // namespace placement::agent

#endif  // PLACEMENT_CLIENTS_AGENT_GPU_PROBE_H_
