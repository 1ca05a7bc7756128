// Hugging Face config.json -> ModelSpec (see hf_config.h). The mapping of each family follows
// its transformers modeling code (modeling_<model_type>.py): which matrices a layer has, which
// of them carry biases, which layers are MoE. docs/models.md tabulates it.
#include "scenario/hf_config.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/error.h"
#include "scenario/hf_config_internal.h"
#include "scenario/hf_reader.h"
#include "scenario/json_reader.h"
#include "scenario/model_loader.h"

namespace fleetsim {
namespace {

using namespace jsonr;
using namespace hf_internal;

enum class Family {
  kLlama,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen2Moe,
  kQwen3,
  kQwen3Moe,
  kDeepseek,
  kGptOss,
  kGpt2,
  kNemotron,
  kNemotronH,
  kQwen3Next,
  kKimiLinear,
  kDeepseekV4,
  kGlm4Moe,
  kGraniteMoeHybrid,
  kQwen35,
  kQwen35Moe,
  kGemma2,
  kGemma3,
  kPhi3,
  kLlama4,
  kBamba,
  kOlmo2,
  kOlmo3,
  kOlmoe
};

const std::map<std::string, Family> kFamilies = {{"llama", Family::kLlama},
                                                 {"mistral", Family::kMistral},
                                                 {"mixtral", Family::kMixtral},
                                                 {"qwen2", Family::kQwen2},
                                                 {"qwen2_moe", Family::kQwen2Moe},
                                                 {"qwen3", Family::kQwen3},
                                                 {"qwen3_moe", Family::kQwen3Moe},
                                                 {"deepseek_v2", Family::kDeepseek},
                                                 {"deepseek_v3", Family::kDeepseek},
                                                 {"kimi_k2", Family::kDeepseek},
                                                 {"gpt_oss", Family::kGptOss},
                                                 {"gpt2", Family::kGpt2},
                                                 {"nemotron", Family::kNemotron},
                                                 {"nemotron_h", Family::kNemotronH},
                                                 {"qwen3_next", Family::kQwen3Next},
                                                 {"deepseek_v32", Family::kDeepseek},
                                                 {"kimi_linear", Family::kKimiLinear},
                                                 {"deepseek_v4", Family::kDeepseekV4},
                                                 {"glm4_moe", Family::kGlm4Moe},
                                                 {"granitemoehybrid", Family::kGraniteMoeHybrid},
                                                 {"qwen3_5", Family::kQwen35},
                                                 {"qwen3_5_text", Family::kQwen35},
                                                 {"qwen3_5_moe", Family::kQwen35Moe},
                                                 {"qwen3_5_moe_text", Family::kQwen35Moe},
                                                 {"gemma2", Family::kGemma2},
                                                 {"gemma3", Family::kGemma3},
                                                 {"gemma3_text", Family::kGemma3},
                                                 {"phi3", Family::kPhi3},
                                                 {"llama4", Family::kLlama4},
                                                 {"llama4_text", Family::kLlama4},
                                                 {"bamba", Family::kBamba},
                                                 {"qwen3_vl", Family::kQwen3},
                                                 {"qwen3_vl_moe", Family::kQwen3Moe},
                                                 {"olmo2", Family::kOlmo2},
                                                 {"olmo3", Family::kOlmo3},
                                                 {"olmoe", Family::kOlmoe},
                                                 {"mistral3", Family::kMistral}};

// model_types that name a published architecture fleetsim recognises but does not model yet.
const std::map<std::string, std::string> kNotModelled = {
    {"mamba2", "pure Mamba-2 models (MambaConfig layout) are not mapped; nemotron_h is"},
    {"jamba",
     "Jamba (Mamba + attention + MoE layers): its Mamba-1 selective-scan layers are not "
     "modelled (Mamba-2 is, for nemotron_h)"}};

// Multimodal model_types whose language model is the text_config object: its config class and
// the model_type it must carry when it names one (null: the family's reader checks it).
struct NestedText {
  const char* cls;
  const char* model_type;
};
const std::map<std::string, NestedText> kNestedText = {
    {"gemma3", {"Gemma3TextConfig", nullptr}},
    {"llama4", {"Llama4TextConfig", nullptr}},
    {"qwen3_5", {"Qwen3_5TextConfig", nullptr}},
    {"qwen3_5_moe", {"Qwen3_5MoeTextConfig", nullptr}},
    {"qwen3_vl", {"Qwen3VLTextConfig", "qwen3_vl_text"}},
    {"qwen3_vl_moe", {"Qwen3VLMoeTextConfig", "qwen3_vl_moe_text"}},
    {"mistral3", {"MistralConfig", "mistral"}}};

std::string family_class(const std::string& model_type) {
  static const std::map<std::string, std::string> names = {
      {"llama", "LlamaConfig"},
      {"mistral", "MistralConfig"},
      {"mixtral", "MixtralConfig"},
      {"qwen2", "Qwen2Config"},
      {"qwen2_moe", "Qwen2MoeConfig"},
      {"qwen3", "Qwen3Config"},
      {"qwen3_moe", "Qwen3MoeConfig"},
      {"deepseek_v2", "DeepseekV2Config"},
      {"deepseek_v3", "DeepseekV3Config"},
      {"kimi_k2", "DeepseekV3Config (Kimi K2)"},
      {"gpt_oss", "GptOssConfig"},
      {"gpt2", "GPT2Config"},
      {"nemotron", "NemotronConfig"},
      {"nemotron_h", "NemotronHConfig"},
      {"qwen3_next", "Qwen3NextConfig"},
      {"deepseek_v32", "DeepseekV32Config"},
      {"kimi_linear", "KimiLinearConfig"},
      {"deepseek_v4", "DeepseekV4Config"},
      {"glm4_moe", "Glm4MoeConfig"},
      {"granitemoehybrid", "GraniteMoeHybridConfig"},
      {"qwen3_5", "Qwen3_5Config"},
      {"qwen3_5_text", "Qwen3_5TextConfig"},
      {"qwen3_5_moe", "Qwen3_5MoeConfig"},
      {"qwen3_5_moe_text", "Qwen3_5MoeTextConfig"},
      {"gemma2", "Gemma2Config"},
      {"gemma3", "Gemma3Config"},
      {"gemma3_text", "Gemma3TextConfig"},
      {"phi3", "Phi3Config"},
      {"llama4", "Llama4Config"},
      {"llama4_text", "Llama4TextConfig"},
      {"bamba", "BambaConfig"},
      {"qwen3_vl", "Qwen3VLConfig"},
      {"qwen3_vl_moe", "Qwen3VLMoeConfig"},
      {"olmo2", "Olmo2Config"},
      {"olmo3", "Olmo3Config"},
      {"olmoe", "OlmoeConfig"},
      {"mistral3", "Mistral3Config"}};
  return names.at(model_type);
}

std::string default_name(const std::string& file) {
  const std::filesystem::path p(file);
  std::string stem = p.stem().string();
  if (stem == "config" && p.has_parent_path()) {
    const std::string dir = p.parent_path().filename().string();
    if (!dir.empty() && dir != "." && dir != "..") stem = dir;
  }
  return stem.empty() ? "imported" : stem;
}

}  // namespace

// Windowed layers from the per-layer `layer_types` list: the shortest period p whose first w
// entries are "sliding_attention" and the rest "full_attention" (fleetsim's window_pattern /
// window_layers). Other patterns, and linear-attention layers, are input errors.
void hf_internal::read_layer_types(HfReader& r, ModelSpec& m, int window) {
  const std::vector<std::string> types = r.string_list("layer_types");
  const std::string ptr = "/layer_types";
  if (static_cast<int>(types.size()) != m.layers) {
    r.fail(ptr, "expected one entry per layer (" + std::to_string(m.layers) + "), got " +
                    std::to_string(types.size()));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "linear_attention")
      r.fail(ptr + "/" + std::to_string(i),
             "linear-attention (Gated DeltaNet) layers are only read for model_type qwen3_next");
    if (types[i] != "full_attention" && types[i] != "sliding_attention")
      r.fail(ptr + "/" + std::to_string(i),
             "expected 'full_attention' or 'sliding_attention', got '" + types[i] + "'");
  }
  std::vector<bool> windowed(types.size());
  for (size_t i = 0; i < types.size(); ++i)
    windowed[i] = types[i] == "sliding_attention";
  if (std::none_of(windowed.begin(), windowed.end(), [](bool w) { return w; })) return;
  if (window <= 0) r.fail("/sliding_window", "layer_types has sliding layers: expected a window");
  int p = 0, w = 0;
  if (!periodic_prefix(windowed, p, w))
    r.fail(ptr,
           "the sliding / full pattern is not periodic with the sliding layers first in "
           "each period; fleetsim cannot express it");
  m.attention.sliding_window = window;
  m.attention.window_kind = WindowKind::kSliding;
  m.attention.window_pattern = p;
  m.attention.window_layers = w;
  r.note("/attention/window_pattern", "periodic layer_types: " + std::to_string(w) +
                                          " sliding of every " + std::to_string(p) + " layers");
}

