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
  // DeepSeek-V4 shared-KV multi-query attention (transformers DeepseekV4Attention): q through a
  // low-rank latent (q_a h → q_lora_rank, its RMSNorm, q_b → heads · head_dim, a weightless
  // per-head RMSNorm), one KV head (kv_proj h → head_dim, its RMSNorm) read as both key and value,
  // a learned sink logit per head, and the grouped low-rank output projection (o_a: each of the
  // o_groups groups of heads · head_dim / o_groups → o_lora_rank, o_b: o_groups · o_lora_rank →
  // h). Every layer attends over a sliding window; compress_ratios adds compressed history.
  kSharedKv,
};

enum class MlpKind {
  kGated,  // SwiGLU / GeGLU: up, gate and down projections (3 matrices)
  kPlain,  // GELU / ReLU MLP: up and down projections (2 matrices)
};

enum class NormKind {
  kRms,    // RMSNorm: one weight vector
  kLayer,  // LayerNorm: weight and bias
};

// How windowed layers restrict attention (see AttentionSpec::sliding_window).
enum class WindowKind {
  kSliding,  // each query attends to the previous `sliding_window` tokens (GPT-OSS)
  kChunked,  // each query attends within its own aligned chunk of `sliding_window` tokens (Llama 4)
};

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kGqa;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // q/k/v head dim (GQA); for MLA the v head dim
  bool qkv_bias = false;
  bool qk_norm = false;  // per-head RMSNorm on q and k (Qwen3): 2 · head_dim weights per layer
  // With qk_norm: one RMSNorm over all q heads and one over all k heads (OLMo 2 / 3, OLMoE):
  // (heads + kv_heads) · head_dim weights per layer, the same elements normalised.
  bool qk_norm_all_heads = false;
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
  WindowKind window_kind = WindowKind::kSliding;
  // Gated attention (Qwen3-Next, Megatron-Core attention_output_gate): q_proj also emits a gate
  // of heads · head_dim, applied as sigmoid(gate) ⊙ attention output before o_proj.
  bool output_gate = false;
  // DeepSeek sparse attention (DSA, DeepSeek-V3.2; MLA only; 0 = dense): a lightning indexer of
  // indexer_heads × indexer_head_dim (q from the q latent, one shared key from the hidden state,
  // LayerNorm on the key, per-head weights from the hidden state) scores every previous token
  // and each query attends to its sparse_topk best (MLA in MQA mode over the 576-d latent).
  int sparse_topk = 0;
  int indexer_heads = 0;
  int indexer_head_dim = 0;
  // kSharedKv only (0 / empty otherwise). Grouped output projection and per-head sinks.
  int o_groups = 0;
  int o_lora_rank = 0;
  bool sinks = false;
  // Compressed attention (DeepSeek-V4): one ratio per layer, the MTP modules' after the decoder's
  // (config.json compress_ratios). 0: the sliding window only. r > 0: a compressor pools every r
  // tokens' KV into one entry (kv_proj and gate_proj from the hidden state, a learned position
  // bias of r rows, softmax over the window, RMSNorm) that every later query also attends to
  // (HCA, heavily compressed). Ratio csa_ratio is CSA instead: two overlapping series (the
  // projections twice as wide) and a lightning indexer (its own compressor at indexer_head_dim,
  // q_b from the q latent to indexer_heads × indexer_head_dim, weights_proj h → indexer_heads)
  // choosing the sparse_topk best compressed entries per query.
  std::vector<int> compress_ratios;
  int csa_ratio = 0;
};

struct MoeSpec {
  int experts = 0;  // routed experts; 0 = dense model
  int shared_experts = 0;
  int top_k = 0;
  int64_t expert_ffn = 0;         // FFN width of one routed expert
  int64_t shared_expert_ffn = 0;  // FFN width of one shared expert
  int first_k_dense = 0;          // leading dense layers
  // After those, every layer_freq-th layer is MoE: layer i >= first_k_dense is MoE when
  // (i - first_k_dense + 1) % layer_freq == 0 (layer_freq 2: layers 1, 3, 5, ... as Llama 4
  // Maverick's interleave step 2).
  int layer_freq = 1;
  // Sigmoid gate on the shared expert's output (Qwen2-MoE / Qwen3-Next shared_expert_gate): one
  // hidden × 1 matrix per MoE layer, counted with the shared experts.
  bool shared_expert_gate = false;
  // LatentMoE (Nemotron 3 Super / Ultra; Megatron-Core moe_latent_size, MoELayer.fc1_latent_proj
  // / fc2_latent_proj): 0 = none. Otherwise the router and the shared experts read the hidden
  // state, the routed tokens are projected hidden → latent before the dispatch, the routed
  // experts run latent → expert_ffn → latent, and the combined output is projected latent →
  // hidden; the EP all-to-all carries latent-wide tokens. The two projections are replicated on
  // the TP ranks (TELinear parallel_mode "duplicated") and counted in LayerParams::router.
  int64_t latent = 0;
  int64_t expert_width(int64_t hidden) const { return latent > 0 ? latent : hidden; }
  // Hash routing (DeepSeek-V4 DeepseekV4HashRouter): the first hash_layers MoE layers pick their
  // top_k experts from a frozen token-id → experts table (a buffer, not a parameter) instead of
  // the top-k of the router scores; the router GEMM still runs (its scores weight the experts).
  int hash_layers = 0;
};

