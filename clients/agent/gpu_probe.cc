#include "clients/agent/gpu_probe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace placement::agent {
namespace {

// The few NVML declarations we need (nvml.h, stable ABI since driver 418).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr unsigned kNameLength = 96;

class DlNvml : public Nvml {
 public:
  ~DlNvml() override {
    if (shutdown_ != nullptr) shutdown_();
    if (handle_ != nullptr) dlclose(handle_);
  }

  static absl::StatusOr<std::unique_ptr<Nvml>> Load(const std::string& lib) {
    void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("cannot load ", lib, ": ", dlerror()));
    }
    auto nvml = std::unique_ptr<DlNvml>(new DlNvml);
    nvml->handle_ = handle;
    bool ok = nvml->Bind(&nvml->init_, "nvmlInit_v2") &&
              nvml->Bind(&nvml->shutdown_, "nvmlShutdown") &&
              nvml->Bind(&nvml->count_, "nvmlDeviceGetCount_v2") &&
              nvml->Bind(&nvml->by_index_, "nvmlDeviceGetHandleByIndex_v2") &&
              nvml->Bind(&nvml->name_, "nvmlDeviceGetName") &&
              nvml->Bind(&nvml->memory_, "nvmlDeviceGetMemoryInfo");
    // NVLink queries are absent on some builds; links then count as none.
    nvml->Bind(&nvml->nvlink_state_, "nvmlDeviceGetNvLinkState");
    if (!ok) {
      nvml->shutdown_ = nullptr;
      return absl::InternalError(absl::StrCat(lib, " lacks NVML symbols"));
    }
    if (const nvmlReturn_t r = nvml->init_(); r != kNvmlSuccess) {
      nvml->shutdown_ = nullptr;
      return absl::InternalError(absl::StrCat("nvmlInit failed: ", r));
    }
    return std::unique_ptr<Nvml>(std::move(nvml));
  }

  absl::StatusOr<std::vector<GpuSighting>> Devices() override {
    unsigned count = 0;
    if (count_(&count) != kNvmlSuccess) {
      return absl::InternalError("nvmlDeviceGetCount failed");
    }
    std::vector<GpuSighting> gpus;
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t device;
      if (by_index_(i, &device) != kNvmlSuccess) {
        return absl::InternalError(absl::StrCat("no NVML handle for GPU ", i));
      }
      GpuSighting gpu;
      char name[kNameLength] = {};
      if (name_(device, name, kNameLength) == kNvmlSuccess) gpu.name = name;
      nvmlMemory_t memory{};
      if (memory_(device, &memory) == kNvmlSuccess) {
        gpu.memory_mib = static_cast<int64_t>(memory.total >> 20);
      }
      if (nvlink_state_ != nullptr) {
        for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
          int active = 0;
          if (nvlink_state_(device, link, &active) == kNvmlSuccess &&
              active != 0) {
            ++gpu.nvlink_active_links;
          }
        }
      }
      gpus.push_back(std::move(gpu));
    }
    return gpus;
  }

  absl::StatusOr<std::vector<uint64_t>> MemoryUsedBytes() override {
    unsigned count = 0;
    if (count_(&count) != kNvmlSuccess) {
      return absl::InternalError("nvmlDeviceGetCount failed");
    }
    std::vector<uint64_t> used;
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t device;
      nvmlMemory_t memory{};
      if (by_index_(i, &device) != kNvmlSuccess ||
          memory_(device, &memory) != kNvmlSuccess) {
        return absl::InternalError(absl::StrCat("no memory info for GPU ", i));
      }
      used.push_back(memory.used);
    }
    return used;
  }

 private:
  DlNvml() = default;

  template <typename F>
  bool Bind(F* f, const char* symbol) {
    *f = reinterpret_cast<F>(dlsym(handle_, symbol));
    return *f != nullptr;
  }

  void* handle_ = nullptr;
  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*shutdown_)() = nullptr;
  nvmlReturn_t (*count_)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index_)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name_)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*memory_)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*nvlink_state_)(nvmlDevice_t, unsigned, int*) = nullptr;
};

