#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "clients/agent/commands/command_support.h"
#include "clients/agent/commands/commands.h"
#include "clients/agent/commands/flags.h"
#include "clients/agent/gpu_probe.h"
#include "clients/agent/sku_naming.h"

namespace placement::agent {

int Detect() {
  std::string nvml_problem;
  std::unique_ptr<Nvml> nvml = MaybeLoadNvml(&nvml_problem);
  const NodeDetection d =
      DetectNode(nvml.get(), absl::GetFlag(FLAGS_nvidia_smi), nvml_problem);
  if (absl::GetFlag(FLAGS_json)) {
    google::protobuf::Struct out;
    auto& f = *out.mutable_fields();
    f["sku"].set_string_value(d.sku);
    f["named"].set_bool_value(d.named());
    f["gpu_count"].set_number_value(d.gpu_count);
    f["nvlink"].set_string_value(NvlinkStateName(d.nvlink));
    f["source"].set_string_value(d.source);
    f["problem"].set_string_value(d.problem);
    auto* gpus = f["gpus"].mutable_list_value();
    for (const GpuSighting& gpu : d.gpus) {
      auto& g = *gpus->add_values()->mutable_struct_value()->mutable_fields();
      g["name"].set_string_value(gpu.name);
      g["memory_mib"].set_number_value(static_cast<double>(gpu.memory_mib));
      g["nvlink_active_links"].set_number_value(gpu.nvlink_active_links);
    }
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(out, &json, options);
    std::cout << json;
  } else if (d.named()) {
    std::cout << "sku:     " << d.sku << "\ngpus:    " << d.gpu_count
              << "\nnvlink:  " << NvlinkStateName(d.nvlink)
              << "\nsource:  " << d.source << "\n";
  } else {
    std::cout << "sku:     unknown (" << d.problem
              << ")\ngpus:    " << d.gpu_count << "\nsource:  " << d.source
              << "\n";
    if (!d.gpus.empty()) std::cout << "seen:\n" << DescribeSeen(d) << "\n";
    std::cout << "No evidence is recorded under a guessed SKU: name the card "
                 "with --sku EXACT_NAME only if you know it (placectl skus).\n";
  }
  return d.named() ? kExitOk : kExitFailed;
}

}  // namespace placement::agent
