// Hugging Face config.json -> ModelSpec for Qwen's Gated DeltaNet hybrids (see hf_config.h):
// Qwen3-Next (qwen3_next).
#include <algorithm>
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {

namespace {

// Which of Qwen3-Next's `layers` decoder layers run full (gated) attention: layer_types, or
// every full_attention_interval-th layer (Qwen3NextConfig's default 4).
std::vector<bool> qwen3_next_full_attention(HfReader& r, int layers) {
  std::vector<bool> full(static_cast<size_t>(layers));
  if (r.present("layer_types")) {
    const std::vector<std::string> types = r.string_list("layer_types");
    if (static_cast<int>(types.size()) != layers)
      r.fail("/layer_types", "expected one entry per layer (" + std::to_string(layers) + "), got " +
                                 std::to_string(types.size()));
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] != "full_attention" && types[i] != "linear_attention")
        r.fail("/layer_types/" + std::to_string(i),
               "expected 'full_attention' or 'linear_attention', got '" + types[i] + "'");
      full[i] = types[i] == "full_attention";
    }
    r.ignore("full_attention_interval");
    return full;
  }
  r.ignore("layer_types");  // null: from full_attention_interval
  const int64_t every = r.present("full_attention_interval")
                            ? r.integer("full_attention_interval", 1, layers, "")
                            : 4;
  for (int i = 0; i < layers; ++i)
    full[static_cast<size_t>(i)] = (i + 1) % every == 0;
  return full;
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
  const std::vector<bool> full = qwen3_next_full_attention(r, layers);
  read_gqa(r, m);
  m.attention.qk_norm = true;
  m.attention.output_gate = true;
  r.note("/attention/qk_norm", "Qwen3NextAttention: q_norm / k_norm");
  r.note("/attention/output_gate", "Qwen3NextAttention: q_proj emits q and its sigmoid gate");
  if (r.boolean_or("attention_bias", false, ""))
    r.fail("/attention_bias", "biases are not modelled for qwen3_next");
  if (r.boolean_or("use_sliding_window", false, ""))
    r.fail("/use_sliding_window", "a sliding window is not modelled for qwen3_next");
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
  m.moe = read_moe_fields(r, "num_experts", "moe_intermediate_size");
  m.moe.shared_expert_ffn =
      r.integer("shared_expert_intermediate_size", 0, int64_t{1} << 24, "/moe/shared_expert_ffn");
  m.moe.shared_experts = m.moe.shared_expert_ffn > 0 ? 1 : 0;
  m.moe.shared_expert_gate = m.moe.shared_experts > 0;
  r.note("/moe/shared_expert_gate", "Qwen3NextSparseMoeBlock: shared_expert_gate (hidden x 1)");
  r.ignore("norm_topk_prob");
  const int64_t step =
      r.present("decoder_sparse_step") ? r.integer("decoder_sparse_step", 1, layers, "") : 1;
  std::vector<bool> dense(static_cast<size_t>(layers));
  if (r.present("mlp_only_layers"))
    for (int64_t i : r.int_list("mlp_only_layers", 0, layers - 1))
      dense[static_cast<size_t>(i)] = true;
  m.blocks.clear();
  for (int i = 0; i < layers; ++i) {
    m.blocks.push_back(full[static_cast<size_t>(i)] ? BlockKind::kAttention : BlockKind::kGdn);
    const bool moe = !dense[static_cast<size_t>(i)] && (i + 1) % step == 0;
    m.blocks.push_back(moe ? BlockKind::kMoe : BlockKind::kMlp);
  }
  m.layers = 2 * layers;
  r.note("/layers", "2 x num_hidden_layers: each layer is a mixer block and an FFN block");
  r.note("/blocks",
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
  m.unmodelled.push_back({"zero_centered_norm", "none",
                          "Qwen3NextRMSNorm stores weight - 1 (zero-centred): same parameters"});
  m.unmodelled.push_back({"router_scoring", "none",
                          "softmax top-k, renormalised (norm_topk_prob): routing statistics "
                          "are modelled in moe/"});
}

}  // namespace fleetsim::hf_internal