// Manifold-constrained hyper-connections (mHC; DeepSeek-V4, transformers
// DeepseekV4HyperConnection): the residual is `streams` parallel copies of the hidden state. Before
// the attention and before the FFN of every layer a module flattens the streams (weightless
// RMSNorm), projects them (fn: (2 + n)·n × n·h, base (2 + n)·n, 3 scales) to the pre (n), post (n)
// and comb (n × n, made doubly stochastic by sinkhorn_iters Sinkhorn-Knopp iterations) weights,
// collapses the streams into the block's input with pre and writes post ⊗ output + combᵀ · streams
// back. A final head (n × n·h, n, 1) collapses them before the last norm. streams 0: plain
// residual.
struct HyperConnectionSpec {
  int streams = 0;
  int sinkhorn_iters = 0;
};

// One residual block of a hybrid model (Megatron-Core's hybrid_layer_pattern / Hugging Face
// hybrid_override_pattern, one character each): its own pre-norm, then one mixer or one FFN.
enum class BlockKind {
  kMamba,      // 'M': Mamba-2 mixer
  kAttention,  // '*': self-attention (AttentionSpec)
  kMlp,        // '-': dense MLP (ffn, mlp)
  kMoe,        // 'E': MoE FFN (MoeSpec)
  kGdn,        // 'G': Gated DeltaNet mixer (GdnSpec; Megatron's hybrid symbol)
};

// Mamba-2 mixer (Dao & Gu 2024; Megatron-Core MambaMixer). d_inner = heads · head_dim (MCore's
// rule, not expand · hidden). in_proj: hidden → [z (d_inner), x (d_inner), B, C (groups · state
// each), dt (heads)]; causal depthwise conv1d of width conv_kernel over x, B, C (with bias);
// SSD chunked scan (chunk tokens per chunk); per-head A_log, D, dt_bias; gated RMSNorm over
// d_inner (norm(y · silu(z)), groups of d_inner / groups); out_proj: d_inner → hidden.
struct MambaSpec {
  int heads = 0;
  int head_dim = 0;
  int state = 0;   // d_state (N)
  int groups = 0;  // B / C groups (G)
  int conv_kernel = 0;
  int chunk = 0;  // SSD chunk length
  int64_t d_inner() const { return int64_t{heads} * head_dim; }
  int64_t conv_channels() const { return d_inner() + 2 * int64_t{groups} * state; }
  int64_t in_proj_width() const { return 2 * d_inner() + 2 * int64_t{groups} * state + heads; }
};

