#ifndef PLACEMENT_TESTS_CORE_PUBLISHED_MEASUREMENTS_H_
#define PLACEMENT_TESTS_CORE_PUBLISHED_MEASUREMENTS_H_

// Reads testdata/published_finetune_measurements.csv and maps each row onto
// a core::Recipe. Rows the models cannot represent are returned with a
// skip reason, never dropped silently. Shared by the memory and step-time
// calibration tests.

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/fitting/model_fit.h"
#include "core/model_catalog.h"
#include "core/recipe.h"
#include "tests/core/test_catalog.h"

namespace placement::core::testing {

inline constexpr char kMeasurementsCsv[] =
    "testdata/published_finetune_measurements.csv";
// Row numbers printed for the added and hold-out files: 1001.. and 2001..
// (the shared file's rows keep 1..).
inline constexpr int kAddedLineOffset = 1000;
inline constexpr int kHoldOutLineOffset = 2000;

// Peak memory happens at the longest padded batch. LitGPT's notes give the
// longest Alpaca sample as 1304 Llama-2 tokens, which is the representative
// length of every "variable (Alpaca ...)" row.
inline constexpr int kAlpacaLongestTokens = 1304;
inline constexpr int kMetaMathQaMeanTokens = 210;

using CsvRow = std::map<std::string, std::string>;

// RFC 4180-ish: quoted fields with "" escapes and embedded commas/newlines.
inline std::vector<CsvRow> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(std::move(field));
      field.clear();
      if (!(record.size() == 1 && record[0].empty())) {
        records.push_back(std::move(record));
      }
      record.clear();
    } else {
      field.push_back(c);
    }
  }
  if (!field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  std::vector<CsvRow> rows;
  if (records.empty()) return rows;
  for (size_t r = 1; r < records.size(); ++r) {
    CsvRow row;
    for (size_t i = 0; i < records[0].size() && i < records[r].size(); ++i) {
      row[records[0][i]] = records[r][i];
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

struct MappedRow {
  int line = 0;  // 1-based data row number
  std::string label;
  // The publication the row comes from (SourceGroup): the unit that the
  // cross-validation holds out.
  std::string source_group;
  std::string skip_reason;  // non-empty: not mapped
  Recipe recipe;            // normalized
  ModelArchitecture arch;
  double capacity_gb = 0;  // the row's own card, nominal
  // What CUDA can allocate on it, in GB (1e9 bytes): HBM cards' nominal
  // "80GB" / "40GB" are GiB, of which 79.15 of 80 are usable (stas00's
  // mem_get_info on A100/H100 80GB; LitGPT oom.md "total capacity of 79.15
  // GiB"): 1.0623 x nominal. GDDR cards and unnamed ones stay nominal.
  double usable_capacity_gb = 0;
  std::string sku_id;             // closest catalog SKU, for throughput
  bool ran = true;                // false for published OOMs
  bool boundary = false;          // peak ~= capacity at that length
  std::optional<double> peak_gb;  // measured (or capacity for boundary)
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> step_time_s;
  bool variable_length = false;  // Alpaca rows: mean length unknown
  // Which file the row came from: the calibration rows the constants are
  // fitted to, or the hold-out rows they never see.
  bool hold_out = false;
  // Why the row's peak or throughput, though published, is not compared
  // (empty when it is, or when none was published).
  std::string memory_skip_reason;
  std::string step_time_skip_reason;
  bool compiled = false;  // ran under torch.compile (not a recipe field)
  // The bandwidth per GPU between the nodes of the run, when its source
  // names the network (0: the published-run pool's InfiniBand default).
  double inter_node_gb_s_per_gpu = 0;
};

inline ModelArchitecture Custom(const char* name, int h, int layers, int heads,
                                int kv, int f, int vocab, bool tied, bool gated,
                                double params_b, int head_dim = 0) {
  ModelArchitecture a;
  a.name = name;
  a.hidden_size = h;
  a.num_layers = layers;
  a.num_attention_heads = heads;
  a.num_kv_heads = kv;
  a.head_dim = head_dim;
  a.intermediate_size = f;
  a.vocab_size = vocab;
  a.tied_embeddings = tied;
  a.gated_mlp = gated;
  a.num_params = static_cast<int64_t>(params_b * 1e9);
  return a;
}

// Architectures of the non-catalog models in the CSV, from their public
// configs (GPT-NeoX StableLM, Falcon, Gemma, MPT: GELU 4h MLP except Gemma's
// GeGLU). The params_b column supplies the parameter count.
inline std::optional<ModelArchitecture> CustomArchitecture(
    const std::string& model, double params_b) {
  if (model == "StableLM-base-alpha-3B")
    return Custom("StableLM-base-alpha-3B", 4096, 16, 32, 32, 16384, 50688,
                  false, false, params_b);
  if (model == "Falcon-40B")
    return Custom("Falcon-40B", 8192, 60, 128, 8, 32768, 65024, false, false,
                  params_b);
  if (model == "Gemma-7B")
    return Custom("Gemma-7B", 3072, 28, 16, 16, 24576, 256000, true, true,
                  params_b, 256);
  if (model == "MPT-7B")
    return Custom("MPT-7B", 4096, 32, 32, 32, 16384, 50432, true, false,
                  params_b);
  if (model == "MPT-13B")
    return Custom("MPT-13B", 5120, 40, 40, 40, 20480, 50432, true, false,
                  params_b);
  if (model == "MPT-30B")
    return Custom("MPT-30B", 7168, 48, 64, 64, 28672, 50432, true, false,
                  params_b);
  if (model == "CodeLlama-34B")  // Llama 2 34B's architecture
    return Custom("CodeLlama-34B", 8192, 48, 64, 8, 22016, 32000, false, true,
                  params_b);
  if (model == "Yi-34B")
    return Custom("Yi-34B", 7168, 60, 56, 8, 20480, 64000, false, true,
                  params_b);
  if (model == "MPT-70B")
    return Custom("MPT-70B", 8192, 80, 64, 64, 32768, 50432, true, false,
                  params_b);
  return std::nullopt;
}

inline std::string CatalogModelFor(const std::string& model) {
  if (model == "Llama-3.1-8B-Instruct") return "Llama-3.1-8B";
  // Llama-3.3-70B has the Llama-3.1-70B architecture.
  if (model == "Llama-3.3-70B-Instruct") return "Llama-3.1-70B";
  if (model == "Mistral-7B-v0.1") return "Mistral-7B";
  return model;
}

// The publication of a row: repository and document, with the per-run
// result files of one benchmark (PEFT's MetaMathQA results/*.json) and the
// tables of one README (at any commit) counted as one publication, so that
// a held-out publication shares no run, table or author's setup with the
// rows the constants are fitted on.
inline std::string SourceGroup(const std::string& source) {
  // A table quoted from another publication belongs to that one.
  if (const size_t quoting = source.find("quoting ");
      quoting != std::string::npos) {
    return SourceGroup(source.substr(quoting + 8));
  }
  std::vector<std::string> words =
      absl::StrSplit(source, ' ', absl::SkipEmpty());
  if (words.empty()) return source;
  std::string document = words.size() > 1 ? words[1] : "";
  if (const size_t results = document.find("/results/");
      results != std::string::npos) {
    document.resize(results + 9);
  }
  return words[0] + " " + document;
}

// Cards of published runs that the catalog does not list, as their
// sources describe them. torchtitan's Grand Teton H100s: "96GB HBM2e with
// 2.4 TB/sec", run at 500 W, "the actual peak TFLOPs number is between SXM
// and NVL": the middle of 989 and 835 dense bf16 TFLOPs.
inline const GpuSku& PublishedSku(const std::string& id) {
  static const GpuSku kH100Hbm2e =
      MakeSku("H100-HBM2E-96GB-500W", "H100", "Hopper", 96, "HBM2e", 2400,
              "SXM5", 900, 5, 912, 1824, 500);
  if (id == kH100Hbm2e.id) return kH100Hbm2e;
  return Sku(id);
}

inline std::optional<double> Number(const std::string& text) {
  double value;
  if (absl::SimpleAtod(text, &value)) return value;
  return std::nullopt;
}

// The first integer after `marker` in `text`, if any ("GA 4" -> 4).
inline std::optional<int> IntAfter(const std::string& text,
                                   const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return std::nullopt;
  return std::atoi(text.c_str() + at + marker.size());
}

// Long: one published row read column group by column group (model,
// method, sequence and batch, precision, GPUs, framework, measurements),
// each group reading what the ones before it set and able to skip the
// row with its reason; split, every piece would take the whole row and
// the half-built result.
inline MappedRow MapRow(const CsvRow& row, int line) {
  MappedRow out;
  out.line = line;
  auto get = [&](const char* key) {
    auto it = row.find(key);
    return it == row.end() ? std::string() : it->second;
  };
  const std::string model = get("model"), method = get("method"),
                    notes = get("notes"), gpu = get("gpu"),
                    seq = get("seq_len"), precision = get("precision"),
                    ckpt = get("grad_checkpointing");
  out.label = model + " / " + method + " / " + gpu;
  out.source_group = SourceGroup(get("source"));
  auto skip = [&](std::string reason) {
    out.skip_reason = std::move(reason);
    return out;
  };
  const double params_b = Number(get("params_b")).value_or(0);

  // --- Model. ---
  Recipe r;
  if (auto arch = FindModel(CatalogModelFor(model)); arch.ok()) {
    r.model = arch->name;
  } else if (auto custom = CustomArchitecture(model, params_b)) {
    r.model = kCustomModel;
    r.custom_architecture = *custom;
  } else {
    return skip(
        "architecture not modeled (encoder-decoder / BLOOM / "
        "settings not published)");
  }

  // --- Method. ---
  if (method == "(finetune, method not stated)") return skip("method unknown");
  if (absl::StrContains(method, "offload") ||
      absl::StrContains(notes, "CPU param offload")) {
    return skip("ran with CPU offload: not an on-GPU fit");
  }
  if (absl::StartsWith(method, "Full")) {
    r.method = FineTuneMethod::kFull;
  } else if (absl::StrContains(method, "QLoRA") ||
             absl::StrContains(method, "nf4")) {
    r.method = FineTuneMethod::kQlora;
    r.double_quantization = absl::StrContains(method, "-dq") ||
                            absl::StrContains(method, "nested quant");
  } else {
    r.method = FineTuneMethod::kLora;
  }
  // The adapter family: LitGPT's "Adapter (LLaMA-Adapter)" and "Adapter
  // v2" (with "+ bnb.nf4" a QLoRA-style NF4 base), PEFT's DoRA, LoHa, VeRA
  // and IA3; LoRA otherwise.
  if (absl::StartsWith(method, "Adapter v2")) {
    r.adapter = AdapterType::kLlamaAdapterV2;
  } else if (absl::StartsWith(method, "Adapter (LLaMA-Adapter)")) {
    r.adapter = AdapterType::kLlamaAdapter;
  } else if (method == "DoRA") {
    r.adapter = AdapterType::kDora;
  } else if (method == "LoHa") {
    r.adapter = AdapterType::kLoha;
  } else if (method == "VeRA") {
    r.adapter = AdapterType::kVera;
  } else if (method == "IA3") {
    r.adapter = AdapterType::kIa3;
  }
  const bool ranked = r.adapter != AdapterType::kIa3 &&
                      r.adapter != AdapterType::kLlamaAdapter &&
                      r.adapter != AdapterType::kLlamaAdapterV2;
  if (r.method != FineTuneMethod::kFull && ranked) {
    r.lora_rank = static_cast<int>(Number(get("lora_rank")).value_or(8));
  }
  if (r.method != FineTuneMethod::kFull &&
      r.adapter != AdapterType::kLlamaAdapter &&
      r.adapter != AdapterType::kLlamaAdapterV2) {
    if (absl::StrContains(method, "all-linear") ||
        absl::StrContains(method, "all linear")) {
      r.target_modules = {"all-linear"};
    } else if (absl::StrContains(notes, "targets gate,up,down")) {
      r.target_modules = {"gate", "up", "down"};
    } else if (absl::StrContains(notes, "targets k,v,down")) {
      r.target_modules = {"k", "v", "down"};
    } else {
      r.target_modules = {"q", "v"};
    }
  }

  // --- Sequence length and batch. ---
  if (auto s = Number(seq)) {
    r.sequence_length = static_cast<int>(*s);
  } else if (absl::StartsWith(seq, "variable (Alpaca")) {
    r.sequence_length = kAlpacaLongestTokens;
    out.variable_length = true;
  } else if (absl::StrContains(seq, "max_seq_length 768")) {
    r.sequence_length = 768;  // p99 memory is reached by the longest batches
    out.variable_length = true;
  } else if (seq == "max 1024") {
    r.sequence_length = 1024;
    out.variable_length = true;
  } else {
    return skip("sequence length not published");
  }
  if (auto b = Number(get("micro_batch"))) {
    r.micro_batch_size = static_cast<int>(*b);
  } else {
    return skip("micro-batch not published");
  }
  if (auto ga = IntAfter(notes, "GradAccum "))
    r.gradient_accumulation_steps = *ga;
  if (auto ga = IntAfter(notes, "GA ")) r.gradient_accumulation_steps = *ga;

  // --- Precision. ---
  if (r.method == FineTuneMethod::kQlora) {
    r.precision = Precision::kNf4;
  } else if (absl::StrContains(precision, "bf16-mixed")) {
    // Lightning's bf16-mixed: the model stays fp32, autocast computes in
    // bf16 (for a full fine-tune that is BF16 + fp32 master weights).
    r.precision =
        r.method == FineTuneMethod::kFull ? Precision::kBf16 : Precision::kFp32;
    r.fp32_master_weights = true;
  } else if (precision == "amp_bf16") {
    r.precision = Precision::kBf16;  // Composer AMP: fp32 master weights
    r.fp32_master_weights = true;
  } else if (absl::StrContains(precision, "Trainer bf16=True")) {
    r.precision = Precision::kBf16;  // HF Trainer keeps adapters in fp32
    r.fp32_master_weights = true;
  } else {
    // bf16-true, bf16 PURE, "bf16 weights (no AMP)", "16-bit base".
    r.precision = Precision::kBf16;
  }
  r.optimizer = Optimizer::kAdamW;
  if (absl::StrContains(ckpt, "offloaded")) {
    return skip("offloaded activation checkpointing (activations in CPU RAM)");
  }
  r.activation_checkpointing = absl::StartsWith(ckpt, "yes")
                                   ? ActivationCheckpointing::kOn
                                   : ActivationCheckpointing::kOff;
  // LLaMA-Factory (the source of the unsloth comparison table) turns
  // gradient checkpointing on by default; the column is empty there.
  if (ckpt.empty() && absl::StrContains(get("source"), "LLaMA-Factory")) {
    r.activation_checkpointing = ActivationCheckpointing::kOn;
  }
  // LitGPT, PEFT and Composer use SDPA/flash kernels; the LLaMA-Factory
  // comparison's plain "(HF)" rows are the ones without FlashAttention-2.
  r.attention = absl::StrContains(method, "(HF)")
                    ? AttentionImplementation::kEager
                    : AttentionImplementation::kFlash;

  // --- GPUs. ---
  if (absl::StrContains(gpu, "48")) {  // before "40": "L40S 48GB"
    out.capacity_gb = 48;
    out.sku_id = "L40S-PCIE-48GB";
  } else if (absl::StrContains(gpu, "40/80")) {
    out.capacity_gb = 40;  // the smaller card: the fit must hold on both
    out.sku_id = "A100-SXM4-40GB";
  } else if (absl::StrContains(gpu, "80")) {
    out.capacity_gb = 80;
    out.sku_id =
        absl::StrContains(gpu, "H100") ? "H100-SXM5-80GB" : "A100-SXM4-80GB";
  } else if (absl::StrContains(gpu, "24")) {
    out.capacity_gb = 24;
    out.sku_id = "A10-PCIE-24GB";
  } else if (absl::StrContains(gpu, "40")) {
    out.capacity_gb = 40;
    out.sku_id = "A100-SXM4-40GB";
  } else {
    return skip("GPU not published");
  }
  // Every 80 GB data-centre card (A100, H100) is HBM, named or not.
  const bool hbm = absl::StrContains(gpu, "A100") ||
                   absl::StrContains(gpu, "H100") || out.capacity_gb == 80;
  out.usable_capacity_gb =
      hbm ? out.capacity_gb * 79.15 / 80 * 1.073741824 : out.capacity_gb;
  r.gpu_count = static_cast<int>(Number(get("gpu_count")).value_or(1));
  if (r.gpu_count > 1) {
    r.parallelism = absl::StrContains(notes, "ZeRO-3") ? Parallelism::kZero3
                    : absl::StrContains(notes, "FSDP") ||
                            absl::StrContains(get("source"), "FSDP") ||
                            absl::StrContains(get("source"), "fsdp")
                        ? Parallelism::kFsdp
                        : Parallelism::kDdp;
  }
  // --- Framework, loss, data layout and the peak each source reports. ---
  const std::string source = get("source");
  if (absl::StartsWith(source, "Lightning-AI/litgpt")) {
    // LitGPT pads each batch to its longest sample and reports
    // torch.cuda.max_memory_allocated (its tables say so).
    r.framework = TrainingFramework::kLitgpt;
    r.packing = SequencePacking::kPaddedPerBatch;
    r.reported_peak = PeakMemoryKind::kAllocated;
    // With --devices > 1 its finetune scripts run
    // FSDPStrategy(auto_wrap_policy={Block},
    // activation_checkpointing_policy={Block}, ...) (finetune/lora.py
    // setup()): every multi-GPU row is checkpointed per block.
    if (r.gpu_count > 1) {
      r.activation_checkpointing = ActivationCheckpointing::kOn;
    }
  } else if (absl::StrContains(source, "MetaMathQA")) {
    // PEFT's benchmark: HF Trainer-style loop, dynamic padding, p99 of
    // torch.cuda.memory_reserved.
    r.framework = TrainingFramework::kHfTransformersPeft;
    r.packing = SequencePacking::kPaddedPerBatch;
    r.reported_peak = PeakMemoryKind::kReserved;
    // The benchmark's own count: "train total tokens" 4198051 over "train
    // samples" 20000 (results/lora--llama-3.2-3B-rank32.json, same data
    // and steps for every method) = 210 tokens per sample.
    r.mean_tokens_per_sample = kMetaMathQaMeanTokens;
  } else if (absl::StartsWith(source, "huggingface/peft docs")) {
    // TRL SFTTrainer with packing=True; the figures are nvidia-smi's.
    r.framework = TrainingFramework::kHfTransformersPeft;
    r.packing = SequencePacking::kPacked;
    r.reported_peak = PeakMemoryKind::kDeviceUsed;
    // Without 4-bit quantization its script loads the model in fp32
    // (examples/sft/utils.py create_and_prepare_model: torch_dtype =
    // quant_storage_dtype or torch.float32), and accelerate's FSDP
    // mixed_precision bf16 keeps the sharded flat parameters in that dtype,
    // gathering them in bf16 (FSDP MixedPrecision param_dtype). DeepSpeed
    // ZeRO-3 instead partitions the model in bf16 (its bf16 mode) with
    // fp32 master copies of the trainable weights: BF16 + master as mapped.
    if (r.method == FineTuneMethod::kLora &&
        r.parallelism == Parallelism::kFsdp) {
      r.precision = Precision::kFp32;
      r.fp32_master_weights = true;
    }
  } else if (absl::StrContains(source, "LLaMA-Factory")) {
    // LLaMA-Factory runs the HF Trainer (its "Unsloth" rows swap in
    // Unsloth's kernels and its fused cross-entropy); GRAM as nvidia-smi
    // shows it; no packing for SFT.
    const bool unsloth = absl::StrContains(method, "Unsloth");
    r.framework = unsloth ? TrainingFramework::kOther
                          : TrainingFramework::kHfTransformersPeft;
    if (unsloth) r.loss = LossImplementation::kChunkedCrossEntropy;
    r.packing = SequencePacking::kPaddedPerBatch;
    r.reported_peak = PeakMemoryKind::kDeviceUsed;
  } else if (absl::StartsWith(source, "unslothai/unsloth")) {
    // "HF + FA2" context-length boundaries: the card is full.
    r.framework = absl::StrContains(method, "Unsloth")
                      ? TrainingFramework::kOther
                      : TrainingFramework::kHfTransformersPeft;
    r.packing = SequencePacking::kPacked;
    r.reported_peak = PeakMemoryKind::kDeviceUsed;
  } else if (absl::StartsWith(source, "mosaicml/llm-foundry")) {
    r.framework = TrainingFramework::kOther;  // Composer
    r.packing = SequencePacking::kPacked;     // concatenated pre-training text
    // llm-foundry's models default to loss_fn "fused_crossentropy",
    // flash-attn's CrossEntropyLoss: the bf16 logits and an fp32 value per
    // row only, the softmax in registers: in memory a chunked loss.
    r.loss = LossImplementation::kChunkedCrossEntropy;
  }
  out.recipe = NormalizeRecipe(r);
  out.arch = *ResolveArchitecture(out.recipe);

  // --- Measurements. ---
  out.ran = !absl::StartsWith(notes, "OOM") &&
            !absl::StartsWith(notes, "OutOfMemoryError");
  out.boundary = absl::StartsWith(notes, "BOUNDARY");
  const std::string peak = get("peak_mem_gb");
  if (auto p = Number(peak)) {
    out.peak_gb = *p;
  } else if (std::vector<std::string> range = absl::StrSplit(peak, '-');
             range.size() == 2 && Number(range[0]) && Number(range[1])) {
    out.peak_gb = (*Number(range[0]) + *Number(range[1])) / 2;
  } else if (out.boundary) {
    out.peak_gb = out.usable_capacity_gb;
  }
  out.tokens_per_s_per_gpu = Number(get("tokens_per_s"));
  out.step_time_s = Number(get("step_time_s"));
  return out;
}

inline std::vector<MappedRow> LoadPublishedRows() {
  std::vector<MappedRow> rows;
  int line = 0;
  for (const CsvRow& row : ReadCsv(kMeasurementsCsv)) {
    rows.push_back(MapRow(row, ++line));
  }
  return rows;
}

// The rows added to the shared file (testdata/README.md): each states its
// recipe in columns of its own (framework, attention, layout, packing, loss,
// the peak's kind, the GPU's catalog id), so that no source-specific reading
// is needed, and says in skip_memory / skip_step_time why a published figure
// is not comparable.
inline constexpr char kAddedMeasurementsCsv[] =
    "testdata/published_finetune_measurements_added.csv";
inline constexpr char kHoldOutMeasurementsCsv[] =
    "testdata/published_finetune_measurements_holdout.csv";

// Long: as MapRow, one row of the added files read column by column in
// the file's order, the card before the measurements.
inline MappedRow MapExplicitRow(const CsvRow& row, int line) {
  MappedRow out;
  out.line = line;
  auto get = [&](const char* key) {
    auto it = row.find(key);
    return it == row.end() ? std::string() : it->second;
  };
  const std::string model = get("model"), method = get("method");
  out.label = model + " / " + method + " / " + get("gpu");
  out.source_group = SourceGroup(get("source"));
  auto skip = [&](std::string reason) {
    out.skip_reason = std::move(reason);
    return out;
  };
  Recipe r;
  const double params_b = Number(get("params_b")).value_or(0);
  if (auto arch = FindModel(CatalogModelFor(model)); arch.ok()) {
    r.model = arch->name;
  } else if (auto custom = CustomArchitecture(model, params_b)) {
    r.model = kCustomModel;
    r.custom_architecture = *custom;
  } else {
    return skip("architecture not modeled");
  }
  r.method = absl::StartsWith(method, "Full")    ? FineTuneMethod::kFull
             : absl::StartsWith(method, "QLoRA") ? FineTuneMethod::kQlora
                                                 : FineTuneMethod::kLora;
  if (r.method != FineTuneMethod::kFull) {
    r.lora_rank = static_cast<int>(Number(get("lora_rank")).value_or(8));
    r.target_modules =
        absl::StrSplit(get("target_modules"), ',', absl::SkipWhitespace());
  }
  r.sequence_length = static_cast<int>(Number(get("seq_len")).value_or(0));
  r.micro_batch_size = static_cast<int>(Number(get("micro_batch")).value_or(0));
  r.gradient_accumulation_steps =
      static_cast<int>(Number(get("gradient_accumulation")).value_or(1));
  const std::string precision = get("precision");
  if (r.method == FineTuneMethod::kQlora) {
    r.precision = Precision::kNf4;
    r.double_quantization = absl::StrContains(precision, "double") ||
                            absl::StrContains(precision, "compressed");
  } else {
    r.precision =
        absl::StartsWith(precision, "fp8") ? Precision::kFp8 : Precision::kBf16;
    // A full fine-tune under mixed precision keeps fp32 master weights.
    r.fp32_master_weights = r.method == FineTuneMethod::kFull &&
                            (absl::StrContains(precision, "master") ||
                             absl::StrContains(precision, "mixed") ||
                             absl::StrContains(precision, "fp32"));
  }
  const std::string optimizer = get("optimizer");
  r.optimizer = absl::StrContains(optimizer, "8-bit") ? Optimizer::kAdamW8bit
                                                      : Optimizer::kAdamW;
  const std::string ckpt = get("grad_checkpointing");
  r.activation_checkpointing =
      absl::StartsWith(ckpt, "yes") || absl::StartsWith(ckpt, "selective")
          ? ActivationCheckpointing::kOn
          : ActivationCheckpointing::kOff;
  r.attention = ParseAttentionImplementation(get("attention"))
                    .value_or(AttentionImplementation::kSdpa);
  r.framework = ParseTrainingFramework(get("framework"))
                    .value_or(TrainingFramework::kOther);
  r.packing = ParseSequencePacking(get("packing"))
                  .value_or(SequencePacking::kUnspecified);
  r.mean_tokens_per_sample =
      static_cast<int>(Number(get("mean_tokens_per_sample")).value_or(0));
  r.loss = ParseLossImplementation(get("loss"))
               .value_or(LossImplementation::kUnspecified);
  r.reported_peak = ParsePeakMemoryKind(get("reported_peak"))
                        .value_or(PeakMemoryKind::kDeviceUsed);
  r.gpu_count = static_cast<int>(Number(get("gpu_count")).value_or(1));
  r.parallelism =
      ParseParallelism(get("parallelism"))
          .value_or(r.gpu_count > 1 ? Parallelism::kDdp : Parallelism::kSingle);
  r.tensor_parallel_degree =
      static_cast<int>(Number(get("tensor_parallel")).value_or(0));
  r.pipeline_parallel_degree =
      static_cast<int>(Number(get("pipeline_parallel")).value_or(0));
  out.recipe = NormalizeRecipe(r);
  if (FieldViolations v = ValidateRecipe(out.recipe); !v.empty()) {
    return skip("recipe invalid: " + v.front().field + " " +
                v.front().description);
  }
  out.arch = *ResolveArchitecture(out.recipe);
  out.compiled = get("compile") == "yes";
  out.inter_node_gb_s_per_gpu =
      Number(get("inter_node_gb_s_per_gpu")).value_or(0);
  // --- The card. ---
  const std::string gpu = get("gpu");
  out.sku_id = get("gpu_sku");
  const GpuSku& sku = PublishedSku(out.sku_id);
  if (!sku.id.empty()) {
    out.capacity_gb = sku.memory_gb;
    out.usable_capacity_gb = sku.UsableMemoryGb();
  } else {
    out.capacity_gb = absl::StrContains(gpu, "24") ? 24 : 0;
    out.usable_capacity_gb = out.capacity_gb;
  }
  // --- Measurements. ---
  out.memory_skip_reason = get("skip_memory");
  out.step_time_skip_reason = get("skip_step_time");
  if (auto p = Number(get("peak_mem_gb"));
      p && out.memory_skip_reason.empty()) {
    out.peak_gb = *p;
  }
  if (auto t = Number(get("tokens_per_s"));
      t && out.step_time_skip_reason.empty()) {
    if (sku.id.empty()) {
      out.step_time_skip_reason = "card not in the catalog";
    } else {
      out.tokens_per_s_per_gpu = *t;
    }
  }
  if (!out.peak_gb && !out.tokens_per_s_per_gpu) {
    return skip(!out.memory_skip_reason.empty() ? out.memory_skip_reason
                                                : out.step_time_skip_reason);
  }
  return out;
}

inline std::vector<MappedRow> LoadExplicitRows(const char* path,
                                               bool hold_out) {
  std::vector<MappedRow> rows;
  int line = 0;
  for (const CsvRow& row : ReadCsv(path)) {
    rows.push_back(MapExplicitRow(row, ++line));
    rows.back().hold_out = hold_out;
  }
  return rows;
}

// What the constants are fitted to: the shared file's rows and the rows
// added to it.
inline std::vector<MappedRow> LoadCalibrationRows() {
  std::vector<MappedRow> rows = LoadPublishedRows();
  for (MappedRow& row : LoadExplicitRows(kAddedMeasurementsCsv, false)) {
    row.line += kAddedLineOffset;
    rows.push_back(std::move(row));
  }
  return rows;
}

// Publications no fit ever sees: the hold-out test of the shipped constants.
inline std::vector<MappedRow> LoadHoldOutRows() {
  std::vector<MappedRow> rows = LoadExplicitRows(kHoldOutMeasurementsCsv, true);
  for (MappedRow& row : rows) row.line += kHoldOutLineOffset;
  return rows;
}

// The fit's observations of a published row (core/fitting/model_fit.h), as the
// cross-validation test and the learning-curve benchmark make them.
inline MemoryObservation MemoryObservationOf(const MappedRow& row) {
  MemoryObservation o{row.recipe, row.arch};
  // A row whose memory the source does not let us compare says nothing,
  // not even that it fit.
  if (!row.memory_skip_reason.empty()) return o;
  if (row.peak_gb) {
    o.measured_gb = *row.peak_gb;
  } else if (row.ran) {
    o.ran_on_gb = row.usable_capacity_gb;
  } else {
    o.oom_on_gb = row.usable_capacity_gb;
  }
  return o;
}

inline std::optional<StepTimeObservation> StepTimeObservationOf(
    const MappedRow& row) {
  if (!row.tokens_per_s_per_gpu.has_value()) return std::nullopt;
  const GpuSku& sku = PublishedSku(row.sku_id);
  StepTimeObservation o;
  o.recipe = row.recipe;
  o.arch = row.arch;
  o.sku = sku;
  o.pool = PublishedRunPool(sku, row.recipe.gpu_count);
  if (row.inter_node_gb_s_per_gpu > 0) {
    o.pool.inter_node_gb_s_per_gpu = row.inter_node_gb_s_per_gpu;
  }
  o.measured_tokens_per_s_per_gpu = *row.tokens_per_s_per_gpu;
  return o;
}

}  // namespace placement::core::testing

#endif  // PLACEMENT_TESTS_CORE_PUBLISHED_MEASUREMENTS_H_
