// Hugging Face config.json -> ModelSpec for the hybrid families (see hf_config.h): Nemotron-H /
// Nemotron 3 (nemotron_h), Kimi Linear (kimi_linear), Granite 4.0-H (granitemoehybrid); Qwen3-Next
// is in hf_config_qwen_next.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "scenario/hf_config_internal.h"
#include "scenario/hf_reader.h"

namespace fleetsim::hf_internal {
namespace {

// Nemotron-H / Nemotron 3 (transformers modeling_nemotron_h.py): one block per character of
// hybrid_override_pattern (M Mamba-2, * attention, - MLP, E MoE), each with one RMSNorm; the
// mixer's width is mamba_num_heads x mamba_head_dim (not expand x hidden); squared-ReLU MLPs;
// attention without position encoding.
// A value spelled two ways (the checkpoints' NemotronHConfig: n_groups, conv_kernel, chunk_size,
// use_conv_bias, expand; vLLM's copy: mamba_n_groups, mamba_d_conv, ...): whichever is present;
// both must then agree.
int64_t either(HfReader& r, const char* a, const char* b, int64_t lo, int64_t hi,
               const std::string& field) {
  if (r.present(a) && r.present(b) && r.integer(a, lo, hi, "") != r.integer(b, lo, hi, ""))
    r.fail(std::string("/") + b, std::string("disagrees with ") + a);
  return r.present(b) ? r.integer(b, lo, hi, field) : r.integer(a, lo, hi, field);
}

// The blocks of a Nemotron-H / Nemotron 3 config: hybrid_override_pattern, or the per-block
// list layers_block_type ("mamba", "attention", "mlp", "moe"; the Nemotron 3 checkpoints, whose
// num_hidden_layers may be null); both present must agree. Sets m.layers when it was not given.
void nemotron_blocks(HfReader& r, ModelSpec& m) {
  std::string pattern;
  if (r.present("layers_block_type")) {
    const std::vector<std::string> types = r.string_list("layers_block_type");
    // transformers' newer names (remap_legacy_layer_types): linear_attention for mamba,
    // full_attention for attention.
    static const char* const kNames[][2] = {
        {"mamba", "M"}, {"attention", "*"},        {"mlp", "-"},
        {"moe", "E"},   {"linear_attention", "M"}, {"full_attention", "*"}};
    for (size_t i = 0; i < types.size(); ++i) {
      const auto* k = std::find_if(std::begin(kNames), std::end(kNames),
                                   [&](const auto& n) { return types[i] == n[0]; });
      if (k == std::end(kNames))
        r.fail("/layers_block_type/" + std::to_string(i),
               "expected 'mamba', 'attention', 'mlp' or 'moe', got '" + types[i] + "'");
      pattern += (*k)[1];
    }
    if (r.present("hybrid_override_pattern") && r.str("hybrid_override_pattern") != pattern)
      r.fail("/hybrid_override_pattern", "disagrees with layers_block_type");
  } else {
    pattern = r.str("hybrid_override_pattern");
  }
  const char* key =
      r.present("layers_block_type") ? "/layers_block_type" : "/hybrid_override_pattern";
  size_t bad = 0;
  if (!parse_block_pattern(pattern, &m.blocks, &bad))
    r.fail(key, pattern.empty()
                    ? std::string("expected a non-empty pattern of M * - E")
                    : "character " + std::to_string(bad) + " '" + pattern.substr(bad, 1) +
                          "' is not a block kind (M Mamba-2, * attention, - MLP, E MoE)");
  if (m.layers == 0) {
    m.layers = static_cast<int>(m.blocks.size());
    r.note("/layers", std::string("num_hidden_layers null: the length of config.json:") + key);
  }
  if (static_cast<int>(m.blocks.size()) != m.layers)
    r.fail(key, "has " + std::to_string(m.blocks.size()) + " blocks; expected num_hidden_layers (" +
                    std::to_string(m.layers) + ")");
  r.note("/blocks", std::string("config.json:") + key);
}

// Nemotron 3's MTP modules (num_nextn_predict_layers, each the block pattern
// mtp_hybrid_override_pattern / mtp_layers_block_type): fleetsim's MTP module of a hybrid
// model is one attention block and one FFN block ("*E" in an MoE model, "*-" otherwise).
void nemotron_mtp(HfReader& r, ModelSpec& m, bool moe) {
  m.mtp_layers = static_cast<int>(r.present("num_nextn_predict_layers")
                                      ? r.integer("num_nextn_predict_layers", 0, 16, "/mtp_layers")
                                      : 0);
  const std::string want = moe ? "*E" : "*-";
  if (r.present("mtp_hybrid_override_pattern") && r.str("mtp_hybrid_override_pattern") != want)
    r.fail("/mtp_hybrid_override_pattern",
           "expected '" + want + "' (one attention and one " + (moe ? "MoE" : "MLP") +
               " block per MTP module, the only MTP shape modelled)");
  if (r.present("mtp_layers_block_type")) {
    const std::vector<std::string> t = r.string_list("mtp_layers_block_type");
    if (t != std::vector<std::string>{"attention", moe ? "moe" : "mlp"} &&
        t != std::vector<std::string>{"full_attention", moe ? "moe" : "mlp"})
      r.fail("/mtp_layers_block_type",
             std::string("expected [\"attention\", \"") + (moe ? "moe" : "mlp") + "\"]");
  }
}

}  // namespace

void read_nemotron_h(HfReader& r, ModelSpec& m) {
  nemotron_blocks(r, m);
  auto has = [&](BlockKind k) { return std::count(m.blocks.begin(), m.blocks.end(), k) > 0; };
  m.mlp = MlpKind::kPlain;
  if (r.present("mlp_hidden_act") && r.str("mlp_hidden_act") != "relu2")
    r.fail("/mlp_hidden_act", "expected 'relu2' (NemotronHMLP: up_proj, down_proj)");
  r.note("/mlp", "NemotronHMLP: up_proj, down_proj (relu2)");
  m.norms_per_layer = 2;
  r.note("/norm", "RMSNorm: one per block (norms_per_layer applies to MTP modules only)");
  read_gqa(r, m);
  for (const char* k : {"attention_bias", "mlp_bias", "use_bias", "mamba_proj_bias"})
    if (r.boolean_or(k, false, "")) r.fail(std::string("/") + k, "biases are not modelled here");
  for (const char* k : {"use_conv_bias", "mamba_conv_bias"})
    if (!r.boolean_or(k, true, ""))
      r.fail(std::string("/") + k, "a conv1d without bias is not modelled (fleetsim counts it)");
  m.ffn = has(BlockKind::kMlp) ? r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn") : 0;
  if (!has(BlockKind::kMlp)) r.ignore("intermediate_size");
  MambaSpec& s = m.mamba;
  s.heads = static_cast<int>(r.integer("mamba_num_heads", 1, 65536, "/mamba/heads"));
  s.head_dim = static_cast<int>(r.integer("mamba_head_dim", 1, 4096, "/mamba/head_dim"));
  s.state = static_cast<int>(r.integer("ssm_state_size", 1, 4096, "/mamba/state"));
  s.groups = static_cast<int>(either(r, "mamba_n_groups", "n_groups", 1, s.heads, "/mamba/groups"));
  s.conv_kernel =
      static_cast<int>(either(r, "mamba_d_conv", "conv_kernel", 1, 64, "/mamba/conv_kernel"));
  s.chunk = static_cast<int>(either(r, "mamba_chunk_size", "chunk_size", 1, 65536, "/mamba/chunk"));
  if (s.heads % s.groups != 0) r.fail("/n_groups", "must divide mamba_num_heads");
  for (const char* k : {"expand", "mamba_expand"}) {
    if (!r.present(k)) continue;
    r.ignore(k);
    r.note("/mamba/heads",
           "d_inner = mamba_num_heads x mamba_head_dim (modeling_nemotron_h.py); "
           "expand is not used");
  }
  if (has(BlockKind::kMoe)) {
    m.moe = read_moe_fields(r, "n_routed_experts", "moe_intermediate_size");
    m.moe.shared_expert_ffn = r.present("moe_shared_expert_intermediate_size")
                                  ? r.integer("moe_shared_expert_intermediate_size", 0,
                                              int64_t{1} << 24, "/moe/shared_expert_ffn")
                                  : 0;
    m.moe.shared_experts = m.moe.shared_expert_ffn > 0 ? 1 : 0;
    r.note("/moe/shared_experts",
           "one shared MLP of moe_shared_expert_intermediate_size (the total shared width)");
    if (r.present("moe_latent_size")) {
      m.moe.latent = r.integer("moe_latent_size", 1, int64_t{1} << 24, "/moe/latent");
      r.note("/moe/latent",
             "LatentMoE (NemotronHMoE fc1_latent_proj / fc2_latent_proj): routed experts and the "
             "EP all-to-all at moe_latent_size");
    }
    r.ignore("n_shared_experts");
    m.unmodelled.push_back({"router_scoring", "none",
                            "sigmoid routing with expert bias (n_group, topk_group, "
                            "routed_scaling_factor): routing statistics are modelled in moe/"});
  }
  nemotron_mtp(r, m, has(BlockKind::kMoe));
  if (r.present("sliding_window")) r.fail("/sliding_window", "expected null (no windowed layers)");
  r.ignore("sliding_window");
  m.unmodelled.push_back({"position_encoding", "none", "no position encoding (NoPE)"});
  for (const char* k :
       {"mamba_hidden_act", "time_step_min", "time_step_max", "time_step_floor", "time_step_limit",
        "mamba_dt_min", "mamba_dt_max", "mamba_dt_limit", "mamba_dt_init_floor",
        "rescale_prenorm_residual", "residual_in_fp32", "num_logits_to_keep", "use_mamba_kernels",
        // inference: the dtype of the SSM state cache
        "mamba_ssm_cache_dtype",
        // scheduling switch (shared expert overlapped with the routed path): same parameters
        // and FLOPs; fleetsim's own overlap model decides the timing
        "moe_shared_expert_overlap"})
    r.ignore(k);
}

// Kimi Linear (model_type kimi_linear; the layout NVIDIA NeMo Automodel's kimi_linear model and
// vLLM read): each decoder layer is a token mixer -- Kimi Delta Attention for the 1-based layer
// numbers in linear_attn_config.kda_layers, MLA (q_lora_rank null, NoPE: mla_use_nope) for
// those in full_attn_layers -- then a dense SwiGLU MLP (the first first_k_dense_replace layers)
// or an MoE of num_experts (top num_experts_per_token) with num_shared_experts shared experts of
// moe_intermediate_size; written as two blocks per layer (G or *, then - or E). The KDA chunk
// length is not in config.json: FLA's chunk_kda runs chunks of 64 (Kimi Linear report Sec. 6.3).
void read_kimi_linear(HfReader& r, ModelSpec& m) {
  const int layers = m.layers;
  read_mla(r, m);
  r.boolean_or("mla_use_nope", false, "");
  m.unmodelled.push_back({"position_encoding", "none",
                          "mla_use_nope: no RoPE in the MLA layers (the rope dims are still "
                          "projected); KDA layers have none"});
  HfReader la = r.child("linear_attn_config");
  std::vector<int> kind(static_cast<size_t>(layers), 0);  // 1 KDA, 2 MLA
  for (const auto& [key, k] :
       {std::pair<const char*, int>{"kda_layers", 1}, {"full_attn_layers", 2}}) {
    for (int64_t n : la.int_list(key, 1, layers)) {
      int& slot = kind[static_cast<size_t>(n - 1)];
      if (slot != 0)
        la.fail(std::string("/") + key, "layer " + std::to_string(n) + " is listed twice");
      slot = k;
    }
  }
  for (int i = 0; i < layers; ++i)
    if (kind[static_cast<size_t>(i)] == 0)
      la.fail("/kda_layers", "layer " + std::to_string(i + 1) +
                                 " (1-based) is in neither kda_layers nor full_attn_layers");
  GdnSpec& g = m.gdn;
  g.qk_heads = g.v_heads = static_cast<int>(la.integer("num_heads", 1, 65536, "/gdn/qk_heads"));
  g.qk_head_dim = g.v_head_dim =
      static_cast<int>(la.integer("head_dim", 1, 4096, "/gdn/qk_head_dim"));
  g.conv_kernel = static_cast<int>(la.integer("short_conv_kernel_size", 1, 64, "/gdn/conv_kernel"));
  g.chunk = 64;
  g.kda = true;
  la.finish("KimiLinearConfig linear_attn_config");
  r.adopt(la);
  r.note("/gdn/kda",
         "Kimi Delta Attention (linear_attn_config): one head count and dim for q, "
         "k, v; low-rank f / g projections");
  r.note("/gdn/chunk", "not in config.json: FLA chunk_kda's chunk of 64 tokens");
  m.mlp = MlpKind::kGated;
  if (r.present("hidden_act") && r.str("hidden_act") != "silu")
    r.fail("/hidden_act", "expected 'silu' (SwiGLU experts and MLP)");
  MoeSpec& s = m.moe;
  s.experts = static_cast<int>(r.integer("num_experts", 1, 1 << 16, "/moe/experts"));
  s.top_k = static_cast<int>(r.integer("num_experts_per_token", 1, s.experts, "/moe/top_k"));
  s.expert_ffn = r.integer("moe_intermediate_size", 1, int64_t{1} << 24, "/moe/expert_ffn");
  s.shared_experts =
      static_cast<int>(r.present("num_shared_experts")
                           ? r.integer("num_shared_experts", 0, 64, "/moe/shared_experts")
                           : 0);
  s.shared_expert_ffn = s.shared_experts > 0 ? s.expert_ffn : 0;
  r.note("/moe/shared_expert_ffn", "each shared expert is moe_intermediate_size wide");
  const int first_dense = static_cast<int>(
      r.present("first_k_dense_replace") ? r.integer("first_k_dense_replace", 0, layers - 1, "")
                                         : 0);
  if (r.present("moe_layer_freq") && r.integer("moe_layer_freq", 1, layers, "") != 1)
    r.fail("/moe_layer_freq", "only 1 (every layer after the dense ones is MoE) is modelled");
  m.ffn = first_dense > 0 ? r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn") : 0;
  if (first_dense == 0) r.ignore("intermediate_size");
  m.blocks.clear();
  for (int i = 0; i < layers; ++i) {
    m.blocks.push_back(kind[static_cast<size_t>(i)] == 1 ? BlockKind::kGdn : BlockKind::kAttention);
    m.blocks.push_back(i < first_dense ? BlockKind::kMlp : BlockKind::kMoe);
  }
  m.layers = 2 * layers;
  r.note("/layers", "2 x num_hidden_layers: each layer is a mixer block and an FFN block");
  r.note("/blocks",
         "config.json:/linear_attn_config (kda_layers, full_attn_layers), "
         "first_k_dense_replace");
  m.mtp_layers = static_cast<int>(r.present("num_nextn_predict_layers")
                                      ? r.integer("num_nextn_predict_layers", 0, 16, "/mtp_layers")
                                      : 0);
  for (const char* k : {"moe_renormalize", "moe_router_activation_func", "routed_scaling_factor",
                        "num_expert_group", "topk_group", "use_grouped_topk", "topk_method"})
    r.ignore(k);
  m.unmodelled.push_back({"router_scoring", "none",
                          "sigmoid routing, renormalised, routed_scaling_factor: routing "
                          "statistics are modelled in moe/"});
}

}  // namespace fleetsim::hf_internal