// Gated DeltaNet mixer (Yang, Kautz & Hatamizadeh 2024; Megatron-Core megatron/core/ssm/
// gated_delta_net.py, Qwen3-Next). in_proj: hidden → [q, k (qk_heads · qk_head_dim each),
// v, z gate (v_heads · v_head_dim each), β, α (v_heads each)]; causal depthwise conv1d of width
// conv_kernel over q, k, v (no bias) + SiLU; L2-normalised q, k repeated to the v heads; the
// chunked gated delta rule (chunk tokens); per-head A_log, dt_bias; RMSNorm over v_head_dim
// gated by silu(z); out_proj: v_heads · v_head_dim → hidden.
//
// kda: Kimi Delta Attention instead (Kimi Linear; FLA's chunk_kda, the layout of the checkpoint's
// KimiDeltaAttention as NVIDIA NeMo Automodel's kimi_linear model reads it): one head count and
// head dim for q, k, v; q_proj, k_proj, v_proj; the per-channel decay from a low-rank f_a_proj
// (hidden → head_dim) · f_b_proj (head_dim → qk_dim); b_proj (hidden → heads, β); the output gate
// from a low-rank g_a_proj · g_b_proj (head_dim → v_dim) in place of z; A_log per head and
// dt_bias per channel; the same convs (no bias), gated RMSNorm (sigmoid) and o_proj.
struct GdnSpec {
  int qk_heads = 0;
  int v_heads = 0;
  int qk_head_dim = 0;
  int v_head_dim = 0;
  int conv_kernel = 0;
  int chunk = 0;
  bool kda = false;
  int64_t qk_dim() const { return int64_t{qk_heads} * qk_head_dim; }
  int64_t v_dim() const { return int64_t{v_heads} * v_head_dim; }
  int64_t conv_channels() const { return 2 * qk_dim() + v_dim(); }
  // The GEMMs from the hidden state: GDN's fused in_proj [q, k, v, z, β, α]; KDA's q, k, v,
  // f_a, g_a (head_dim each) and b.
  int64_t in_proj_width() const {
    return kda ? 2 * qk_dim() + v_dim() + 2 * int64_t{v_head_dim} + v_heads
               : 2 * qk_dim() + 2 * v_dim() + 2 * int64_t{v_heads};
  }
  // KDA's low-rank up projections f_b (head_dim → qk_dim) and g_b (head_dim → v_dim): weights.
  int64_t low_rank_up() const { return kda ? int64_t{v_head_dim} * (qk_dim() + v_dim()) : 0; }
};

// A published feature the struct cannot express, kept so reports can say what is left out.
// Impact "none": no parameters and no GEMM FLOPs; "small": below 0.1 % of parameters and FLOPs.
// (A "material" feature makes the loader reject the model.)
struct UnmodelledFeature {
  std::string feature;
  std::string impact;
  std::string note;
};

struct ModelSpec {
  std::string name;                  // canonical id (file name under workloads/models/)
  std::string display_name;          // as published ("Llama 3.1 405B")
  std::vector<std::string> aliases;  // names used in validation/*.csv
  std::string source;                // URL of the published config (first of `sources`)
  std::vector<std::string> sources;  // every source the numbers were read from
  int layers = 0;
  int64_t hidden = 0;
  int64_t ffn = 0;  // dense FFN width
  int64_t vocab = 0;
  // Vocabulary NVIDIA's NeMo benchmark scripts set (NullTokenizer), when it differs or is
  // published; 0 = not known. Used only by FlopConvention::benchmark_vocab.
  int64_t benchmark_vocab = 0;
  MlpKind mlp = MlpKind::kGated;
  NormKind norm = NormKind::kRms;
  int norms_per_layer = 2;   // 2 = pre-norm (attention, MLP); 4 = sandwich (Grok-1)
  bool linear_bias = false;  // bias on the output projection, MLP / expert matrices and router
  bool tied_embeddings = false;
  bool learned_positions = false;  // learned absolute position table (max_seq_len × hidden)
  int max_seq_len = 0;
  AttentionSpec attention;
  MoeSpec moe;
  // Hybrid models: one BlockKind per layer (then `layers` == blocks.size() and every layer is a
  // single block with one norm); empty = every layer is attention followed by MLP or MoE.
  std::vector<BlockKind> blocks;
  MambaSpec mamba;
  GdnSpec gdn;
  HyperConnectionSpec hyper;
  int mtp_layers = 0;  // multi-token-prediction modules (DeepSeek-V3)
  // Published totals, for checking the closed forms (0 = not published).
  double published_total_params = 0;
  double published_active_params = 0;
  std::vector<UnmodelledFeature> unmodelled;
  std::string file;  // where it was read from ("" for inline definitions)
  // For a model imported from a Hugging Face config.json: "FILE:/num_local_experts", the key
  // that set moe.experts (named by errors about the expert count); "" otherwise.
  std::string experts_field;
};

bool is_hybrid(const ModelSpec& m);
// Kind of block of layer `i` of a hybrid model (layers past the decoder, the MTP modules, are
// not blocks: they are attention + MoE / MLP layers).
BlockKind block_kind(const ModelSpec& m, int i);
// Whether layer `i` runs attention / an FFN (both for a non-hybrid layer).
bool has_attention(const ModelSpec& m, int i);
bool has_ffn(const ModelSpec& m, int i);
// Parses a hybrid pattern ("M-M*-E..."; characters M * - E). Returns false and the 0-based
// offset of the first character it does not understand in `*bad` (the length of the text when
// it is empty or ends inside an MTP suffix) otherwise.
bool parse_block_pattern(const std::string& text, std::vector<BlockKind>* out, size_t* bad);
std::string block_pattern_text(const std::vector<BlockKind>& blocks);

