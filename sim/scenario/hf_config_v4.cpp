// Hugging Face config.json -> ModelSpec for DeepSeek-V4 (model_type deepseek_v4: the
// checkpoints' keys compress_ratios, num_hash_layers, qk_rope_head_dim, or those transformers'
// DeepseekV4Config writes, layer_types, compress_rates, mlp_layer_types), as
// transformers' modeling_deepseek_v4.py builds the model: shared-KV attention (AttentionKind::
// kSharedKv) with a sliding window on every layer and per-layer CSA / HCA compressors, mHC
// residual streams, every layer MoE (the first num_hash_layers hash-routed). docs/models.md.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "scenario/hf_config_internal.h"
#include "scenario/hf_reader.h"

namespace fleetsim::hf_internal {
namespace {

// The ratios DeepSeek-V4's compressors are defined for (transformers
// _COMPRESS_RATIO_TO_LAYER_TYPE, Megatron-Bridge dsv4_hybrid): 0 window only, 4 CSA, 128 HCA.
constexpr int kCsa = 4;
constexpr int kHca = 128;

// transformers' layout: one layer type per decoder layer ("sliding_attention",
// "compressed_sparse_attention", "heavily_compressed_attention") and the rates of the two
// compressed types (compress_rates; absent: DeepseekV4Config's 4 and 128). The MTP modules,
// which transformers does not build, get ratio 0 (a window-only layer), as vLLM's
// get_compress_ratios and the checkpoints' lists have it.
std::vector<int64_t> ratios_from_layer_types(HfReader& r, const ModelSpec& m, int64_t* csa) {
  if (r.present("compress_ratios"))
    r.fail("/layer_types",
           "give compress_ratios (the checkpoint's) or layer_types (transformers'), not both");
  int64_t hca = kHca;
  if (r.present("compress_rates")) {
    HfReader cr = r.child("compress_rates");
    *csa = cr.integer("compressed_sparse_attention", 2, int64_t{1} << 20, "");
    hca = cr.integer("heavily_compressed_attention", 2, int64_t{1} << 20, "");
    cr.finish("DeepseekV4Config compress_rates");
    r.adopt(cr);
    if (*csa == hca)
      r.fail("/compress_rates",
             "the CSA and HCA rates must differ (fleetsim tells the layers apart by their rate)");
  }
  const std::vector<std::string> types = r.string_list("layer_types");
  if (static_cast<int>(types.size()) != m.layers)
    r.fail("/layer_types", "expected one entry per layer (" + std::to_string(m.layers) + "), got " +
                               std::to_string(types.size()));
  std::vector<int64_t> out;
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "sliding_attention") {
      out.push_back(0);
    } else if (types[i] == "compressed_sparse_attention") {
      out.push_back(*csa);
    } else if (types[i] == "heavily_compressed_attention") {
      out.push_back(hca);
    } else {
      r.fail("/layer_types/" + std::to_string(i),
             "expected 'sliding_attention', 'compressed_sparse_attention' or "
             "'heavily_compressed_attention', got '" +
                 types[i] + "'");
    }
  }
  out.insert(out.end(), static_cast<size_t>(m.mtp_layers), 0);
  r.note("/attention/compress_ratios",
         "config.json:/layer_types and compress_rates; the MTP modules window-only (0)");
  return out;
}

// The checkpoints' list: one ratio per decoder layer and MTP module, each 0, 4 or 128.
std::vector<int64_t> checkpoint_ratios(HfReader& r, const ModelSpec& m) {
  const std::vector<int64_t> ratios = r.int_list("compress_ratios", 0, kHca);
  const size_t want = static_cast<size_t>(m.layers + m.mtp_layers);
  if (ratios.size() != want)
    r.fail("/compress_ratios",
           "expected one ratio per layer and MTP module (num_hidden_layers + "
           "num_nextn_predict_layers = " +
               std::to_string(want) + "), got " + std::to_string(ratios.size()));
  for (size_t i = 0; i < ratios.size(); ++i) {
    if (ratios[i] != 0 && ratios[i] != kCsa && ratios[i] != kHca)
      r.fail("/compress_ratios/" + std::to_string(i),
             "expected 0 (sliding window only), 4 (CSA) or 128 (HCA), the ratios DeepSeek-V4's "
             "compressors are defined for, got " +
                 std::to_string(ratios[i]));
  }
  r.note("/attention/compress_ratios", "config.json:/compress_ratios (decoder layers, then MTP)");
  return ratios;
}