bool hf_internal::periodic_prefix(const std::vector<bool>& on, int& period, int& count) {
  const int n = static_cast<int>(on.size());
  for (int p = 1; p <= n; ++p) {
    int w = 0;
    while (w < p && on[w])
      ++w;
    bool ok = w > 0;
    for (int i = 0; ok && i < n; ++i)
      ok = on[i] == (i % p < w);
    if (!ok) continue;
    period = p;
    count = w;
    return true;
  }
  return false;
}

namespace {

// Sliding windows: mistral / mixtral `sliding_window` (every layer), qwen's
// `use_sliding_window`, and per-layer `layer_types`.
void read_window(HfReader& r, ModelSpec& m, Family f) {
  int window = 0;
  if (!r.present("sliding_window")) r.ignore("sliding_window");  // null: no window
  if (r.present("sliding_window"))
    window = static_cast<int>(
        r.integer("sliding_window", 1, int64_t{1} << 30, "/attention/sliding_window"));
  const bool qwen = f == Family::kQwen2 || f == Family::kQwen2Moe || f == Family::kQwen3 ||
                    f == Family::kQwen3Moe;
  if (qwen) {
    const bool use = r.boolean_or("use_sliding_window", false, "");
    if (use) {
      r.fail("/use_sliding_window",
             "Qwen's sliding window on the layers above max_window_layers is not modelled");
    }
    r.ignore("max_window_layers");
    window = 0;  // inactive without use_sliding_window (modeling_qwen*.py)
  }
  // DeepseekV32Config (transformers 5) writes one attention type per layer: every layer DSA
  // (its spellings across releases) with an indexer, else every layer full attention.
  if (f == Family::kDeepseek && r.present("layer_types")) {
    const std::vector<std::string> types = r.string_list("layer_types");
    if (static_cast<int>(types.size()) != m.layers)
      r.fail("/layer_types", "expected one entry per layer (" + std::to_string(m.layers) +
                                 "), got " + std::to_string(types.size()));
    const bool dsa = m.attention.sparse_topk > 0;
    for (size_t i = 0; i < types.size(); ++i) {
      const std::string& t = types[i];
      const bool ok = dsa ? t == "dynamic_sparse_attention" || t == "deepseek_sparse_attention" ||
                                t == "indexed_attention"
                          : t == "full_attention";
      if (!ok)
        r.fail("/layer_types/" + std::to_string(i),
               std::string("expected '") +
                   (dsa ? "dynamic_sparse_attention' (index_topk given: DSA"
                        : "full_attention' (MLA") +
                   " on every layer; per-layer mixing is not modelled), got '" + t + "'");
    }
    return;
  }
  if (f == Family::kOlmo3 && !r.has("sliding_window")) {
    window = 4096;  // Olmo3Config's default
    r.note("/attention/sliding_window", "sliding_window absent: 4096, the default of Olmo3Config");
  }
  if (r.present("layer_types")) {
    read_layer_types(r, m, window);
    return;
  }
  r.ignore("layer_types");  // null: the config class derives it from the window keys
  if (f == Family::kOlmo3) {
    // Olmo3Config: layer i full attention when (i + 1) % 4 == 0, the others sliding.
    std::vector<bool> sliding(static_cast<size_t>(m.layers));
    for (int i = 0; i < m.layers; ++i)
      sliding[static_cast<size_t>(i)] = (i + 1) % 4 != 0;
    int p = 0, w = 0;
    if (window > 0 && periodic_prefix(sliding, p, w)) {
      m.attention.sliding_window = window;
      m.attention.window_kind = WindowKind::kSliding;
      m.attention.window_pattern = p;
      m.attention.window_layers = w;
      r.note("/attention/window_pattern",
             "layer_types absent: Olmo3Config's, every 4th layer full, the others sliding");
    }
    return;
  }
  if (window > 0 && window < m.max_seq_len) {
    if (f != Family::kMistral && f != Family::kMixtral && f != Family::kPhi3)
      r.fail("/sliding_window",
             "a window on every layer is only read for mistral / mixtral / phi3");
    m.attention.sliding_window = window;
    m.attention.window_kind = WindowKind::kSliding;
    m.attention.window_pattern = 1;
    m.attention.window_layers = 1;
    r.note("/attention/window_pattern", "every layer windowed (sliding_window)");
  }
}

}  // namespace