// Mamba-2 mixer parameters of one layer (in/out projections, conv weight + bias, A_log, D,
// dt_bias, gated-norm weight); the pre-norm is LayerParams::norms.
int64_t mamba_params(const ModelSpec& m);
// Forward FLOPs per token of one Mamba-2 mixer as executed: projections 2·h·(in + out), the
// depthwise conv 2·K·conv_channels, and the SSD chunked scan (ssd_scan_flops_per_token).
double mamba_forward_flops_per_token(const ModelSpec& m);
// SSD (state-space dual) chunked scan, forward, per token, as mamba_ssm's kernels execute it:
// 2·Q·G·N + 4·d_inner·N + Q·d_inner (Q = chunk; term list in model_hybrid.cpp).
double ssd_scan_flops_per_token(const MambaSpec& s);
// Megatron's model-FLOP term of one Mamba-2 layer, forward, per token (training.py, see
// workloads/sources/hybrid-models.md): 2·h·(2·d + 2·G·N + heads) + 7·d·N + 2·d·h with Megatron's
// hard-coded d = 2·hidden (not heads · head_dim); conv and gated norm not counted.
double megatron_mamba_flops_per_token(const ModelSpec& m);
// Its projection part, 2 FLOPs per in_proj / out_proj weight: 2·h·(2·d + 2·G·N + heads) + 2·d·h.
double megatron_mamba_projection_flops_per_token(const ModelSpec& m);

// Gated DeltaNet mixer parameters of one layer (in/out projections, conv weight, A_log,
// dt_bias, the gated norm's weight; KDA: its low-rank f / g up projections and per-channel
// dt_bias); the pre-norm is LayerParams::norms.
int64_t gdn_params(const ModelSpec& m);
// Chunked gated delta rule, forward, per token (all v heads), as the FLA chunk kernels run it:
// per head 6·dk·dv (state pass and output from the state) + 1.5·C·(dk + dv) (intra-chunk
// products) + C² (the triangular solve); the Kimi Linear report's per-head count (Eq. 13).
double gdn_chunk_flops_per_token(const GdnSpec& s);
// Forward FLOPs per token of one Gated DeltaNet mixer as executed: projections
// 2·h·(in + v_dim), the conv 2·K·conv_channels and the chunk kernel.
double gdn_forward_flops_per_token(const ModelSpec& m);
// Megatron's model-FLOP term of one GDN layer, forward, per token (Megatron-Bridge
// flop_utils.py gdn_layer_flops): 2·[h·(2q + 2v + 2·Hv) + K·(2q + v) + 4·Hv·dv² + h·v].
// KDA (no Megatron term): the same form over its projections, 2·[h·in_proj_width +
// low_rank_up + K·(2q + v) + 4·Hv·dv² + h·v].
double megatron_gdn_flops_per_token(const ModelSpec& m);
// Its projection part, 2 FLOPs per in_proj / out_proj (KDA: and low-rank up) weight:
// 2·[h·in_proj_width + low_rank_up + h·v].
double megatron_gdn_projection_flops_per_token(const ModelSpec& m);

// DeepSeek sparse attention: the lightning indexer's parameters of one layer (wq_b from the
// q latent, wk, the key's LayerNorm, weights_proj), 0 for dense attention.
int64_t indexer_params(const ModelSpec& m);
// DeepSeek sparse attention over MLA (DeepSeek-V3.2); DeepSeek-V4's CSA indexer is not this.
bool is_sparse_attention(const ModelSpec& m);

// DeepSeek-V4 (model_v4.cpp): shared-KV attention with compressed history and mHC residuals.
bool is_compressed_attention(const ModelSpec& m);
// Compression ratio of layer `layer` (decoder layers, then the MTP modules); 0 = window only.
int compress_ratio(const ModelSpec& m, int layer);
// The compressor of layer `layer` (kv_proj, gate_proj, position bias, RMSNorm; CSA: twice as
// wide, plus the lightning indexer's compressor, q_b, weights_proj), 0 for a window-only layer.
int64_t compressor_params(const ModelSpec& m, int layer);
// mHC: the two hyper-connection modules of one layer (fn, base, scale each), and the final head.
int64_t hyper_connection_params(const ModelSpec& m);
int64_t hyper_head_params(const ModelSpec& m);
// Average keys a query's core attention reads under DSA at sequence length s: top-k of the
// causal prefix, k − k²/(2s) for s > k (as a window of k), s/2 otherwise.
double sparse_attended_keys(int topk, double s);