void read_v4_attention(HfReader& r, ModelSpec& m) {
  AttentionSpec& a = m.attention;
  a.kind = AttentionKind::kSharedKv;
  r.note("/attention/kind",
         "DeepseekV4Attention: shared-KV MQA, q LoRA, grouped low-rank output projection");
  a.heads = static_cast<int>(r.integer("num_attention_heads", 1, 4096, "/attention/heads"));
  a.kv_heads = 1;
  if (r.present("num_key_value_heads") && r.integer("num_key_value_heads", 1, 4096, "") != 1)
    r.fail("/num_key_value_heads", "DeepSeek-V4 attention has one shared KV head: expected 1");
  r.note("/attention/kv_heads", "one shared KV head (kv_proj), read as both key and value");
  a.head_dim = static_cast<int>(r.integer("head_dim", 1, 4096, "/attention/head_dim"));
  a.q_lora_rank = static_cast<int>(r.integer("q_lora_rank", 1, m.hidden, "/attention/q_lora_rank"));
  if (r.present("qk_rope_head_dim")) {
    a.qk_rope_head_dim = static_cast<int>(
        r.integer("qk_rope_head_dim", 0, a.head_dim, "/attention/qk_rope_head_dim"));
  } else {
    a.qk_rope_head_dim = a.head_dim / 8;  // position encoding only: no parameters or FLOPs
    r.note("/attention/qk_rope_head_dim",
           "qk_rope_head_dim absent: head_dim / 8, DeepseekV4Config's default "
           "partial_rotary_factor (64 / 512)");
  }
  a.o_groups = static_cast<int>(r.integer("o_groups", 1, a.heads, "/attention/o_groups"));
  if (a.heads % a.o_groups != 0)
    r.fail("/o_groups", "must divide num_attention_heads (" + std::to_string(a.heads) + ")");
  a.o_lora_rank =
      static_cast<int>(r.integer("o_lora_rank", 1, int64_t{1} << 24, "/attention/o_lora_rank"));
  a.sinks = true;
  r.note("/attention/sinks", "DeepseekV4Attention.sinks: one learned logit per head");
  if (r.boolean_or("attention_bias", false, ""))
    r.fail("/attention_bias", "DeepseekV4Attention has no projection biases: expected false");
  a.sliding_window = static_cast<int>(
      r.integer("sliding_window", 1, int64_t{1} << 30, "/attention/sliding_window"));
  a.window_kind = WindowKind::kSliding;
  a.window_pattern = 1;
  a.window_layers = 1;
  r.note("/attention/window_pattern", "every layer attends over the sliding window");
  m.mtp_layers = static_cast<int>(r.present("num_nextn_predict_layers")
                                      ? r.integer("num_nextn_predict_layers", 0, 16, "/mtp_layers")
                                      : 0);
  int64_t csa = kCsa;
  const std::vector<int64_t> ratios =
      r.present("layer_types") ? ratios_from_layer_types(r, m, &csa) : checkpoint_ratios(r, m);
  for (int64_t x : ratios)
    a.compress_ratios.push_back(static_cast<int>(x));
  a.csa_ratio = static_cast<int>(csa);
  r.note("/attention/csa_ratio",
         "CSA layers (overlapping compressor and lightning indexer) have ratio " +
             std::to_string(csa) + ", HCA layers the other: transformers DeepseekV4Config");
  for (const char* k : {"compress_rope_theta", "compress_rope_parameters"})
    r.ignore(k);
  if (std::count(ratios.begin(), ratios.end(), csa) > 0) {
    read_indexer(r, a);
  } else {
    for (const char* k : {"index_topk", "index_n_heads", "index_head_dim"})
      r.ignore(k);  // no CSA layer: no indexer is built
  }
}

