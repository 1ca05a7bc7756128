// Hugging Face config.json -> ModelSpec for the families with Llama's decoder layer (see
// hf_config.h): GQA or MLA attention, the gated MLP or an MoE layer, sliding windows; llama,
// mistral, mixtral, qwen2 / qwen3 (and their MoE and VL text models), deepseek, kimi_k2, gpt_oss,
// nemotron, glm4_moe, phi3, olmo2 / olmo3 / olmoe.
#include <algorithm>
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim {

using namespace hf_internal;

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
  // SmolLM3Config keeps Qwen2's window keys (use_sliding_window, max_window_layers).
  const bool qwen = f == Family::kQwen2 || f == Family::kQwen2Moe || f == Family::kQwen3 ||
                    f == Family::kQwen3Moe || f == Family::kSmolLM3;
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
  } else if (f == Family::kErnie45Moe) {
    read_ernie_moe(r, m);
  } else if (f == Family::kMiniMaxM2) {
    m.moe = read_moe_fields(r, "num_local_experts", "intermediate_size");
    // transformers 5's MiniMaxM2Config maps num_experts to num_local_experts (attribute_map).
    if (r.present("num_experts") && r.integer("num_experts", 1, 1 << 16, "") != m.moe.experts)
      r.fail("/num_experts", "disagrees with num_local_experts");
    m.ffn = 0;
    r.note("/ffn", "every layer is MoE (MiniMaxM2SparseMoeBlock): no dense FFN");
    if (r.integer_or("shared_intermediate_size", 0, 0, int64_t{1} << 24, "") > 0)
      r.fail("/shared_intermediate_size",
             "a shared expert is not part of MiniMaxM2's modeling (only 0 is read)");
    m.unmodelled.push_back({"router_scoring", "none",
                            "sigmoid scores with a per-expert correction bias (use_routing_bias): "
                            "routing statistics are modelled in moe/"});
    if (r.boolean_or("use_routing_bias", true, ""))
      m.unmodelled.push_back({"router_expert_bias", "none",
                              "num_local_experts selection-bias values per layer "
                              "(e_score_correction_bias), not trained by gradient, not counted"});
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

// MiniMax-M2 (modeling_minimax_m2.py): q_norm / k_norm over all heads (qk_norm_type
// "per_layer"; "per_head": Qwen3's), full attention on every layer (attn_type_list 1; MiniMax-01's
// lightning-attention layers, 0, are refused), RoPE on rotary_dim of each head; the MTP modules of
// MiniMax's own training (use_mtp) are in neither the published checkpoint nor transformers' model.
void read_minimax_m2(HfReader& r, ModelSpec& m) {
  AttentionSpec& a = m.attention;
  a.qk_norm = r.boolean_or("use_qk_norm", true, "/attention/qk_norm");
  const std::string type = r.present("qk_norm_type") ? r.str("qk_norm_type") : "per_layer";
  if (type != "per_layer" && type != "per_head")
    r.fail("/qk_norm_type", "expected 'per_layer' or 'per_head', got '" + type + "'");
  a.qk_norm_all_heads = a.qk_norm && type == "per_layer";
  if (a.qk_norm_all_heads) {
    r.note("/attention/qk_norm_all_heads",
           "qk_norm_type per_layer: q_norm over num_attention_heads x head_dim, k_norm over "
           "num_key_value_heads x head_dim");
    m.unmodelled.push_back(
        {"qk_norm_all_heads", "small",
         "the q / k norms span all heads: under TP each needs the whole q and "
         "k (transformers' TP plan gathers q, k and v for them), not simulated"});
  }
  if (r.present("attn_type_list")) {
    const std::vector<int64_t> types = r.int_list("attn_type_list", 0, 1);
    if (static_cast<int>(types.size()) != m.layers)
      r.fail("/attn_type_list", "expected one entry per layer (" + std::to_string(m.layers) +
                                    "), got " + std::to_string(types.size()));
    for (size_t i = 0; i < types.size(); ++i)
      if (types[i] != 1)
        r.fail("/attn_type_list/" + std::to_string(i),
               "0 is a lightning (linear) attention layer (MiniMax-01), not modelled; 1 (full "
               "attention) is");
  }
  if (r.boolean_or("use_mtp", false, "")) {
    const int64_t modules = r.integer_or("num_mtp_modules", 1, 1, 64, "");
    const int64_t layers = r.integer_or("mtp_transformer_layers", 1, 1, 64, "");
    m.unmodelled.push_back(
        {"mtp_modules", "small",
         "use_mtp: " + std::to_string(modules) + " MTP modules of " + std::to_string(layers) +
             " layer(s) in MiniMax's own training; the published checkpoint and transformers' "
             "MiniMaxM2 model have none, so they are neither counted nor stepped"});
  }
  for (const char* k :
       {"num_mtp_modules", "mtp_transformer_layers", "rotary_dim", "shared_intermediate_size"})
    r.ignore(k);
}

// ERNIE 4.5's keys besides Llama's and its MoE layer's: use_bias (every projection's bias) must
// be false and use_rmsnorm true; its MTP modules (num_nextn_predict_layers) are not in
// transformers' Ernie4_5_Moe model, so they are listed, not counted or stepped.
void read_ernie_extras(HfReader& r, ModelSpec& m) {
  if (r.boolean_or("use_bias", false, ""))
    r.fail("/use_bias", "biases on every projection are not modelled for ernie4_5_moe");
  if (!r.boolean_or("use_rmsnorm", true, ""))
    r.fail("/use_rmsnorm", "LayerNorm in place of RMSNorm is not modelled for ernie4_5_moe");
  const int64_t mtp = r.integer_or("num_nextn_predict_layers", 0, 0, 16, "");
  if (mtp > 0)
    m.unmodelled.push_back({"mtp_modules", "small",
                            "num_nextn_predict_layers: " + std::to_string(mtp) +
                                " MTP module(s) of ERNIE's own training, not in transformers' "
                                "Ernie4_5_Moe model: neither counted nor stepped"});
  r.ignore("multi_token_pred_lambda");
}

}  // namespace

// Families with the Llama decoder layer: RMSNorm pre-norm, gated MLP (gate, up, down).
void hf_internal::read_llama_like(HfReader& r, ModelSpec& m, Family f) {
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
  if (f == Family::kMiniMaxM2) read_minimax_m2(r, m);
  if (f == Family::kSmolLM3) {  // NoPE layers: RoPE skipped, no GEMM differs
    for (const char* k : {"no_rope_layers", "no_rope_layer_interval"})
      r.ignore(k);
    m.unmodelled.push_back({"nope_layers", "none",
                            "no_rope_layers: every 4th layer skips RoPE (position encoding costs "
                            "no GEMM)"});
  }
  if (f == Family::kSeedOss) r.ignore("residual_dropout");
  if (f == Family::kErnie45Moe) read_ernie_extras(r, m);
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
    // Seed-OSS: attention_bias is q / k / v's; o_proj's is attention_out_bias.
    const bool seed = f == Family::kSeedOss;
    if (seed && bias) r.note("/attention/qkv_bias", "SeedOssAttention: q, k, v biases");
    if (bias && !qwen2 && !seed && f != Family::kGptOss && f != Family::kGlm4Moe)
      m.unmodelled.push_back({"o_proj_bias", "small", "attention_bias: hidden values per layer"});
    if (seed && r.boolean_or("attention_out_bias", false, ""))
      m.unmodelled.push_back(
          {"o_proj_bias", "small", "attention_out_bias: hidden values per layer"});
  }
  read_llama_like_ffn(r, m, f);
  read_window(r, m, f);
}

}  // namespace fleetsim