namespace fleetsim::hf_internal {

namespace {

// Granite's per-layer mixers: layer_types (or its alias layers_block_type; both present must
// agree), "mamba" or "attention"; absent, every layer Mamba-2 (GraniteMoeHybridConfig's
// layers_block_type). `key` is the pointer errors and origins name.
std::vector<std::string> granite_layer_types(HfReader& r, int layers, std::string* key) {
  std::vector<std::string> types;
  for (const char* k : {"layer_types", "layers_block_type"}) {
    if (!r.present(k)) {
      r.ignore(k);  // null: every layer Mamba-2, as absent
      continue;
    }
    std::vector<std::string> t = r.string_list(k);
    // transformers 5's names (remap_legacy_layer_types): linear_attention, full_attention.
    for (std::string& x : t) {
      if (x == "linear_attention") x = "mamba";
      if (x == "full_attention") x = "attention";
    }
    if (!types.empty() && t != types) r.fail(std::string("/") + k, "disagrees with layer_types");
    types = t;
  }
  *key = r.present("layer_types") ? "/layer_types" : "/layers_block_type";
  if (types.empty()) {
    types.assign(static_cast<size_t>(layers), "mamba");
    *key = "layer_types absent: every layer Mamba-2 (GraniteMoeHybridConfig)";
    return types;
  }
  if (static_cast<int>(types.size()) != layers)
    r.fail(*key, "expected one entry per layer (" + std::to_string(layers) + "), got " +
                     std::to_string(types.size()));
  for (size_t i = 0; i < types.size(); ++i)
    if (types[i] != "mamba" && types[i] != "attention")
      r.fail(*key + "/" + std::to_string(i),
             "expected 'mamba' or 'attention', got '" + types[i] + "'");
  *key = "config.json:" + *key;
  return types;
}

// Granite's Mamba-2 mixer (transformers BambaMixer): mamba_n_heads of mamba_d_head ("auto":
// mamba_expand x hidden / heads; the product must equal mamba_expand x hidden, as
// GraniteMoeHybridConfig requires), the config class's defaults where a key is absent.
void read_granite_mamba(HfReader& r, ModelSpec& m, const char* cls) {
  if (r.boolean_or("mamba_proj_bias", false, ""))
    r.fail("/mamba_proj_bias", "in_proj / out_proj biases are not modelled");
  if (!r.boolean_or("mamba_conv_bias", true, ""))
    r.fail("/mamba_conv_bias", "a conv1d without bias is not modelled (fleetsim counts it)");
  MambaSpec& s = m.mamba;
  s.heads = static_cast<int>(r.integer("mamba_n_heads", 1, 65536, "/mamba/heads"));
  const int64_t expand = r.present("mamba_expand") ? r.integer("mamba_expand", 1, 64, "") : 2;
  const int64_t width = expand * m.hidden;
  const bool auto_dim = !r.present("mamba_d_head") ||
                        (r.is_string("mamba_d_head") && r.str("mamba_d_head") == "auto");
  if (auto_dim) {
    if (width % s.heads != 0)
      r.fail("/mamba_n_heads",
             "must divide mamba_expand x hidden_size (" + std::to_string(width) + ")");
    s.head_dim = static_cast<int>(width / s.heads);
    r.note("/mamba/head_dim", "mamba_d_head auto: mamba_expand x hidden_size / mamba_n_heads");
  } else {
    s.head_dim = static_cast<int>(r.integer("mamba_d_head", 1, 4096, "/mamba/head_dim"));
  }
  if (int64_t{s.heads} * s.head_dim != width)
    r.fail("/mamba_d_head", "mamba_n_heads x mamba_d_head must equal mamba_expand x hidden_size (" +
                                std::to_string(width) + "), as " + cls + " requires");
  s.state = static_cast<int>(r.integer("mamba_d_state", 1, 4096, "/mamba/state"));
  s.groups = static_cast<int>(
      r.present("mamba_n_groups") ? r.integer("mamba_n_groups", 1, s.heads, "/mamba/groups") : 1);
  if (s.heads % s.groups != 0) r.fail("/mamba_n_groups", "must divide mamba_n_heads");
  s.conv_kernel = static_cast<int>(
      r.present("mamba_d_conv") ? r.integer("mamba_d_conv", 1, 64, "/mamba/conv_kernel") : 4);
  s.chunk = static_cast<int>(r.present("mamba_chunk_size")
                                 ? r.integer("mamba_chunk_size", 1, 65536, "/mamba/chunk")
                                 : 256);
}

}  // namespace

// IBM Granite 4.0-H (model_type granitemoehybrid; transformers modular_granitemoehybrid.py):
// each decoder layer is a token mixer -- Bamba's Mamba-2 mixer ("mamba" in layer_types) or
// GQA attention without position encoding ("attention") -- after input_layernorm, then, after
// post_attention_layernorm, the MoE (GraniteMoeSharedMoE: a router of num_local_experts, top
// num_experts_per_tok, SwiGLU experts of intermediate_size) plus one shared SwiGLU MLP of
// shared_intermediate_size; with num_local_experts 0 the shared MLP alone (a dense MLP of
// shared_intermediate_size). Written as two blocks per layer (M or *, then E or -), each with
// its own RMSNorm. The mixer's width is mamba_n_heads x mamba_d_head, which transformers
// requires to equal mamba_expand x hidden_size ("auto" head dim: that width / mamba_n_heads).
void read_granite_moe_hybrid(HfReader& r, ModelSpec& m) {
  const int layers = m.layers;
  std::string blocks_origin;
  const std::vector<std::string> types = granite_layer_types(r, layers, &blocks_origin);
  read_gqa(r, m);
  if (r.boolean_or("attention_bias", false, ""))
    r.fail("/attention_bias", "biases are not modelled for granitemoehybrid");
  if (r.present("position_embedding_type")) {
    const std::string pe = r.str("position_embedding_type");
    if (pe != "nope" && pe != "rope")
      r.fail("/position_embedding_type", "expected 'nope', 'rope' or null, got '" + pe + "'");
  }
  m.unmodelled.push_back({"position_encoding", "none",
                          "position_embedding_type nope / null: no position encoding (rope: "
                          "RoPE, no GEMM either)"});
  if (r.present("normalization_function") && r.str("normalization_function") != "rmsnorm")
    r.fail("/normalization_function", "expected 'rmsnorm'");
  r.note("/norm",
         "RMSNorm: input_layernorm before the mixer, post_attention_layernorm before "
         "the MoE / MLP, one per block");
  if (r.present("hidden_act") && r.str("hidden_act") != "silu")
    r.fail("/hidden_act", "expected 'silu' (SwiGLU experts and shared MLP)");
  m.mlp = MlpKind::kGated;
  r.note("/mlp",
         "GraniteMoeSharedMLP / ParallelExperts: input_linear h -> 2 x width (SwiGLU), "
         "output_linear");
  read_granite_mamba(r, m, "GraniteMoeHybridConfig");
  const int64_t experts = r.integer("num_local_experts", 0, 1 << 16, "");
  const int64_t shared = r.integer("shared_intermediate_size", 1, int64_t{1} << 24,
                                   experts > 0 ? "/moe/shared_expert_ffn" : "/ffn");
  if (experts > 0) {
    m.moe = read_moe_fields(r, "num_local_experts", "intermediate_size");
    m.moe.shared_experts = 1;
    m.moe.shared_expert_ffn = shared;
    r.note("/moe/shared_experts",
           "GraniteMoeHybridDecoderLayer.shared_mlp: one shared SwiGLU "
           "MLP of shared_intermediate_size beside the experts");
    m.ffn = 0;
    m.unmodelled.push_back({"router_scoring", "none",
                            "GraniteMoeTopKGating: softmax over the top-k logits; routing "
                            "statistics are modelled in moe/"});
  } else {
    m.ffn = shared;  // num_local_experts 0: the shared MLP is the layer's FFN
    for (const char* k : {"intermediate_size", "num_experts_per_tok"})
      r.ignore(k);
  }
  m.blocks.clear();
  for (int i = 0; i < layers; ++i) {
    m.blocks.push_back(types[static_cast<size_t>(i)] == "mamba" ? BlockKind::kMamba
                                                                : BlockKind::kAttention);
    m.blocks.push_back(experts > 0 ? BlockKind::kMoe : BlockKind::kMlp);
  }
  m.layers = 2 * layers;
  r.note("/layers", "2 x num_hidden_layers: each layer is a mixer block and an FFN block");
  r.note("/blocks", blocks_origin + ", num_local_experts");
  // muP-style scalar multipliers: no parameters, no GEMM.
  for (const char* k : {"embedding_multiplier", "logits_scaling", "residual_multiplier",
                        "attention_multiplier", "init_method"})
    r.ignore(k);
}

// IBM Bamba (model_type bamba; transformers modeling_bamba.py), Granite 4.0-H's dense
// predecessor: each decoder layer is a token mixer -- the Mamba-2 BambaMixer, or, at the layers
// attn_layer_indices lists, GQA attention with RoPE on part of each head -- after
// input_layernorm, then a SwiGLU MLP of intermediate_size after pre_ff_layernorm. Written as two
// blocks per layer (M or *, then -), each with its own RMSNorm.
void read_bamba(HfReader& r, ModelSpec& m) {
  const int layers = m.layers;
  std::vector<bool> attention(static_cast<size_t>(layers));
  std::string origin = "attn_layer_indices absent: every layer Mamba-2 (BambaConfig)";
  if (r.present("attn_layer_indices")) {
    for (const int64_t i : r.int_list("attn_layer_indices", 0, layers - 1))
      attention[static_cast<size_t>(i)] = true;
    origin = "config.json:/attn_layer_indices";
  } else {
    r.ignore("attn_layer_indices");
  }
  read_gqa(r, m);
  for (const char* k : {"attention_bias", "mlp_bias"})
    if (r.boolean_or(k, false, ""))
      r.fail(std::string("/") + k, "biases are not modelled for bamba (BambaConfig sets false)");
  if (r.present("hidden_act") && r.str("hidden_act") != "silu")
    r.fail("/hidden_act", "expected 'silu' (BambaMLP's SwiGLU)");
  m.mlp = MlpKind::kGated;
  r.note("/mlp", "BambaMLP: gate_proj, up_proj, down_proj");
  r.note("/norm", "RMSNorm: input_layernorm before the mixer, pre_ff_layernorm before the MLP");
  m.ffn = r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn");
  read_granite_mamba(r, m, "BambaConfig");
  m.blocks.clear();
  for (int i = 0; i < layers; ++i) {
    m.blocks.push_back(attention[static_cast<size_t>(i)] ? BlockKind::kAttention
                                                         : BlockKind::kMamba);
    m.blocks.push_back(BlockKind::kMlp);
  }
  m.layers = 2 * layers;
  r.note("/layers", "2 x num_hidden_layers: each layer is a mixer block and an MLP block");
  r.note("/blocks", origin + ": attention mixers there, Mamba-2 elsewhere; an MLP after each");
  m.unmodelled.push_back({"position_encoding", "none",
                          "RoPE on part of each attention head (partial_rotary_factor 0.5 in "
                          "BambaConfig): no GEMM"});
  // Training-time scalars and inference switches: no parameters, no GEMM.
  for (const char* k : {"num_logits_to_keep", "time_step_min", "time_step_max", "time_step_limit",
                        "z_loss_coefficient", "use_mamba_kernels", "attn_rotary_emb"})
    r.ignore(k);
}

}  // namespace fleetsim::hf_internal
