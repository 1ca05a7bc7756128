// Hugging Face config.json -> ModelSpec for DeepSeek-V4 (model_type deepseek_v4, the
// checkpoints' DeepseekV4Config keys: compress_ratios, num_hash_layers, qk_rope_head_dim), as
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
  a.qk_rope_head_dim =
      static_cast<int>(r.integer("qk_rope_head_dim", 0, a.head_dim, "/attention/qk_rope_head_dim"));
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
    a.compress_ratios.push_back(static_cast<int>(ratios[i]));
  }
  a.csa_ratio = kCsa;
  r.note("/attention/compress_ratios", "config.json:/compress_ratios (decoder layers, then MTP)");
  r.note("/attention/csa_ratio",
         "ratio-4 layers are CSA (overlapping compressor and lightning indexer), ratio-128 HCA: "
         "transformers _COMPRESS_RATIO_TO_LAYER_TYPE");
  r.ignore("compress_rope_theta");
  if (std::count(ratios.begin(), ratios.end(), kCsa) > 0) {
    a.sparse_topk =
        static_cast<int>(r.integer("index_topk", 1, int64_t{1} << 30, "/attention/sparse_topk"));
    a.indexer_heads =
        static_cast<int>(r.integer("index_n_heads", 1, 4096, "/attention/indexer_heads"));
    a.indexer_head_dim =
        static_cast<int>(r.integer("index_head_dim", 1, 4096, "/attention/indexer_head_dim"));
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
  if (!r.present("num_hash_layers"))
    r.note("/moe/hash_layers", "num_hash_layers absent: 3, DeepseekV4Config's default");
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
