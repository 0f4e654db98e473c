#include "clients/agent/commands/run_facts.h"

#include <algorithm>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "clients/agent/commands/command_support.h"
#include "clients/agent/commands/flags.h"
#include "clients/agent/recipe_input.h"
#include "clients/agent/sku_naming.h"
#include "clients/common/rpc_errors.h"
#include "common/uuid.h"
#include "placement/v1/catalog.grpc.pb.h"

namespace placement::agent {
namespace {

struct SkuChoice {
  std::string sku;
  double memory_gb = 0;
  absl::optional<NodeDetection> detection;  // when detection named the node
};

// The node's SKU: the operator's exact --sku (checked against the catalog),
// or detection. Never a guess.
absl::StatusOr<SkuChoice> ChooseSku(const Uploader& uploader, Nvml* nvml,
                                    const std::string& nvml_problem) {
  SkuChoice choice;
  const std::string stated = absl::GetFlag(FLAGS_sku);
  const NodeDetection detected =
      DetectNode(nvml, absl::GetFlag(FLAGS_nvidia_smi), nvml_problem);
  if (stated.empty()) {
    if (!detected.named()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot name this node's SKU exactly: ", detected.problem,
          detected.gpus.empty() ? "" : "\n", DescribeSeen(detected),
          "\nrefusing to record evidence under a guessed SKU; if you know "
          "the card, state it with --sku EXACT_NAME (placectl skus)"));
    }
    choice.sku = detected.sku;
    choice.memory_gb = FindKnownSku(detected.sku)->memory_gb;
    choice.detection = detected;
    return choice;
  }
  if (detected.named() && detected.sku != stated) {
    return absl::FailedPreconditionError(
        absl::StrCat("--sku ", stated, " contradicts detection: this node has ",
                     detected.gpu_count, " x ", detected.sku));
  }
  auto catalog = v1::CatalogService::NewStub(uploader.connection().channel());
  v1::GetSkuRequest request;
  request.set_name(stated);
  v1::GetSkuResponse response;
  grpc::Status status = catalog->GetSku(
      uploader.connection().Context(std::chrono::seconds(5)).get(), request,
      &response);
  if (status.ok()) {
    if (response.sku().name() != stated) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--sku ", stated, " is not an exact catalog name; did you mean ",
          response.sku().name(), "?"));
    }
    choice.memory_gb = response.sku().memory_gb();
  } else if (IsRetryable(status)) {
    // The service is away: the agent's own copy of the catalog decides.
    const KnownSku* known = FindKnownSku(stated);
    if (known == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sku ", stated, " is not an exact catalog SKU"));
    }
    choice.memory_gb = known->memory_gb;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--sku: ", clients::DescribeError(status)));
  }
  choice.sku = stated;
  if (detected.named()) choice.detection = detected;
  return choice;
}

absl::StatusOr<v1::Offload> ParseOffload(const std::string& text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "none") return v1::OFFLOAD_NONE;
  if (t == "cpu") return v1::OFFLOAD_CPU;
  if (t == "nvme") return v1::OFFLOAD_NVME;
  return absl::InvalidArgumentError("--offload must be none, cpu or nvme");
}

absl::StatusOr<v1::Interconnect> ParseInterconnect(const std::string& text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "nvlink") return v1::INTERCONNECT_NVLINK;
  if (t == "pcie") return v1::INTERCONNECT_PCIE;
  if (t == "host-memory" || t == "host_memory") {
    return v1::INTERCONNECT_HOST_MEMORY;
  }
  return absl::InvalidArgumentError(
      "--interconnect must be nvlink, pcie or host-memory");
}

absl::StatusOr<v1::PeakMemoryKind> ParseReportPeak(const std::string& text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "allocated") return v1::PEAK_MEMORY_KIND_ALLOCATED;
  if (t == "reserved") return v1::PEAK_MEMORY_KIND_RESERVED;
  if (t == "device-used" || t == "device_used") {
    return v1::PEAK_MEMORY_KIND_DEVICE_USED;
  }
  return absl::InvalidArgumentError(
      "--report_peak must be allocated, reserved or device-used");
}

// Refuses a run whose pool holds another SKU: the service would refuse the
// run anyway, but only after the GPU time was spent. An unreachable service
// is no reason to refuse: the run is spooled.
absl::Status CheckPoolHoldsSku(const Uploader& uploader,
                               const std::string& pool,
                               const std::string& sku) {
  auto catalog = v1::CatalogService::NewStub(uploader.connection().channel());
  v1::GetPoolRequest request;
  request.set_name(pool);
  v1::GetPoolResponse response;
  grpc::Status status = catalog->GetPool(
      uploader.connection().Context(std::chrono::seconds(5)).get(), request,
      &response);
  if (status.ok() && response.pool().sku() != sku) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool '", pool, "' has ", response.pool().sku(),
                     " cards; this node is ", sku));
  }
  if (!status.ok() && !IsRetryable(status)) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool '", pool, "': ", clients::DescribeError(status)));
  }
  if (!status.ok()) {
    std::cerr << "placement-agent: the service is unreachable ("
              << clients::DescribeError(status)
              << "); recording into the spool\n";
  }
  return absl::OkStatus();
}

