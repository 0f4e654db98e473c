#include "core/model_catalog.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement::core {
namespace {

ModelArchitecture Arch(const char* name, int h, int layers, int heads, int kv,
                       int f, int vocab, bool tied, bool qkv_bias,
                       int max_pos) {
  ModelArchitecture a;
  a.name = name;
  a.hidden_size = h;
  a.num_layers = layers;
  a.num_attention_heads = heads;
  a.num_kv_heads = kv;
  a.intermediate_size = f;
  a.vocab_size = vocab;
  a.tied_embeddings = tied;
  a.qkv_bias = qkv_bias;
  a.max_position_embeddings = max_pos;
  a.num_params = TransformerParams(a);
  return a;
}

std::string Squash(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '-' || c == '_' || c == '.' || c == ' ') continue;
    out.push_back(absl::ascii_tolower(c));
  }
  return out;
}

}  // namespace

int ModelArchitecture::EffectiveHeadDim() const {
  if (head_dim > 0) return head_dim;
  return num_attention_heads > 0 ? hidden_size / num_attention_heads : 0;
}

int64_t ModelArchitecture::QueryDim() const {
  return int64_t{num_attention_heads} * EffectiveHeadDim();
}

int64_t ModelArchitecture::KvDim() const {
  return int64_t{num_kv_heads} * EffectiveHeadDim();
}

int64_t ModelArchitecture::EmbeddingParams() const {
  return int64_t{vocab_size} * hidden_size * (tied_embeddings ? 1 : 2);
}

int64_t ModelArchitecture::LayerParams() const {
  const int64_t h = hidden_size;
  const int64_t f = intermediate_size;
  int64_t attention = 2 * h * QueryDim() + 2 * h * KvDim();
  if (qkv_bias) attention += QueryDim() + 2 * KvDim();
  const int64_t mlp = (gated_mlp ? 3 : 2) * h * f;
  return attention + mlp + 2 * h;  // two norms
}

int64_t ModelArchitecture::Params() const {
  return num_params > 0 ? num_params : TransformerParams(*this);
}

int64_t TransformerParams(const ModelArchitecture& arch) {
  return int64_t{arch.num_layers} * arch.LayerParams() +
         arch.EmbeddingParams() + arch.hidden_size;
}

const std::vector<ModelArchitecture>& ModelCatalog() {
  // Dimensions: finetune-memory-formulas.md section 9 (litgpt config.py
  // @26857050, torchtune _model_builders.py @bd2a0fc, HF config.json copies).
  static const auto* const kCatalog = new std::vector<ModelArchitecture>{
      Arch("Llama-2-7B", 4096, 32, 32, 32, 11008, 32000, false, false, 4096),
      Arch("Llama-2-13B", 5120, 40, 40, 40, 13824, 32000, false, false, 4096),
      Arch("Llama-2-70B", 8192, 80, 64, 8, 28672, 32000, false, false, 4096),
      Arch("Llama-3-8B", 4096, 32, 32, 8, 14336, 128256, false, false, 8192),
      Arch("Llama-3-70B", 8192, 80, 64, 8, 28672, 128256, false, false, 8192),
      Arch("Llama-3.1-8B", 4096, 32, 32, 8, 14336, 128256, false, false,
           131072),
      Arch("Llama-3.1-70B", 8192, 80, 64, 8, 28672, 128256, false, false,
           131072),
      Arch("Llama-3.2-1B", 2048, 16, 32, 8, 8192, 128256, true, false, 131072),
      Arch("Llama-3.2-3B", 3072, 28, 24, 8, 8192, 128256, true, false, 131072),
      Arch("Mistral-7B", 4096, 32, 32, 8, 14336, 32000, false, false, 32768),
      Arch("Qwen2.5-7B", 3584, 28, 28, 4, 18944, 152064, false, true, 131072),
      Arch("Qwen2.5-14B", 5120, 48, 40, 8, 13824, 152064, false, true, 131072),
      Arch("Qwen2.5-32B", 5120, 64, 40, 8, 27648, 152064, false, true, 131072),
      Arch("Qwen2.5-72B", 8192, 80, 64, 8, 29568, 152064, false, true, 131072),
  };
  return *kCatalog;
}

absl::StatusOr<ModelArchitecture> FindModel(absl::string_view name) {
  const std::string wanted = Squash(name);
  for (const ModelArchitecture& arch : ModelCatalog()) {
    if (Squash(arch.name) == wanted) return arch;
  }
  return absl::NotFoundError(absl::StrCat("no model named '", name,
                                          "' in the catalog; use \"custom\" "
                                          "with explicit dimensions"));
}

namespace {

std::vector<std::string> LowerTokens(absl::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      current.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> ModelCandidates(absl::string_view name) {
  const std::vector<std::string> tokens = LowerTokens(name);
  std::vector<std::string> candidates;
  if (tokens.empty()) return candidates;
  for (const ModelArchitecture& arch : ModelCatalog()) {
    const std::string haystack = absl::StrJoin(LowerTokens(arch.name), "");
    if (std::all_of(tokens.begin(), tokens.end(), [&](const std::string& t) {
          return absl::StrContains(haystack, t);
        })) {
      candidates.push_back(arch.name);
    }
  }
  if (!candidates.empty()) return candidates;
  const std::string wanted = absl::StrJoin(tokens, "");
  constexpr size_t kMaxEdits = 3;
  std::vector<std::pair<size_t, std::string>> close;
  for (const ModelArchitecture& arch : ModelCatalog()) {
    const size_t d =
        EditDistance(wanted, absl::StrJoin(LowerTokens(arch.name), ""));
    if (d <= kMaxEdits) close.emplace_back(d, arch.name);
  }
  std::stable_sort(
      close.begin(), close.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [d, model] : close) candidates.push_back(std::move(model));
  return candidates;
}

std::vector<std::pair<std::string, std::string>> ArchitectureViolations(
    const ModelArchitecture& arch) {
  std::vector<std::pair<std::string, std::string>> out;
  auto bound = [&](const char* field, int64_t value, int64_t lo, int64_t hi) {
    if (value < lo || value > hi) {
      out.emplace_back(field,
                       absl::StrCat("must be between ", lo, " and ", hi));
    }
  };
  bound("hidden_size", arch.hidden_size, 64, 65536);
  bound("num_layers", arch.num_layers, 1, 1024);
  bound("num_attention_heads", arch.num_attention_heads, 1, 1024);
  bound("num_kv_heads", arch.num_kv_heads, 1, 1024);
  bound("intermediate_size", arch.intermediate_size, 64, 1 << 20);
  bound("vocab_size", arch.vocab_size, 1, 4 << 20);
  if (arch.head_dim != 0) bound("head_dim", arch.head_dim, 8, 1024);
  if (arch.num_params != 0) {
    bound("num_params", arch.num_params, 1'000'000, 10'000'000'000'000);
  }
  if (arch.num_attention_heads > 0 && arch.num_kv_heads > 0 &&
      arch.num_attention_heads % arch.num_kv_heads != 0) {
    out.emplace_back("num_kv_heads", "must divide num_attention_heads");
  }
  if (arch.head_dim == 0 && arch.num_attention_heads > 0 &&
      arch.hidden_size % arch.num_attention_heads != 0) {
    out.emplace_back("num_attention_heads",
                     "must divide hidden_size unless head_dim is set");
  }
  return out;
}

}  // namespace placement::core