namespace hf_internal {

void add_vision_encoder_note(ModelSpec& m, const std::string& encoder, const std::string& token,
                             const std::string& detail, double flops) {
  const double lm = 6 * static_cast<double>(active_params(m));
  char tail[256];
  std::snprintf(tail, sizeof tail,
                "%.1f GFLOP of encoder matrices (%sforward + backward, its attention not "
                "counted), %.0f %% of the language model's %.1f GFLOP (6 x active parameters)",
                flops / 1e9, detail.c_str(), 100 * flops / lm, lm / 1e9);
  m.unmodelled.push_back({"vision_encoder", "small",
                          encoder +
                              " not simulated: the step is the language model's on text "
                              "tokens; each " +
                              token + " would add about " + tail});
}

}  // namespace hf_internal

namespace {

// The FFN of a Llama-like family: MLP biases, then every layer MoE (mixtral, gpt_oss), Qwen's
// MoE layer rule, or a dense MLP of intermediate_size (DeepSeek and GLM read theirs with the
// MoE layer).
void read_llama_like_ffn(HfReader& r, ModelSpec& m, Family f) {
  m.linear_bias = r.boolean_or("mlp_bias", false, "/linear_bias");
  if (f == Family::kMixtral) {
    m.moe = read_moe_fields(r, "num_local_experts", "intermediate_size");
    m.ffn = 0;
    r.note("/ffn", "every layer is MoE: no dense FFN");
    m.unmodelled.push_back({"router_scoring", "none", "softmax top-k"});
  } else if (f == Family::kQwen2Moe || f == Family::kQwen3Moe) {
    read_qwen_moe(r, m, f == Family::kQwen2Moe);
    r.ignore("norm_topk_prob");
  } else if (f == Family::kOlmoe) {
    m.moe = read_moe_fields(r, "num_experts", "intermediate_size");
    m.ffn = 0;
    r.note("/ffn", "every layer is MoE (OlmoeSparseMoeBlock): no dense FFN");
    m.unmodelled.push_back(
        {"router_scoring", "none", "softmax top-k (norm_topk_prob: renormalised or not)"});
  } else if (f == Family::kGptOss) {
    m.moe = read_moe_fields(r, "num_local_experts", "intermediate_size");
    if (r.present("experts_per_token") &&
        r.integer("experts_per_token", 1, m.moe.experts, "") != m.moe.top_k)
      r.fail("/experts_per_token", "must equal num_experts_per_tok");
    m.ffn = 0;
    r.note("/ffn", "every layer is MoE: no dense FFN");
    m.linear_bias = true;
    r.note("/linear_bias", "GptOss: o_proj, expert and router biases");
    m.unmodelled.push_back({"attention_sinks", "small", "one learned sink logit per head"});
    m.unmodelled.push_back({"activation", "none", "clamped SwiGLU (swiglu_limit)"});
  } else if (f != Family::kDeepseek && f != Family::kGlm4Moe) {
    m.ffn = r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn");
  }
}

// OLMo 2 / 3 and OLMoE (modeling_olmo2.py, modeling_olmo3.py, modeling_olmoe.py): Llama's
// matrices with q_norm over all query heads and k_norm over all key heads; OLMo 2 / 3 place the
// two RMSNorms after the attention and the MLP (post-norm: the same two norm kernels); OLMoE
// may clamp q, k and v (clip_qkv).
void read_olmo(HfReader& r, ModelSpec& m, Family f) {
  m.attention.qk_norm = true;
  m.attention.qk_norm_all_heads = true;
  r.note("/attention/qk_norm_all_heads",
         "q_norm over num_attention_heads x head_dim, k_norm over num_key_value_heads x "
         "head_dim");
  m.unmodelled.push_back({"qk_norm_all_heads", "small",
                          "the q / k norms span all heads: under TP each needs the whole q and k "
                          "(transformers' TP plan gathers q, k and v for them), not simulated"});
  if (f != Family::kOlmoe)
    r.note("/norm",
           "RMSNorm, post-norm: post_attention_layernorm after the attention, "
           "post_feedforward_layernorm after the MLP");
  if (f == Family::kOlmoe && r.present("clip_qkv")) {
    r.number("clip_qkv", 0.0, 1e30);
    m.unmodelled.push_back({"clip_qkv", "none", "q, k and v clamped element-wise"});
  }
  r.ignore("clip_qkv");  // null: no clamp
}

// Families with the Llama decoder layer: RMSNorm pre-norm, gated MLP (gate, up, down).
void read_llama_like(HfReader& r, ModelSpec& m, Family f) {
  m.mlp = MlpKind::kGated;
  r.note("/mlp", "gated (gate_proj, up_proj, down_proj)");
  r.note("/norm", "RMSNorm, pre-norm: input_layernorm and post_attention_layernorm");
  // The activation is element-wise, but fleetsim's MLP is the family's (SwiGLU; relu2 for
  // nemotron): another one is not modelled, so it is refused rather than dropped.
  const char* act = f == Family::kNemotron ? "relu2" : "silu";
  if (r.present("hidden_act") && r.str("hidden_act") != act)
    r.fail("/hidden_act",
           std::string("expected '") + act + "' (" +
               (f == Family::kNemotron ? "NemotronMLP's squared ReLU" : "the gated MLP's SwiGLU") +
               "); another activation is not modelled");
  r.ignore("hidden_act");
  if (f == Family::kPhi3) {  // Phi-3 / Phi-4: Llama's matrices, fused
    r.note("/mlp", "Phi3MLP: gate_up_proj (fused gate and up), down_proj");
    r.ignore("original_max_position_embeddings");  // LongRoPE's switch length: no GEMM
  }
  if (f == Family::kNemotron) {
    m.mlp = MlpKind::kPlain;
    m.norm = NormKind::kLayer;
    r.note("/mlp", "NemotronMLP: up_proj, down_proj (relu2)");
    r.note("/norm", "NemotronLayerNorm1P: weight and bias");
  }
  if (f == Family::kDeepseek) {
    read_mla(r, m);
    read_deepseek_moe(r, m);
  } else {
    read_gqa(r, m);
  }
  if (f == Family::kGlm4Moe) read_glm4_moe(r, m);
  m.attention.qk_norm = f == Family::kQwen3 || f == Family::kQwen3Moe;
  if (m.attention.qk_norm) r.note("/attention/qk_norm", "Qwen3 q_norm / k_norm on every layer");
  if (f == Family::kGlm4Moe)
    m.attention.qk_norm = r.boolean_or("use_qk_norm", false, "/attention/qk_norm");
  if (f == Family::kOlmo2 || f == Family::kOlmo3 || f == Family::kOlmoe) read_olmo(r, m, f);
  const bool qwen2 = f == Family::kQwen2 || f == Family::kQwen2Moe;
  if (f != Family::kDeepseek) {
    bool bias = r.boolean_or("attention_bias", qwen2, "/attention/qkv_bias");
    // Newer Qwen2MoeConfig: qkv_bias (q, k, v biases; o_proj has none), default true.
    if (qwen2 && r.present("qkv_bias")) {
      const bool qkv = r.boolean_or("qkv_bias", true, "/attention/qkv_bias");
      if (r.present("attention_bias") && qkv != bias)
        r.fail("/qkv_bias", "disagrees with attention_bias");
      bias = qkv;
    }
    m.attention.qkv_bias = bias;
    if (qwen2) r.note("/attention/qkv_bias", "Qwen2Attention: q, k, v biases");
    if (f == Family::kGlm4Moe && bias)
      r.note("/attention/qkv_bias", "Glm4MoeAttention: q, k, v biases (o_proj has none)");
    if (bias && !qwen2 && f != Family::kGptOss && f != Family::kGlm4Moe)
      m.unmodelled.push_back({"o_proj_bias", "small", "attention_bias: hidden values per layer"});
  }
  read_llama_like_ffn(r, m, f);
  read_window(r, m, f);
}

// A multimodal config.json's own tie_word_embeddings, beside its text_config's: the text
// config's decides; the outer one must agree with it, or stands for it when the text config has
// none (`text_ties`).
void read_outer_tie(HfReader& r, ModelSpec& m, bool text_ties) {
  if (!r.present("tie_word_embeddings")) return;
  const bool tied = r.boolean_or("tie_word_embeddings", false, "");
  if (!text_ties) {
    m.tied_embeddings = tied;
    r.note("/tied_embeddings", std::string("config.json:/tie_word_embeddings = ") +
                                   (tied ? "true" : "false") + " (the text config has none)");
  } else if (tied != m.tied_embeddings) {
    r.fail("/tie_word_embeddings", "disagrees with /text_config/tie_word_embeddings");
  }
}

// The decoder's fields from `b` (the file, or Qwen3.5's text_config): the sizes every family has,
// then the family's reader.
void read_decoder(HfReader& b, ModelSpec& m, Family f, const std::string& model_type) {
  if (f == Family::kGpt2) {
    read_gpt2(b, m);
  } else if (f == Family::kGemma2 || f == Family::kGemma3) {
    read_gemma(b, m, f == Family::kGemma3);
  } else if (f == Family::kLlama4) {
    read_llama4(b, m);
  } else {
    // Nemotron 3 checkpoints may leave num_hidden_layers null and list layers_block_type.
    const bool layers_from_blocks = f == Family::kNemotronH && !b.present("num_hidden_layers") &&
                                    b.present("layers_block_type");
    if (layers_from_blocks) b.ignore("num_hidden_layers");
    m.layers = layers_from_blocks
                   ? 0
                   : static_cast<int>(b.integer("num_hidden_layers", 1, 100000, "/layers"));
    m.hidden = b.integer("hidden_size", 1, int64_t{1} << 24, "/hidden");
    m.vocab = b.integer("vocab_size", 1, int64_t{1} << 24, "/vocab");
    m.max_seq_len =
        static_cast<int>(b.integer("max_position_embeddings", 1, int64_t{1} << 30, "/max_seq_len"));
    m.tied_embeddings = b.boolean_or("tie_word_embeddings", false, "/tied_embeddings");
    if (!b.present("tie_word_embeddings"))
      b.note("/tied_embeddings",
             "tie_word_embeddings absent: false, the default of " + family_class(model_type));
    if (f == Family::kNemotronH) {
      read_nemotron_h(b, m);
    } else if (f == Family::kQwen3Next) {
      read_qwen3_next(b, m);
    } else if (f == Family::kKimiLinear) {
      read_kimi_linear(b, m);
    } else if (f == Family::kDeepseekV4) {
      read_deepseek_v4(b, m);
    } else if (f == Family::kQwen35 || f == Family::kQwen35Moe) {
      read_qwen3_5(b, m, f == Family::kQwen35Moe);
    } else if (f == Family::kGraniteMoeHybrid) {
      read_granite_moe_hybrid(b, m);
    } else if (f == Family::kBamba) {
      read_bamba(b, m);
    } else {
      read_llama_like(b, m, f);
    }
  }
}

}  // namespace