// The link the collectives of a run on `gpus` GPUs use: the operator's
// --interconnect, else what detection saw. Never a guess.
absl::StatusOr<v1::Interconnect> ChooseInterconnect(int gpus,
                                                    const SkuChoice& sku) {
  const std::string stated = absl::GetFlag(FLAGS_interconnect);
  if (!stated.empty()) return ParseInterconnect(stated);
  if (sku.detection.has_value()) {
    return sku.detection->nvlink == NvlinkState::kActive
               ? v1::INTERCONNECT_NVLINK
               : v1::INTERCONNECT_PCIE;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "a ", gpus,
      "-GPU run opens collectives; without detection, state the link they "
      "use with --interconnect nvlink|pcie|host-memory"));
}

// What is known of the run before its command starts.
absl::StatusOr<RunFacts> FactsBeforeTheCommand(const v1::Recipe& recipe,
                                               const std::string& pool,
                                               const SkuChoice& sku,
                                               v1::Offload offload) {
  RunFacts facts;
  facts.recipe = recipe;
  facts.recipe.set_gpu_count(std::max(1, facts.recipe.gpu_count()));
  const int gpus = facts.recipe.gpu_count();
  facts.collectives_opened =
      gpus > 1 && facts.recipe.parallelism() != v1::PARALLELISM_SINGLE;
  facts.interconnect = v1::INTERCONNECT_NONE;
  if (facts.collectives_opened) {
    absl::StatusOr<v1::Interconnect> link = ChooseInterconnect(gpus, sku);
    if (!link.ok()) return link.status();
    facts.interconnect = *link;
  }
  facts.run_id = common::NewUuid();
  facts.agent_id = absl::GetFlag(FLAGS_agent_id).empty()
                       ? absl::StrCat("placement-agent@", HostName())
                       : absl::GetFlag(FLAGS_agent_id);
  facts.pool = pool;
  facts.sku = sku.sku;
  facts.card_memory_gb = sku.memory_gb;
  facts.node_names = {HostName()};
  facts.plan_id =
      FlagOrEnv(absl::GetFlag(FLAGS_plan_id), {"PLACEMENT_PLAN_ID"});
  facts.team = absl::GetFlag(FLAGS_team);
  facts.exclusive = absl::GetFlag(FLAGS_exclusive);
  if (const std::string peak = absl::GetFlag(FLAGS_report_peak);
      !peak.empty()) {
    absl::StatusOr<v1::PeakMemoryKind> kind = ParseReportPeak(peak);
    if (!kind.ok()) return kind.status();
    facts.report_peak = *kind;
  }
  facts.offload = offload;
  return facts;
}

}  // namespace

absl::StatusOr<RunInputs> ReadRunInputs() {
  RunInputs inputs;
  // Inside a job the Slurm plugin placed, the pool and the plan come from
  // the job's environment.
  inputs.pool = FlagOrEnv(absl::GetFlag(FLAGS_pool),
                          {"PLACEMENT_POOL", "SLURM_JOB_PARTITION"});
  if (inputs.pool.empty() || absl::GetFlag(FLAGS_recipe).empty()) {
    return absl::InvalidArgumentError(
        "run needs --pool (or $PLACEMENT_POOL, $SLURM_JOB_PARTITION) and "
        "--recipe");
  }
  absl::StatusOr<v1::Recipe> recipe =
      ReadRecipeFile(absl::GetFlag(FLAGS_recipe));
  if (!recipe.ok()) return recipe.status();
  absl::StatusOr<v1::Offload> offload =
      ParseOffload(absl::GetFlag(FLAGS_offload));
  if (!offload.ok()) return offload.status();
  inputs.recipe = *std::move(recipe);
  inputs.offload = *offload;
  return inputs;
}

absl::StatusOr<RunFacts> NameTheRun(const Uploader& uploader, Nvml* nvml,
                                    const std::string& nvml_problem,
                                    const RunInputs& inputs) {
  absl::StatusOr<SkuChoice> sku = ChooseSku(uploader, nvml, nvml_problem);
  if (!sku.ok()) return sku.status();
  if (absl::Status usable = CheckPoolHoldsSku(uploader, inputs.pool, sku->sku);
      !usable.ok()) {
    return usable;
  }
  return FactsBeforeTheCommand(inputs.recipe, inputs.pool, *sku,
                               inputs.offload);
}

}  // namespace placement::agent
