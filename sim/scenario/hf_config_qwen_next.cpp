// Hugging Face config.json -> ModelSpec for Qwen's Gated DeltaNet hybrids (see hf_config.h):
// Qwen3-Next (qwen3_next) and Qwen3.5 / 3.6 (qwen3_5, qwen3_5_moe and their text-only classes).
#include <algorithm>
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {

namespace {

// Which of Qwen3-Next's `layers` decoder layers run full (gated) attention: layer_types, or
// every full_attention_interval-th layer (Qwen3NextConfig's default 4).
std::vector<bool> qwen3_next_full_attention(HfReader& r, int layers) {
  if (r.present("layer_types")) {
    r.ignore("full_attention_interval");
    return r.word_flags("layer_types", layers, "full_attention", "linear_attention");
  }
  std::vector<bool> full(static_cast<size_t>(layers));
  r.ignore("layer_types");  // null: from full_attention_interval
  const int64_t every = r.present("full_attention_interval")
                            ? r.integer("full_attention_interval", 1, layers, "")
                            : 4;
  for (int i = 0; i < layers; ++i)
    full[static_cast<size_t>(i)] = (i + 1) % every == 0;
  return full;
}

// The token mixers of Qwen3-Next and Qwen3.5 (whose decoder layers transformers builds from
// Qwen3-Next's classes): which layers run full attention, the gated attention's fields and the
// Gated DeltaNet's. `type` names the model_type in errors.
std::vector<bool> read_gdn_mixers(HfReader& r, ModelSpec& m, const std::string& type) {
  const std::vector<bool> full = qwen3_next_full_attention(r, m.layers);
  read_gqa(r, m);
  m.attention.qk_norm = true;
  m.attention.output_gate = true;
  r.note("/attention/qk_norm", "Qwen3NextAttention: q_norm / k_norm");
  r.note("/attention/output_gate", "Qwen3NextAttention: q_proj emits q and its sigmoid gate");
  if (r.boolean_or("attention_bias", false, ""))
    r.fail("/attention_bias", "biases are not modelled for " + type);
  if (r.boolean_or("use_sliding_window", false, ""))
    r.fail("/use_sliding_window", "a sliding window is not modelled for " + type);
  r.ignore("sliding_window");
  r.ignore("max_window_layers");
  r.ignore("hidden_act");
  GdnSpec& g = m.gdn;
  g.qk_heads = static_cast<int>(r.integer("linear_num_key_heads", 1, 65536, "/gdn/qk_heads"));
  g.v_heads = static_cast<int>(r.integer("linear_num_value_heads", 1, 65536, "/gdn/v_heads"));
  g.qk_head_dim = static_cast<int>(r.integer("linear_key_head_dim", 1, 4096, "/gdn/qk_head_dim"));
  g.v_head_dim = static_cast<int>(r.integer("linear_value_head_dim", 1, 4096, "/gdn/v_head_dim"));
  g.conv_kernel = static_cast<int>(r.integer("linear_conv_kernel_dim", 1, 64, "/gdn/conv_kernel"));
  g.chunk = 64;
  r.note("/gdn/chunk", "not in config.json: FLA chunk_gated_delta_rule's chunk of 64 tokens");
  if (g.v_heads % g.qk_heads != 0)
    r.fail("/linear_num_value_heads", "must be a multiple of linear_num_key_heads");
  return full;
}

// Qwen3-Next's and Qwen3.5-MoE's MoE block: num_experts of moe_intermediate_size (top
// num_experts_per_tok) and one shared expert of shared_expert_intermediate_size behind a sigmoid
// gate.
void read_shared_gate_moe(HfReader& r, ModelSpec& m) {
  m.moe = read_moe_fields(r, "num_experts", "moe_intermediate_size");
  m.moe.shared_expert_ffn =
      r.integer("shared_expert_intermediate_size", 0, int64_t{1} << 24, "/moe/shared_expert_ffn");
  m.moe.shared_experts = m.moe.shared_expert_ffn > 0 ? 1 : 0;
  m.moe.shared_expert_gate = m.moe.shared_experts > 0;
  r.note("/moe/shared_expert_gate", "Qwen3NextSparseMoeBlock: shared_expert_gate (hidden x 1)");
  r.ignore("norm_topk_prob");
}

// Two blocks per decoder layer: the mixer (* or G), then the FFN (E where `moe[i]`, else -).
void write_blocks(HfReader& r, ModelSpec& m, const std::vector<bool>& full,
                  const std::vector<bool>& moe, const std::string& origin) {
  m.blocks.clear();
  for (size_t i = 0; i < full.size(); ++i) {
    m.blocks.push_back(full[i] ? BlockKind::kAttention : BlockKind::kGdn);
    m.blocks.push_back(moe[i] ? BlockKind::kMoe : BlockKind::kMlp);
  }
  m.layers = 2 * static_cast<int>(full.size());
  r.note("/layers", "2 x num_hidden_layers: each layer is a mixer block and an FFN block");
  r.note("/blocks", origin);
}

void zero_centred_norm(ModelSpec& m) {
  m.unmodelled.push_back({"zero_centered_norm", "none",
                          "Qwen3NextRMSNorm stores weight - 1 (zero-centred): same parameters"});
}

}  // namespace

// Qwen3-Next (transformers modeling_qwen3_next.py, Megatron-Core gated_delta_net.py): each
// decoder layer is a token mixer -- Gated DeltaNet ("linear_attention") or gated attention
// ("full_attention": q_proj also emits the output gate, q/k RMSNorm) -- then an MoE (or, in
// mlp_only_layers / off the decoder_sparse_step, a dense MLP); written as two blocks per layer
// (G or *, then E or -), each with its own RMSNorm. The chunk length of the delta-rule kernel
// is not in config.json: FLA's chunk_gated_delta_rule (used by MCore) runs chunks of 64.
void read_qwen3_next(HfReader& r, ModelSpec& m) {
  const int layers = m.layers;
  const std::vector<bool> full = read_gdn_mixers(r, m, "qwen3_next");
  read_shared_gate_moe(r, m);
  const int64_t step =
      r.present("decoder_sparse_step") ? r.integer("decoder_sparse_step", 1, layers, "") : 1;
  std::vector<bool> moe(static_cast<size_t>(layers), true);
  if (r.present("mlp_only_layers"))
    for (int64_t i : r.int_list("mlp_only_layers", 0, layers - 1))
      moe[static_cast<size_t>(i)] = false;
  for (int i = 0; i < layers; ++i)
    if ((i + 1) % step != 0) moe[static_cast<size_t>(i)] = false;
  write_blocks(r, m, full, moe,
               "config.json:/layer_types (or full_attention_interval), mlp_only_layers, "
               "decoder_sparse_step");
  const bool any_dense = std::count(m.blocks.begin(), m.blocks.end(), BlockKind::kMlp) > 0;
  if (any_dense) {
    m.ffn = r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn");
  } else {
    r.ignore("intermediate_size");
    m.ffn = 0;
    r.note("/ffn", "every layer is MoE: intermediate_size is unused");
  }
  // The published config.json has no MTP key, the checkpoint one MTP module (its mtp.* weights,
  // which Megatron-Bridge's qwen3_next_bridge maps to mtp.layers.0; model card: multi-token
  // prediction): num_nextn_predict_layers when given, else that one module.
  if (r.present("num_nextn_predict_layers")) {
    m.mtp_layers = static_cast<int>(r.integer("num_nextn_predict_layers", 0, 16, "/mtp_layers"));
  } else {
    m.mtp_layers = 1;
    r.note("/mtp_layers",
           "num_nextn_predict_layers absent: 1, the checkpoint's one MTP module (mtp.* weights, "
           "Megatron-Bridge qwen3_next_bridge mtp.layers.0)");
  }
  zero_centred_norm(m);
  m.unmodelled.push_back({"router_scoring", "none",
                          "softmax top-k, renormalised (norm_topk_prob): routing statistics "
                          "are modelled in moe/"});
}

// Qwen3.5 / Qwen3.6 language models (transformers modular_qwen3_5.py, modular_qwen3_5_moe.py:
// Qwen3_5TextConfig / Qwen3_5MoeTextConfig derive from Qwen3NextConfig, their decoder layers
// from Qwen3-Next's): Qwen3-Next's mixers (GDN's in_proj_qkvz / in_proj_ba split into
// in_proj_qkv, in_proj_z, in_proj_b, in_proj_a: the same matrices), then a SwiGLU MLP of
// intermediate_size on every layer (qwen3_5) or the shared-expert MoE on every layer
// (qwen3_5_moe: the config class deletes intermediate_size, decoder_sparse_step and
// mlp_only_layers). `r` reads the text_config object (or the file, for the text-only classes).
void read_qwen3_5(HfReader& r, ModelSpec& m, bool moe) {
  const std::string type = moe ? "qwen3_5_moe" : "qwen3_5";
  if (r.present("model_type")) {
    const std::string t = r.str("model_type");
    if (t != type && t != type + "_text")
      r.fail("/model_type",
             "expected '" + type + "_text' inside a " + type + " config, got '" + t + "'");
  }
  const std::vector<bool> full = read_gdn_mixers(r, m, type);
  // vLLM's Qwen3.5 reads attn_output_gate (default true; transformers always builds the gate).
  m.attention.output_gate = r.boolean_or("attn_output_gate", true, "/attention/output_gate");
  if (!m.attention.output_gate)
    r.note("/attention/output_gate", "attn_output_gate false: q_proj emits q only (vLLM)");
  // The gate's activation and the SSM state's dtype: element-wise / the inference cache.
  if (r.present("output_gate_type")) r.str("output_gate_type");
  r.ignore("mamba_ssm_dtype");
  std::vector<bool> moe_layers(full.size(), moe);
  if (moe) {
    read_shared_gate_moe(r, m);
    if (r.present("decoder_sparse_step") && r.integer("decoder_sparse_step", 1, m.layers, "") != 1)
      r.fail("/decoder_sparse_step",
             "Qwen3_5MoeTextConfig has no dense layers: every layer is MoE (only 1 is read)");
    if (r.present("mlp_only_layers") && !r.int_list("mlp_only_layers", 0, m.layers - 1).empty())
      r.fail("/mlp_only_layers",
             "Qwen3_5MoeTextConfig has no dense layers: every layer is MoE (only [] is read)");
    r.ignore("intermediate_size");
    m.ffn = 0;
    r.note("/ffn", "every layer is MoE: Qwen3_5MoeTextConfig has no intermediate_size");
  } else {
    m.ffn = r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn");
  }
  write_blocks(r, m, full, moe_layers,
               "layer_types (or full_attention_interval) of the text config; every layer " +
                   std::string(moe ? "MoE" : "a SwiGLU MLP"));
  // The MTP module (mtp.fc, mtp.layers.0: one full-attention layer with the model's FFN).
  if (r.present("mtp_num_hidden_layers")) {
    m.mtp_layers = static_cast<int>(r.integer("mtp_num_hidden_layers", 0, 16, "/mtp_layers"));
  } else {
    m.mtp_layers = 0;
    r.note("/mtp_layers", "mtp_num_hidden_layers absent: no MTP module");
  }
  if (r.boolean_or("mtp_use_dedicated_embeddings", false, ""))
    r.fail("/mtp_use_dedicated_embeddings",
           "MTP modules with their own embedding are not modelled (only false is read)");
  zero_centred_norm(m);
  if (moe)
    m.unmodelled.push_back(
        {"router_scoring", "none",
         "softmax top-k, renormalised: routing statistics are modelled in moe/"});
}

namespace {

// The vision encoder of a Qwen3.5 checkpoint (transformers Qwen3_5VisionModel, Qwen3-VL's):
// its parameters and the training FLOPs of its matrices per language-model token of an image
// (spatial_merge_size^2 patches through `depth` blocks, then the merger), for the note that
// says what fleetsim leaves out. `deepstack`: the number of deepstack mergers when
// deepstack_visual_indexes is absent (Qwen3VLVisionConfig's [8, 16, 24]; Qwen3.5's none).
void vision_encoder_note(HfReader& v, ModelSpec& m, double deepstack_default) {
  // Absent keys: the vision config class's defaults (Qwen3-VL's and Qwen3.5's agree on these).
  const auto get = [&v](const char* key, int64_t dflt) { return vision_size(v, key, dflt, 0); };
  const double h = get("hidden_size", 1152);
  const double depth = get("depth", 27);
  const double ffn = get("intermediate_size", 4304);
  const double out = get("out_hidden_size", 3584);
  const double merge = get("spatial_merge_size", 2);
  const double patch = get("patch_size", 16);
  const double tpatch = get("temporal_patch_size", 2);
  const double channels = get("in_channels", 3);
  const double positions = get("num_position_embeddings", 2304);
  const double deepstack =
      v.present("deepstack_visual_indexes")
          ? static_cast<double>(v.int_list("deepstack_visual_indexes", 0, 4095).size())
          : deepstack_default;
  const double block_matrices = 4 * h * h + 2 * h * ffn;  // qkv, proj, fc1, fc2
  const double block = block_matrices + 3 * h + h + ffn + h + 4 * h;
  const double hm = h * merge * merge;
  const double merger_matrices = hm * hm + hm * out;
  const double params = depth * block + h * channels * tpatch * patch * patch + h + positions * h +
                        (2 * h + merger_matrices + hm + out) +
                        deepstack * (2 * hm + merger_matrices + hm + out);
  const double flops =
      6 * (depth * block_matrices * merge * merge + (1 + deepstack) * merger_matrices);
  add_vision_encoder_note(m, {.name = "vision encoder",
                              .unit = "blocks",
                              .layers = depth,
                              .width = h,
                              .params = params,
                              .token = "image or video token",
                              .flops = flops});
}

}  // namespace

// The keys of a Qwen3-VL or Qwen3.5 config.json besides the language model's (Qwen3VLConfig,
// Qwen3VLMoeConfig and Qwen3.5's classes, which keep Qwen3-VL's layout, around their
// text_config): the vision encoder's vision_config and the media token ids.
void read_qwen_vision_wrapper(HfReader& r, ModelSpec& m) {
  for (const char* k :
       {"image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"})
    r.ignore(k);
  const bool text_only = r.boolean_or("language_model_only", false, "");
  const bool vl = r.str("model_type").rfind("qwen3_vl", 0) == 0;
  read_vision_config(r, [&](HfReader& v) {
    if (!text_only) vision_encoder_note(v, m, vl ? 3.0 : 0.0);
  });
}

}  // namespace fleetsim::hf_internal