bool is_moe(const ModelSpec& m);
// Whether decoder layer `i` (0-based) has an MoE FFN.
bool is_moe_layer(const ModelSpec& m, int i);
int moe_layer_count(const ModelSpec& m);

// Parameter counts (elements, not bytes).
struct LayerParams {
  // Token mixer: q/k/v/o projections (+ MLA low-rank matrices, biases), or a Mamba-2 mixer.
  // DeepSeek-V4: the layer's compressor and indexer are counted here too.
  int64_t attention = 0;
  int64_t norms = 0;           // layer norms in the layer (and mHC's two mixing modules)
  int64_t dense_mlp = 0;       // dense FFN (0 on MoE layers)
  int64_t router = 0;          // MoE router (+ LatentMoE's two latent projections)
  int64_t routed_experts = 0;  // all routed experts of the layer
  int64_t shared_experts = 0;  // all shared experts of the layer
  int64_t one_expert = 0;      // one routed expert
  int64_t total() const {
    return attention + norms + dense_mlp + router + routed_experts + shared_experts;
  }
};
LayerParams layer_params(const ModelSpec& m, int layer);
int64_t embedding_params(const ModelSpec& m);  // input embedding
int64_t output_params(const ModelSpec& m);     // LM head (0 when tied) + final norm (+ mHC head)
int64_t mtp_params(const ModelSpec& m);        // MTP modules (sharing embedding and head)
int64_t total_params(const ModelSpec& m);      // everything, MTP excluded
int64_t active_params(const ModelSpec& m);     // per token: top_k routed + shared experts

// Model FLOPs of one training step per token (forward + backward = 3× forward matmul FLOPs,
// attention included, causal masking halving the score/context matmuls), the figure
// "model TFLOP/s/GPU" and MFU are computed from. Formula documented in README ("Metrics").
//
// It is Megatron-LM / Megatron-Bridge's num_floating_point_operations: 6 · (weights of the
// q/k/v/o projections, of the dense MLP or the top_k routed plus shared experts, of the LM head)
// + 6 · s/2 · (heads · (qk_dim + v_dim)) per layer for the causal score and context matmuls
// + per MTP module one MoE/dense decoder layer, the 2h×h projection and another LM head.
// Not counted (as in Megatron): embedding lookup, router GEMM, norms, biases, element-wise ops.
// Windowed layers (sliding / chunked) count the keys actually attended.
// Checked against every row of validation/nemo_performance_summary.csv (tests).
struct FlopConvention {
  // true: each query attends to s/2 keys on average (Megatron-Bridge, NeMo 25.09+). false:
  // count all s keys, as NeMo 2.0's llama / gpt3 / nemotron / mixtral formulas did (24.07–25.07).
  bool causal = true;
  // Use benchmark_vocab (when set) for the LM head, as NVIDIA's benchmark scripts do.
  bool benchmark_vocab = false;
  // Packed sequences (workload/task.h): attention within documents of this many tokens
  // (packed_attended_keys); 0 = the whole sequence is one document.
  int document_tokens = 0;
  // FLOPs per weight per token: 6 (forward, dgrad, wgrad); 4 with frozen weights (LoRA: no
  // wgrad). Applies to the decoder weights and the LM head, not to attention.
  double weight_flops = 6.0;
};
double model_flops_per_token(const ModelSpec& m, int seq_len, const FlopConvention& c);
double model_flops_per_token(const ModelSpec& m, int seq_len);  // default FlopConvention
// DeepSeek-V4: the attention part of layer `layer`'s training FLOPs per token (projections,
// compressor, indexer, window and compressed cores), Megatron-Bridge's dsv4_hybrid terms.
double compressed_attention_flops(const ModelSpec& m, int layer, int seq_len,
                                  const FlopConvention& c);

// Average number of keys one query attends to in layer `layer` at sequence length s (causal,
// continuous: s/2 for full attention; window w: w - w²/(2s) when s > w; chunk c: by chunks).
double attended_keys(const ModelSpec& m, int layer, int seq_len);
// The same, averaged over the tokens of a packed sequence whose documents (task.h
// packed_documents) hold document_tokens tokens each: Σ_d d · attended_keys(d) / seq_len.
double packed_attended_keys(const ModelSpec& m, int layer, int seq_len, int document_tokens);

}  // namespace fleetsim
