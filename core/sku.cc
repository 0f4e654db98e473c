#include "core/sku.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement::core {
namespace {

// Lower-case alphanumeric runs: "a100 80g" -> {"a100", "80g"}.
std::vector<std::string> Tokens(absl::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current.push_back(absl::ascii_tolower(c));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

std::string Squashed(absl::string_view text) {
  return absl::StrJoin(Tokens(text), "");
}

}  // namespace

double GpuSku::UsableMemoryGb() const {
  if (absl::StartsWithIgnoreCase(memory_type, "HBM")) {
    return memory_gb * 79.15 / 80 * 1.073741824;
  }
  return memory_gb;
}

bool GpuSku::IsSxm() const {
  return absl::StartsWithIgnoreCase(form_factor, "SXM");
}

std::vector<std::string> SkuCandidates(absl::string_view name,
                                       const std::vector<GpuSku>& catalog) {
  std::vector<std::string> candidates;
  const std::vector<std::string> tokens = Tokens(name);
  if (tokens.empty()) return candidates;
  for (const GpuSku& sku : catalog) {
    const std::string haystack = Squashed(sku.id);
    bool all = true;
    for (const std::string& token : tokens) {
      if (!absl::StrContains(haystack, token)) {
        all = false;
        break;
      }
    }
    if (all) candidates.push_back(sku.id);
  }
  return candidates;
}

absl::StatusOr<GpuSku> ResolveSku(absl::string_view name,
                                  const std::vector<GpuSku>& catalog) {
  for (const GpuSku& sku : catalog) {
    if (absl::EqualsIgnoreCase(sku.id, name)) return sku;
  }
  const std::vector<std::string> candidates = SkuCandidates(name, catalog);
  if (candidates.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no GPU SKU is named '", name, "'"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", name, "' does not name an exact GPU SKU; ",
      candidates.size() == 1 ? "did you mean " : "it could be any of: ",
      absl::StrJoin(candidates, ", ")));
}

}  // namespace placement::core
