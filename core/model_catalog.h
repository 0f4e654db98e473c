#ifndef PLACEMENT_CORE_MODEL_CATALOG_H_
#define PLACEMENT_CORE_MODEL_CATALOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement::core {

// The dimensions of a decoder-only transformer that the memory and step-time
// models need. Figures for the catalog models come from the public configs
// (litgpt config.py, torchtune model builders, each model's Hugging Face
// config.json); the parameter count follows the dense SwiGLU formula
// N = L(2h^2 + 2h n_kv d_h + 3hf + 2h) + Vh(2 if untied else 1) + h.
struct ModelArchitecture {
  std::string name;  // canonical spelling, e.g. "Llama-3.1-8B"
  int hidden_size = 0;
  int num_layers = 0;
  int num_attention_heads = 0;
  int num_kv_heads = 0;       // == num_attention_heads for multi-head attention
  int head_dim = 0;           // 0 = hidden_size / num_attention_heads
  int intermediate_size = 0;  // MLP width
  int vocab_size = 0;
  bool tied_embeddings = false;
  bool gated_mlp = true;  // SwiGLU (gate, up, down) vs GELU (up, down)
  bool qkv_bias = false;  // Qwen2 family
  int max_position_embeddings = 0;
  // Total parameters; 0 = computed from the dimensions by TransformerParams.
  int64_t num_params = 0;

  int EffectiveHeadDim() const;
  int64_t QueryDim() const;  // num_attention_heads * head_dim
  int64_t KvDim() const;     // num_kv_heads * head_dim
  // Parameters of the input embedding plus the output head (once if tied).
  int64_t EmbeddingParams() const;
  // Parameters of one transformer block (attention, MLP, norms).
  int64_t LayerParams() const;
  // num_params when set, otherwise TransformerParams(*this).
  int64_t Params() const;

  friend bool operator==(const ModelArchitecture&,
                         const ModelArchitecture&) = default;
};

// N = L * LayerParams + embeddings (+ head when untied) + final norm. Exact
// for Llama/Mistral/Qwen2 (reproduces Llama-3.2-3B's 3,212,749,824).
int64_t TransformerParams(const ModelArchitecture& arch);

// The built-in architectures: Llama-2 7B/13B/70B, Llama-3 and 3.1 8B/70B,
// Llama-3.2 1B/3B, Mistral-7B, Qwen2.5 7B/14B/32B/72B.
const std::vector<ModelArchitecture>& ModelCatalog();

// Looks a model up by name, ignoring case and the separators '-', '_', '.'
// and ' ' ("llama-3.1-8b", "Llama_3.1_8B"). Returns NOT_FOUND otherwise.
absl::StatusOr<ModelArchitecture> FindModel(absl::string_view name);

// Catalog names `name` may have meant, for a "did you mean": those holding
// every letter-and-digit run of `name` ("llama 8b"), else those within a few
// edits of it ("Lama-3.1-8B"), best first. Empty when nothing is close.
std::vector<std::string> ModelCandidates(absl::string_view name);

// Checks the dimensions of a custom architecture. Returns one message per
// broken bound, each naming the field (e.g. "hidden_size must be ...").
std::vector<std::pair<std::string, std::string>> ArchitectureViolations(
    const ModelArchitecture& arch);

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODEL_CATALOG_H_
