// Hugging Face config.json MoE readers shared by the importer's families (see hf_config.h):
// the expert count / top-k / expert width, Qwen's MoE layer rule, DeepSeek's MoE layer (shared
// experts, dense prefix, MTP) and GLM-4.5's variant of it.
#include <algorithm>
#include <string>
#include <vector>

#include "scenario/hf_config_internal.h"

namespace fleetsim::hf_internal {

MoeSpec read_moe_fields(HfReader& r, const char* experts_key, const char* ffn_key) {
  MoeSpec s;
  s.experts = static_cast<int>(r.integer(experts_key, 1, 1 << 16, "/moe/experts"));
  s.top_k = static_cast<int>(r.integer("num_experts_per_tok", 1, s.experts, "/moe/top_k"));
  s.expert_ffn = r.integer(ffn_key, 1, int64_t{1} << 24, "/moe/expert_ffn");
  return s;
}

// Qwen's MoE layer rule: layer i is MoE unless in mlp_only_layers, when (i + 1) % step == 0.
void read_qwen_moe(HfReader& r, ModelSpec& m, bool shared) {
  // transformers 5's Qwen3MoeConfig maps num_experts to num_local_experts (attribute_map), so a
  // config it saves names the count num_local_experts; both present must agree.
  const bool local = !r.present("num_experts") && r.present("num_local_experts");
  m.moe = read_moe_fields(r, local ? "num_local_experts" : "num_experts", "moe_intermediate_size");
  if (!local && r.present("num_local_experts") &&
      r.integer("num_local_experts", 1, 1 << 16, "") != m.moe.experts)
    r.fail("/num_local_experts", "disagrees with num_experts");
  m.ffn = r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn");
  m.moe.layer_freq =
      static_cast<int>(r.present("decoder_sparse_step")
                           ? r.integer("decoder_sparse_step", 1, m.layers, "/moe/layer_freq")
                           : 1);
  std::vector<int64_t> dense;
  if (r.present("mlp_only_layers")) dense = r.int_list("mlp_only_layers", 0, m.layers - 1);
  for (size_t i = 0; i < dense.size(); ++i) {
    if (dense[i] != static_cast<int64_t>(i) || m.moe.layer_freq != 1)
      r.fail("/mlp_only_layers",
             "only a prefix 0, 1, ..., k-1 of dense layers (with "
             "decoder_sparse_step 1) can be expressed");
  }
  m.moe.first_k_dense = static_cast<int>(dense.size());
  r.note("/moe/first_k_dense", "length of mlp_only_layers");
  if (shared) {
    m.moe.shared_expert_ffn =
        r.integer("shared_expert_intermediate_size", 0, int64_t{1} << 24, "/moe/shared_expert_ffn");
    m.moe.shared_experts = m.moe.shared_expert_ffn > 0 ? 1 : 0;
    r.note("/moe/shared_experts", "one shared expert when shared_expert_intermediate_size > 0");
    m.unmodelled.push_back({"shared_expert_gate", "small",
                            "sigmoid gate of the shared expert: one hidden x 1 matrix per layer"});
  }
}

void read_deepseek_moe(HfReader& r, ModelSpec& m) {
  m.moe = read_moe_fields(r, "n_routed_experts", "moe_intermediate_size");
  // DeepseekV32Config (transformers 5) also writes num_experts, the same count.
  if (r.present("num_experts") && r.integer("num_experts", 1, 1 << 16, "") != m.moe.experts)
    r.fail("/num_experts", "must equal n_routed_experts (" + std::to_string(m.moe.experts) + ")");
  m.ffn = r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn");
  m.moe.shared_experts = static_cast<int>(
      r.present("n_shared_experts") ? r.integer("n_shared_experts", 0, 64, "/moe/shared_experts")
                                    : 0);
  m.moe.shared_expert_ffn = m.moe.shared_experts > 0 ? m.moe.expert_ffn : 0;
  r.note("/moe/shared_expert_ffn", "each shared expert is moe_intermediate_size wide");
  // Glm4MoeLiteConfig (GLM-4.7-Flash) has no first_k_dense_replace: its mlp_layer_types decides,
  // by default one dense layer, then MoE.
  const bool lite = r.str("model_type") == "glm4_moe_lite";
  std::vector<std::string> t;
  if (r.present("mlp_layer_types")) t = r.string_list("mlp_layer_types");
  int dense = lite ? 1 : 0;
  if (lite && !t.empty())
    dense = static_cast<int>(std::find(t.begin(), t.end(), "sparse") - t.begin());
  m.moe.first_k_dense = static_cast<int>(
      r.present("first_k_dense_replace")
          ? r.integer("first_k_dense_replace", 0, m.layers - 1, "/moe/first_k_dense")
          : dense);
  if (lite && !r.present("first_k_dense_replace"))
    r.note("/moe/first_k_dense", t.empty() ? "mlp_layer_types absent: 1 dense layer, the "
                                             "default of Glm4MoeLiteConfig"
                                           : "leading 'dense' entries of mlp_layer_types");
  // transformers 5's per-layer list (DeepseekV32Config, ...): "dense" for the first
  // first_k_dense_replace layers, then "sparse" (MoE), as its __post_init__ writes it.
  if (!t.empty()) {
    std::vector<std::string> want(static_cast<size_t>(m.layers), "sparse");
    std::fill_n(want.begin(), m.moe.first_k_dense, "dense");
    if (t != want)
      r.fail("/mlp_layer_types",
             "expected " + std::to_string(m.moe.first_k_dense) + " 'dense' then 'sparse' (" +
                 std::to_string(m.layers) +
                 " entries, from first_k_dense_replace): other dense / MoE layer patterns are "
                 "not modelled for this family");
  }
  r.ignore("mlp_layer_types");  // null: derived from first_k_dense_replace
  if (r.present("moe_layer_freq") && r.integer("moe_layer_freq", 1, m.layers, "") != 1) {
    r.fail("/moe_layer_freq",
           "DeepSeek's every-k-th-layer rule (layer_idx % moe_layer_freq) "
           "is only expressible for 1");
  }
  m.mtp_layers = static_cast<int>(r.present("num_nextn_predict_layers")
                                      ? r.integer("num_nextn_predict_layers", 0, 16, "/mtp_layers")
                                      : 0);
  m.unmodelled.push_back({"router_scoring", "none",
                          "DeepSeek routing (scoring_func, topk_method, n_group, topk_group, "
                          "routed_scaling_factor): routing statistics are modelled in moe/"});
}

// GLM-4.5 (modeling_glm4_moe.py): GQA with DeepSeek's MoE layer (first_k_dense_replace dense
// layers, shared experts of moe_intermediate_size, sigmoid routing with a correction bias, MTP
// layers) and optional q_norm / k_norm.
void read_glm4_moe(HfReader& r, ModelSpec& m) {
  read_deepseek_moe(r, m);
  // transformers 5's Glm4MoeConfig: num_mtp_layers (attribute_map alias of
  // num_nextn_predict_layers).
  if (r.present("num_mtp_layers")) {
    const int n = static_cast<int>(r.integer("num_mtp_layers", 0, 16, "/mtp_layers"));
    if (r.present("num_nextn_predict_layers") && n != m.mtp_layers)
      r.fail("/num_mtp_layers", "disagrees with num_nextn_predict_layers");
    m.mtp_layers = n;
  }
  // Early Glm4MoeConfig (Qwen's MoE keys): decoder_sparse_step, every layer after the dense
  // prefix MoE at 1.
  if (r.present("decoder_sparse_step") && r.integer("decoder_sparse_step", 1, m.layers, "") != 1)
    r.fail("/decoder_sparse_step",
           "an MoE layer every k-th layer is not modelled for glm4_moe (only 1: "
           "first_k_dense_replace dense layers, then every layer MoE)");
}

// ERNIE 4.5 MoE (modeling_ernie4_5_moe.py): layer i is MoE when (i + 1) % moe_layer_interval == 0
// and moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer), else a SwiGLU MLP
// of intermediate_size; an MoE layer has a router of moe_num_experts, top moe_k experts of
// moe_intermediate_size and one shared MLP of moe_num_shared_experts x moe_intermediate_size.
void read_ernie_moe(HfReader& r, ModelSpec& m) {
  MoeSpec& s = m.moe;
  s.experts = static_cast<int>(r.integer("moe_num_experts", 1, 1 << 16, "/moe/experts"));
  // moe_k, or num_experts_per_tok (its transformers 5 alias): both present must agree.
  const char* k_key = r.present("moe_k") ? "moe_k" : "num_experts_per_tok";
  s.top_k = static_cast<int>(r.integer(k_key, 1, s.experts, "/moe/top_k"));
  if (r.present("moe_k") && r.present("num_experts_per_tok") &&
      r.integer("num_experts_per_tok", 1, s.experts, "") != s.top_k)
    r.fail("/num_experts_per_tok", "disagrees with moe_k");
  s.expert_ffn = r.integer("moe_intermediate_size", 1, int64_t{1} << 24, "/moe/expert_ffn");
  m.ffn = r.integer("intermediate_size", 1, int64_t{1} << 24, "/ffn");
  const int64_t shared = r.integer_or("moe_num_shared_experts", 0, 0, 64, "");
  s.shared_experts = shared > 0 ? 1 : 0;
  s.shared_expert_ffn = shared * s.expert_ffn;
  r.note("/moe/shared_expert_ffn",
         "one shared MLP of moe_num_shared_experts x moe_intermediate_size (Ernie4_5_MoeMLP)");
  const int64_t start = r.integer_or("moe_layer_start_index", 1, 0, m.layers - 1, "");
  const int64_t end = r.integer_or("moe_layer_end_index", -1, -1, m.layers - 1, "");
  const int64_t every = r.integer_or("moe_layer_interval", 1, 1, m.layers, "");
  if (end >= 0 && end != m.layers - 1)
    r.fail("/moe_layer_end_index",
           "MoE layers that stop before the last layer are not modelled (-1 or the last index)");
  // The first MoE layer i0 (>= start, (i0 + 1) % every == 0); fleetsim's rule, layer i >=
  // first_k_dense MoE when (i - first_k_dense + 1) % layer_freq == 0, gives the same layers with
  // first_k_dense = i0 - every + 1.
  int64_t first = start;
  while ((first + 1) % every != 0)
    ++first;
  if (first >= m.layers) r.fail("/moe_layer_start_index", "no layer is MoE");
  s.first_k_dense = static_cast<int>(first - every + 1);
  s.layer_freq = static_cast<int>(every);
  r.note("/moe/first_k_dense",
         "moe_layer_start_index and moe_layer_interval (ERNIE's MoE layer rule)");
  m.unmodelled.push_back({"router_scoring", "none",
                          "softmax top-k with a correction bias (moe_use_aux_free): routing "
                          "statistics are modelled in moe/"});
  if (r.present("moe_capacity"))
    m.unmodelled.push_back({"moe_capacity", "small",
                            "moe_capacity (expert capacity factors): fleetsim's MoE is dropless"});
  for (const char* k : {"moe_norm_min", "moe_gate", "moe_use_aux_free", "moe_capacity"})
    r.ignore(k);
}

}  // namespace fleetsim::hf_internal