void read_v4_moe(HfReader& r, ModelSpec& m) {
  if (r.present("hidden_act") && r.str("hidden_act") != "silu")
    r.fail("/hidden_act", "expected 'silu' (SwiGLU experts)");
  if (r.boolean_or("mlp_bias", false, ""))
    r.fail("/mlp_bias", "DeepseekV4MLP / DeepseekV4Experts have no biases: expected false");
  m.mlp = MlpKind::kGated;
  m.ffn = 0;
  r.note("/ffn", "every layer is MoE (DeepseekV4SparseMoeBlock): no dense FFN");
  MoeSpec& s = m.moe;
  s.experts = static_cast<int>(r.integer("n_routed_experts", 1, 1 << 16, "/moe/experts"));
  s.top_k = static_cast<int>(r.integer("num_experts_per_tok", 1, s.experts, "/moe/top_k"));
  s.expert_ffn = r.integer("moe_intermediate_size", 1, int64_t{1} << 24, "/moe/expert_ffn");
  s.shared_experts = static_cast<int>(
      r.present("n_shared_experts") ? r.integer("n_shared_experts", 0, 64, "/moe/shared_experts")
                                    : 0);
  s.shared_expert_ffn = s.shared_experts > 0 ? s.expert_ffn : 0;
  r.note("/moe/shared_expert_ffn", "each shared expert is moe_intermediate_size wide");
  s.hash_layers = static_cast<int>(
      r.present("num_hash_layers") ? r.integer("num_hash_layers", 0, m.layers, "/moe/hash_layers")
                                   : 3);
  if (r.present("mlp_layer_types")) {
    // transformers' per-layer list: "hash_moe" for the leading hash-routed layers, then "moe".
    const std::vector<std::string> types = r.string_list("mlp_layer_types");
    if (static_cast<int>(types.size()) != m.layers)
      r.fail("/mlp_layer_types", "expected one entry per layer (" + std::to_string(m.layers) +
                                     "), got " + std::to_string(types.size()));
    int hash = 0;
    for (size_t i = 0; i < types.size(); ++i) {
      const bool first = types[i] == "hash_moe" && static_cast<int>(i) == hash;
      if (first) ++hash;
      if (!first && types[i] != "moe")
        r.fail("/mlp_layer_types/" + std::to_string(i),
               "expected 'hash_moe' (a prefix of the layers) or 'moe', got '" + types[i] + "'");
    }
    if (r.present("num_hash_layers") && hash != s.hash_layers)
      r.fail("/num_hash_layers",
             "disagrees with mlp_layer_types (" + std::to_string(hash) + " hash_moe layers)");
    s.hash_layers = hash;
    r.note("/moe/hash_layers", "the hash_moe entries of config.json:/mlp_layer_types");
  } else if (!r.present("num_hash_layers")) {
    r.note("/moe/hash_layers", "num_hash_layers absent: 3, DeepseekV4Config's default");
  }
  r.ignore("expert_dtype");  // the checkpoint's FP4 experts: quantisation of the published file
  m.unmodelled.push_back({"router_scoring", "none",
                          "sqrtsoftplus scores with expert bias, top-k renormalised, "
                          "routed_scaling_factor: routing statistics are modelled in moe/"});
  m.unmodelled.push_back({"hash_routing", "none",
                          "the first moe.hash_layers layers take their experts from a frozen "
                          "token-id table (tid2eid, an integer buffer, not a parameter); the "
                          "router GEMM still weights them"});
  m.unmodelled.push_back({"activation", "none", "clamped SwiGLU (swiglu_limit)"});
}

}  // namespace

void read_deepseek_v4(HfReader& r, ModelSpec& m) {
  read_v4_attention(r, m);
  read_v4_moe(r, m);
  m.hyper.streams = static_cast<int>(r.integer("hc_mult", 2, 64, "/hyper_connections/streams"));
  m.hyper.sinkhorn_iters = static_cast<int>(
      r.integer("hc_sinkhorn_iters", 1, 1000, "/hyper_connections/sinkhorn_iters"));
  r.ignore("hc_eps");
  m.unmodelled.push_back({"position_encoding", "none",
                          "interleaved RoPE on qk_rope_head_dim of each head (and its inverse on "
                          "the output); compressed layers compress_rope_theta with YaRN"});
  m.unmodelled.push_back({"compressor_pooling", "none",
                          "the compressors' softmax pooling over each window, RoPE and the "
                          "causal masks of compressed entries: element-wise"});
  m.unmodelled.push_back({"mhc_mixing", "small",
                          "mHC's Sinkhorn-Knopp iterations and the n-stream collapse / expand: "
                          "element-wise; its projections are counted as parameters, not in "
                          "Megatron-Bridge's model FLOPs"});
}

}  // namespace fleetsim::hf_internal