std::vector<std::string> hf_model_types() {
  std::vector<std::string> out;
  for (const auto& [k, v] : kFamilies)
    out.push_back(k);
  return out;
}

bool is_hf_config(const std::string& json_text, const std::string& file) {
  const json j = parse_strict(json_text, file);
  return j.is_object() && j.contains("model_type");
}

HfImport import_hf_config(const std::string& json_text, const std::string& file,
                          const std::string& name) {
  const json j = parse_strict(json_text, file);
  HfReader r(j, file);
  HfImport imp;
  imp.model_type = r.model_type();
  if (const auto it = kNotModelled.find(imp.model_type); it != kNotModelled.end())
    r.fail("/model_type", "'" + imp.model_type + "': " + it->second);
  const auto fam = kFamilies.find(imp.model_type);
  if (fam == kFamilies.end()) {
    std::string list;
    for (const auto& t : hf_model_types())
      list += (list.empty() ? "" : ", ") + t;
    r.fail("/model_type", "unknown model_type '" + imp.model_type + "' (supported: " + list + ")");
  }
  const Family f = fam->second;
  ModelSpec& m = imp.model;
  m.name = name.empty() ? default_name(file) : name;
  if (m.name.find('/') != std::string::npos)
    throw InputError("--name", "", "expected a model id without '/', got '" + m.name + "'");
  m.display_name = r.present("_name_or_path") ? r.str("_name_or_path") : m.name;
  m.file = file;
  m.sources = {file + " (Hugging Face config.json, model_type " + imp.model_type + ")"};
  m.source = m.sources.front();
  // Multimodal checkpoints keep the language model's keys in text_config (of the class
  // kNestedText names); their text-only classes, at the top level. Qwen3.5's class reads either.
  const bool qwen3_5 = f == Family::kQwen35 || f == Family::kQwen35Moe;
  const bool qwen3_vl = imp.model_type == "qwen3_vl" || imp.model_type == "qwen3_vl_moe";
  const auto nested = kNestedText.find(imp.model_type);
  std::optional<HfReader> text;
  if (nested != kNestedText.end() && (!qwen3_5 || r.present("text_config")))
    text.emplace(r.child("text_config"));
  HfReader& b = text ? *text : r;
  read_decoder(b, m, f, imp.model_type);
  if (text) {
    const char* want = nested->second.model_type;
    if (want != nullptr && b.present("model_type") && b.str("model_type") != want)
      b.fail("/model_type", std::string("expected '") + want + "' (the text config of " +
                                imp.model_type + " that fleetsim maps)");
    const bool text_ties = b.present("tie_word_embeddings");
    b.finish(nested->second.cls);
    r.adopt(b);
    read_outer_tie(r, m, text_ties);
  }
  if (qwen3_5 || qwen3_vl) read_qwen_vision_wrapper(r, m);
  if (imp.model_type == "mistral3") read_mistral3_wrapper(r, m);
  if (imp.model_type == "gemma3") read_gemma3_wrapper(r, m);
  if (imp.model_type == "llama4") read_llama4_wrapper(r, m);
  if (imp.model_type == "deepseek_v32" && m.attention.sparse_topk == 0)
    r.fail("/index_topk",
           "missing: DeepseekV32Config needs index_topk, index_n_heads and "
           "index_head_dim (DeepSeek sparse attention)");
  if (m.moe.experts > 0) m.experts_field = file + ":" + r.origin_of("/moe/experts");
  r.finish(family_class(imp.model_type));
  imp.origin = r.origin();
  imp.ignored = r.ignored();
  // The model loader's cross-checks (some layer MoE, MTP shape, ...) on what was mapped; the
  // result is exactly what the written zoo file loads to.
  ModelSpec checked;
  try {
    checked = parse_model_text(zoo_model_json(imp), file, "");
  } catch (const InputError& e) {
    throw InputError(
        file, "",
        "the mapped model is invalid at fleetsim field " + e.pointer() + ": " + e.message());
  }
  checked.file = file;
  checked.experts_field = m.experts_field;
  imp.model = std::move(checked);
  return imp;
}

}  // namespace fleetsim

namespace fleetsim {

HfImport import_hf_config_file(const std::string& path, const std::string& name) {
  return import_hf_config(jsonr::read_file(path), path, name);
}

}  // namespace fleetsim
