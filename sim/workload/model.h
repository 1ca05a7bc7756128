// Typed model definition (a transformer LLM, dense or MoE) as read from workloads/models/*.json
// or from a scenario's inline "model" object by scenario/. Values come from each model's
// published config (the JSON files keep the source of every number).
//
// Parameter and FLOP counts are closed forms over this struct; they are what memory, the step
// DAG and MFU are computed from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetsim {

enum class AttentionKind {
  kGqa,  // multi-head / grouped-query attention (kv_heads == heads is plain MHA)
  kMla,  // DeepSeek multi-head latent attention (low-rank q and kv projections)
};

enum class MlpKind {
  kGated,  // SwiGLU / GeGLU: up, gate and down projections (3 matrices)
  kPlain,  // GELU / ReLU MLP: up and down projections (2 matrices)
};

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kGqa;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // q/k/v head dim (GQA); for MLA the v head dim
  bool qkv_bias = false;
  // MLA only (0 otherwise).
  int q_lora_rank = 0;  // 0 = q is projected directly from the hidden state
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  // Sliding-window attention: window in tokens (0 = none) and which layers use it:
  // layer i is windowed when window_pattern > 0 and (i % window_pattern) < window_layers.
  int sliding_window = 0;
  int window_pattern = 0;
  int window_layers = 0;
};

struct MoeSpec {
  int experts = 0;  // routed experts; 0 = dense model
  int shared_experts = 0;
  int top_k = 0;
  int64_t expert_ffn = 0;         // FFN width of one routed expert
  int64_t shared_expert_ffn = 0;  // FFN width of one shared expert
  int first_k_dense = 0;          // leading dense layers
  int layer_freq = 1;             // after those, every layer_freq-th layer is MoE
};

struct ModelSpec {
  std::string name;          // canonical id (file name under workloads/models/)
  std::string display_name;  // as published ("Llama 3.1 405B")
  std::vector<std::string> aliases;  // names used in ../shared/reference/*.csv
  std::string source;                // URL of the published config
  int layers = 0;
  int64_t hidden = 0;
  int64_t ffn = 0;  // dense FFN width
  int64_t vocab = 0;
  MlpKind mlp = MlpKind::kGated;
  bool tied_embeddings = false;
  int max_seq_len = 0;
  AttentionSpec attention;
  MoeSpec moe;
  int mtp_layers = 0;  // multi-token-prediction modules (DeepSeek-V3)
  // Published totals, for checking the closed forms (0 = not published).
  double published_total_params = 0;
  double published_active_params = 0;
  std::string file;  // where it was read from ("" for inline definitions)
};

bool is_moe(const ModelSpec& m);
// Whether decoder layer `i` (0-based) has an MoE FFN.
bool is_moe_layer(const ModelSpec& m, int i);
int moe_layer_count(const ModelSpec& m);

// Parameter counts (elements, not bytes).
struct LayerParams {
  int64_t attention = 0;       // q/k/v/o projections (+ MLA low-rank matrices, biases)
  int64_t norms = 0;           // layer norms in the layer
  int64_t dense_mlp = 0;       // dense FFN (0 on MoE layers)
  int64_t router = 0;          // MoE router
  int64_t routed_experts = 0;  // all routed experts of the layer
  int64_t shared_experts = 0;  // all shared experts of the layer
  int64_t one_expert = 0;      // one routed expert
  int64_t total() const {
    return attention + norms + dense_mlp + router + routed_experts + shared_experts;
  }
};
LayerParams layer_params(const ModelSpec& m, int layer);
int64_t embedding_params(const ModelSpec& m);  // input embedding
int64_t output_params(const ModelSpec& m);     // LM head (0 when tied) + final norm
int64_t mtp_params(const ModelSpec& m);        // MTP modules (sharing embedding and head)
int64_t total_params(const ModelSpec& m);      // everything, MTP excluded
int64_t active_params(const ModelSpec& m);     // per token: top_k routed + shared experts

// Model FLOPs of one training step per token (forward + backward = 3× forward matmul FLOPs,
// attention included, causal masking halving the score/context matmuls), the figure
// "model TFLOP/s/GPU" and MFU are computed from. Formula documented in README ("Metrics").
double model_flops_per_token(const ModelSpec& m, int seq_len);

}  // namespace fleetsim
