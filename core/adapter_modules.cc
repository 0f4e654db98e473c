#include "core/adapter_modules.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace placement::core {

std::string CanonicalModule(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (absl::EndsWith(lower, "_proj")) lower.resize(lower.size() - 5);
  static const char* const kAliases[][2] = {
      {"q", "q"},      {"query", "q"},   {"k", "k"},       {"key", "k"},
      {"v", "v"},      {"value", "v"},   {"o", "o"},       {"out", "o"},
      {"dense", "o"},  {"gate", "gate"}, {"w1", "gate"},   {"up", "up"},
      {"w3", "up"},    {"fc1", "up"},    {"down", "down"}, {"w2", "down"},
      {"fc2", "down"},
  };
  for (const auto& alias : kAliases) {
    if (lower == alias[0]) return alias[1];
  }
  return "";
}

bool IsAllLinear(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return lower == "all-linear" || lower == "all_linear" || lower == "all";
}

bool IsAdapter(FineTuneMethod method) {
  return method == FineTuneMethod::kLora || method == FineTuneMethod::kQlora;
}

bool AdapterHasRank(AdapterType adapter) {
  return adapter == AdapterType::kUnspecified ||
         adapter == AdapterType::kLora || adapter == AdapterType::kDora ||
         adapter == AdapterType::kLoha || adapter == AdapterType::kVera;
}
bool AdapterHasTargets(AdapterType adapter) {
  return adapter != AdapterType::kLlamaAdapter &&
         adapter != AdapterType::kLlamaAdapterV2;
}

}  // namespace placement::core