// Runs `command` through /bin/sh; its stdout, or an error with its exit.
absl::StatusOr<std::string> Capture(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("popen failed");
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    out.append(buffer, n);
  const int status = pclose(pipe);
  // The shell's "command not found".
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return absl::NotFoundError("not found");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::UnavailableError(
        absl::StrCat("'", command, "' exited ",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  return out;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Nvml>> LoadNvml(const std::string& library) {
  return DlNvml::Load(library);
}

absl::StatusOr<std::vector<GpuSighting>> ParseNvidiaSmiCsv(
    absl::string_view csv) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(csv, absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
  if (lines.empty())
    return absl::InvalidArgumentError("empty nvidia-smi output");
  int name_column = -1, memory_column = -1;
  std::vector<absl::string_view> header = absl::StrSplit(lines[0], ',');
  for (size_t i = 0; i < header.size(); ++i) {
    absl::string_view h = absl::StripAsciiWhitespace(header[i]);
    if (h == "name") name_column = static_cast<int>(i);
    if (absl::StartsWith(h, "memory.total"))
      memory_column = static_cast<int>(i);
  }
  if (name_column < 0 || memory_column < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nvidia-smi header lacks name or memory.total: '", lines[0], "'"));
  }
  std::vector<GpuSighting> gpus;
  for (size_t l = 1; l < lines.size(); ++l) {
    // GPU names never contain commas; the bus id does not either.
    std::vector<absl::string_view> cells = absl::StrSplit(lines[l], ',');
    if (static_cast<int>(cells.size()) <=
        std::max(name_column, memory_column)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nvidia-smi line ", l + 1, " is short: '", lines[l], "'"));
    }
    GpuSighting gpu;
    gpu.name = std::string(absl::StripAsciiWhitespace(cells[name_column]));
    absl::string_view memory = absl::StripAsciiWhitespace(cells[memory_column]);
    absl::ConsumeSuffix(&memory, "MiB");
    memory = absl::StripAsciiWhitespace(memory);
    if (!absl::SimpleAtoi(memory, &gpu.memory_mib)) {
      // "[N/A]" and friends: the card is seen, its size is not.
      gpu.memory_mib = 0;
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

void ApplyNvlinkStatus(absl::string_view status,
                       std::vector<GpuSighting>* gpus) {
  int gpu = -1;
  for (absl::string_view line : absl::StrSplit(status, absl::ByAnyChar("\r\n"),
                                               absl::SkipWhitespace())) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "GPU ")) {
      const size_t colon = line.find(':');
      if (colon == absl::string_view::npos ||
          !absl::SimpleAtoi(line.substr(0, colon), &gpu)) {
        gpu = -1;
      }
      continue;
    }
    if (gpu < 0 || gpu >= static_cast<int>(gpus->size())) continue;
    if (absl::StartsWith(line, "Link ") &&
        !absl::StrContains(line, "inactive")) {
      ++(*gpus)[gpu].nvlink_active_links;
    }
  }
}

NodeDetection DetectNode(Nvml* nvml, const std::string& nvidia_smi,
                         const std::string& nvml_problem) {
  std::string nvml_said = nvml_problem;
  if (nvml != nullptr) {
    absl::StatusOr<std::vector<GpuSighting>> gpus = nvml->Devices();
    if (gpus.ok()) return NameNode(*std::move(gpus), "nvml");
    nvml_said = std::string(gpus.status().message());
  }
  absl::StatusOr<std::string> csv = Capture(absl::StrCat(
      ShellQuote(nvidia_smi), " ", kNvidiaSmiQuery, " 2>/dev/null"));
  absl::StatusOr<std::vector<GpuSighting>> gpus =
      csv.ok() ? ParseNvidiaSmiCsv(*csv)
               : absl::StatusOr<std::vector<GpuSighting>>(csv.status());
  if (!gpus.ok()) {
    NodeDetection d;
    d.source = "nvidia-smi";
    const std::string nvml_part =
        nvml_said.empty()
            ? "NVML did not answer"
            : absl::StrCat("NVML could not be loaded (", nvml_said, ")");
    if (absl::IsNotFound(gpus.status())) {
      // No driver at all: the usual case on a machine without a GPU.
      d.problem = absl::StrCat(
          "no NVIDIA driver found: ", nvml_part,
          " and nvidia-smi is not installed ('", nvidia_smi,
          "' not found). On a GPU node, install the NVIDIA driver (it "
          "brings both); on a machine without a GPU there is nothing to "
          "detect: run this on the GPU node");
    } else {
      d.problem = absl::StrCat(nvml_part, " and nvidia-smi failed (",
                               gpus.status().message(), ")");
    }
    return d;
  }
  absl::StatusOr<std::string> links =
      Capture(absl::StrCat(ShellQuote(nvidia_smi), " nvlink -s 2>/dev/null"));
  if (links.ok()) ApplyNvlinkStatus(*links, &*gpus);
  return NameNode(*std::move(gpus), "nvidia-smi");
}

}  // namespace placement::agent
