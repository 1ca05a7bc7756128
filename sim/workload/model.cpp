// Closed-form parameter and FLOP counts of a transformer LLM (dense or MoE) described by
// ModelSpec.
//
// Parameters: every weight matrix, bias and norm vector of the published architecture (see
// model.h for what each flag adds). FLOPs: Megatron-LM's num_floating_point_operations
// (megatron/training/training.py; Megatron-Bridge's flop_utils.py uses the same terms), i.e. 6
// FLOPs per weight per token for forward + backward, plus the causal attention score and context
// matmuls. The formula was derived from and checked against the "model TFLOP/s/GPU" and
// "tokens/s/GPU" pairs of validation/nemo_performance_summary.csv (see the tests).
#include "workload/model.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "workload/task.h"

namespace fleetsim {
namespace {

int64_t mlp_matrices(const ModelSpec& m) {
  return m.mlp == MlpKind::kGated ? 3 : 2;
}

// Weights (no biases) of an MLP of width `ffn`.
int64_t mlp_weights(const ModelSpec& m, int64_t ffn) {
  return mlp_matrices(m) * m.hidden * ffn;
}

// Weights and biases of an MLP of width `ffn`.
int64_t mlp_params(const ModelSpec& m, int64_t ffn) {
  if (ffn == 0) return 0;
  int64_t p = mlp_weights(m, ffn);
  if (m.linear_bias) p += (mlp_matrices(m) - 1) * ffn + m.hidden;
  return p;
}

// Weights of one routed expert of width `ffn` (its input width is the latent of a LatentMoE).
int64_t expert_weights(const ModelSpec& m, int64_t ffn) {
  return mlp_matrices(m) * m.moe.expert_width(m.hidden) * ffn;
}

// LatentMoE's hidden -> latent and latent -> hidden projections (weights only).
int64_t latent_weights(const ModelSpec& m) {
  return 2 * m.hidden * m.moe.latent;
}

// Attention projection weights (no biases, no norms): the GEMM operands.
int64_t attention_weights(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  const int64_t h = m.hidden;
  if (a.kind == AttentionKind::kSharedKv) {
    // q_a, q_b; the one KV head; o_a (each group's heads · head_dim / g → o_lora), o_b.
    const int64_t hd = int64_t{a.heads} * a.head_dim;
    return h * a.q_lora_rank + int64_t{a.q_lora_rank} * hd + h * a.head_dim + hd * a.o_lora_rank +
           int64_t{a.o_groups} * a.o_lora_rank * h;
  }
  if (a.kind == AttentionKind::kMla) {
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const int64_t q = a.q_lora_rank > 0 ? h * a.q_lora_rank + int64_t{a.q_lora_rank} * a.heads * qk
                                        : h * a.heads * qk;
    const int64_t kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) +
                       int64_t{a.kv_lora_rank} * a.heads * (a.qk_nope_head_dim + a.v_head_dim);
    const int64_t o = int64_t{a.heads} * a.v_head_dim * h;
    return q + kv + o;
  }
  const int64_t qw = int64_t{a.heads} * a.head_dim;
  const int64_t kvw = int64_t{a.kv_heads} * a.head_dim;
  const int64_t gate = a.output_gate ? qw : 0;  // q_proj's second half: the output gate
  return h * (qw + gate + 2 * kvw) + qw * h;
}

// The lightning indexer's GEMM weights (DSA): wq_b, wk and weights_proj.
int64_t indexer_weights(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  if (!is_sparse_attention(m)) return 0;  // (DeepSeek-V4's CSA indexer: compressor_params)
  const int64_t q_in = a.q_lora_rank > 0 ? a.q_lora_rank : m.hidden;
  const int64_t hd = int64_t{a.indexer_heads} * a.indexer_head_dim;
  return q_in * hd + m.hidden * a.indexer_head_dim + m.hidden * a.indexer_heads;
}

// Mean of s/2 (causal, dense) over the documents of a packed sequence: the keys the DSA
// indexer scores, which is dense whatever the top-k.
double dense_causal_keys(int seq_len, int document_tokens) {
  if (document_tokens <= 0 || document_tokens >= seq_len) return seq_len / 2.0;
  double sum = 0;
  for (const DocumentGroup& g : packed_documents(seq_len, document_tokens))
    sum += static_cast<double>(g.count) * g.tokens * (g.tokens / 2.0);
  return sum / seq_len;
}

int64_t norm_vector(const ModelSpec& m) {
  return m.norm == NormKind::kLayer ? 2 : 1;
}

// Query-key and value widths summed over heads, for the score and context matmuls.
int64_t qk_width(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  if (a.kind == AttentionKind::kMla)
    return int64_t{a.heads} * (a.qk_nope_head_dim + a.qk_rope_head_dim);
  return int64_t{a.heads} * a.head_dim;
}
int64_t v_width(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  return int64_t{a.heads} * (a.kind == AttentionKind::kMla ? a.v_head_dim : a.head_dim);
}

// DeepSeek sparse attention beyond the MLA projections, training FLOPs per token (Megatron-
// Bridge's DSA terms, workloads/sources/hybrid-models.md): the sparse core in MLA's absorbed MQA
// form, 2·keys·heads·(2·kv_lora_rank + qk_rope_head_dim), and the indexer's dense causal scoring
// 2·keys_dense·H_I·(d_I + 1), both × 3 (forward, backward); the indexer projections
// × (weight_flops − 2): its inputs are detached (no dgrad), it is trained by its KL loss (wgrad).
// With frozen weights (LoRA, weight_flops < 6) nothing the KL loss reaches trains, so the
// indexer has no backward: its scoring counts once (forward), its projections 2 per weight.
double dsa_flops(const ModelSpec& m, double keys, int seq_len, const FlopConvention& c) {
  const AttentionSpec& a = m.attention;
  double dense = dense_causal_keys(seq_len, c.document_tokens);
  if (!c.causal) dense *= 2.0;
  const double core = 2.0 * keys * a.heads * (2.0 * a.kv_lora_rank + a.qk_rope_head_dim);
  const double score = 2.0 * dense * a.indexer_heads * (a.indexer_head_dim + 1.0);
  const double score_passes = c.weight_flops < 6.0 ? 1.0 : 3.0;
  return 3.0 * core + score_passes * score +
         (c.weight_flops - 2.0) * static_cast<double>(indexer_weights(m));
}

// Training FLOPs per token of decoder layer `i` (weights and attention core).
// A hybrid model's layer is one block: Mamba-2 / GDN (Megatron's term × 3, its projections at
// weight_flops / 2 per FLOP of the forward: 4 for LoRA's frozen weights), attention or an FFN.
double layer_flops(const ModelSpec& m, int i, int seq_len, const FlopConvention& c) {
  const double frozen = (6.0 - c.weight_flops) / 2.0;  // 0 unless weights are frozen
  if (is_hybrid(m) && i < m.layers && block_kind(m, i) == BlockKind::kMamba)
    return 3.0 * megatron_mamba_flops_per_token(m) -
           frozen * megatron_mamba_projection_flops_per_token(m);
  if (is_hybrid(m) && i < m.layers && block_kind(m, i) == BlockKind::kGdn)
    return 3.0 * megatron_gdn_flops_per_token(m) -
           frozen * megatron_gdn_projection_flops_per_token(m);
  const bool attn = has_attention(m, i);
  const bool v4 = is_compressed_attention(m);
  double w = attn && !v4 ? static_cast<double>(attention_weights(m)) : 0.0;
  if (!has_ffn(m, i)) {
    // attention block only
  } else if (is_moe_layer(m, i)) {
    // (Megatron's LatentMoE term: the routed experts at the latent width, plus 2·h·latent)
    w += static_cast<double>(m.moe.top_k * expert_weights(m, m.moe.expert_ffn) +
                             m.moe.shared_experts * mlp_weights(m, m.moe.shared_expert_ffn) +
                             latent_weights(m));
  } else {
    w += static_cast<double>(mlp_weights(m, m.ffn));
  }
  if (v4) return c.weight_flops * w + compressed_attention_flops(m, i, seq_len, c);
  double keys = attn ? packed_attended_keys(m, i, seq_len, c.document_tokens) : 0.0;
  if (!c.causal) keys *= 2.0;
  if (attn && is_sparse_attention(m)) return c.weight_flops * w + dsa_flops(m, keys, seq_len, c);
  const double core = 2.0 * keys * static_cast<double>(qk_width(m) + v_width(m));
  return c.weight_flops * w + 3.0 * core;
}

int64_t attention_params(const ModelSpec& m);
void moe_params(const ModelSpec& m, LayerParams* p);

}  // namespace

bool is_moe(const ModelSpec& m) {
  return m.moe.experts > 0;
}

bool is_moe_layer(const ModelSpec& m, int i) {
  if (is_hybrid(m) && i < m.layers) return block_kind(m, i) == BlockKind::kMoe;
  if (!is_moe(m) || i < m.moe.first_k_dense) return false;
  const int freq = std::max(1, m.moe.layer_freq);
  return (i - m.moe.first_k_dense + 1) % freq == 0;
}

int moe_layer_count(const ModelSpec& m) {
  int n = 0;
  for (int i = 0; i < m.layers; ++i)
    n += is_moe_layer(m, i) ? 1 : 0;
  return n;
}

LayerParams layer_params(const ModelSpec& m, int layer) {
  FLEETSIM_ASSERT(layer >= 0 && layer < std::max(1, m.layers) + m.mtp_layers);
  const int64_t h = m.hidden;
  LayerParams p;
  if (is_hybrid(m) && layer < m.layers) {
    // One block: its pre-norm and one mixer or FFN.
    p.norms = norm_vector(m) * h;
    switch (block_kind(m, layer)) {
      case BlockKind::kMamba:
        p.attention = mamba_params(m);
        return p;
      case BlockKind::kGdn:
        p.attention = gdn_params(m);
        return p;
      case BlockKind::kMlp:
        p.dense_mlp = mlp_params(m, m.ffn);
        return p;
      case BlockKind::kMoe:
        moe_params(m, &p);
        return p;
      case BlockKind::kAttention:
        break;
    }
    p.attention = attention_params(m);
    return p;
  }
  p.attention = attention_params(m) + compressor_params(m, layer);
  p.norms = m.norms_per_layer * norm_vector(m) * h + hyper_connection_params(m);
  // Layers past the decoder (MTP modules) take the shape of an MoE layer in MoE models.
  const bool moe = layer >= m.layers ? is_moe(m) : is_moe_layer(m, layer);
  if (moe) {
    moe_params(m, &p);
  } else {
    p.dense_mlp = mlp_params(m, m.ffn);
  }
  return p;
}

namespace {

int64_t attention_params(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  const int64_t h = m.hidden;
  int64_t n = attention_weights(m);
  if (a.kind == AttentionKind::kSharedKv) {
    n += a.q_lora_rank + a.head_dim + (a.sinks ? a.heads : 0);  // q latent and kv norms, sinks
  } else if (a.kind == AttentionKind::kMla) {
    n += a.kv_lora_rank + a.q_lora_rank;  // RMSNorm on the q and kv latents
  } else {
    if (a.qkv_bias) n += int64_t{a.heads + 2 * a.kv_heads} * a.head_dim;
    if (a.qk_norm)
      n += (a.qk_norm_all_heads ? int64_t{a.heads} + a.kv_heads : 2) * int64_t{a.head_dim};
  }
  if (m.linear_bias) n += h;  // output projection bias
  return n + indexer_params(m);
}

void moe_params(const ModelSpec& m, LayerParams* p) {
  const int64_t h = m.hidden;
  p->router = h * m.moe.experts + (m.linear_bias ? m.moe.experts : 0);
  if (m.moe.latent > 0) p->router += latent_weights(m) + (m.linear_bias ? m.moe.latent + h : 0);
  const int64_t d = m.moe.expert_width(h), f = m.moe.expert_ffn;
  p->one_expert = expert_weights(m, f) + (m.linear_bias ? (mlp_matrices(m) - 1) * f + d : 0);
  p->routed_experts = p->one_expert * m.moe.experts;
  p->shared_experts = mlp_params(m, m.moe.shared_expert_ffn) * m.moe.shared_experts;
  if (m.moe.shared_expert_gate && m.moe.shared_experts > 0) p->shared_experts += h;
}

}  // namespace

int64_t indexer_params(const ModelSpec& m) {
  const int64_t w = indexer_weights(m);
  return w > 0 ? w + 2 * int64_t{m.attention.indexer_head_dim} : 0;  // + the key's LayerNorm
}

bool is_sparse_attention(const ModelSpec& m) {
  return m.attention.sparse_topk > 0 && m.attention.kind == AttentionKind::kMla;
}

double sparse_attended_keys(int topk, double s) {
  const double k = topk;
  return s > k ? k - k * k / (2.0 * s) : s / 2.0;
}

int64_t embedding_params(const ModelSpec& m) {
  return m.vocab * m.hidden + (m.learned_positions ? int64_t{m.max_seq_len} * m.hidden : 0);
}

int64_t output_params(const ModelSpec& m) {
  return norm_vector(m) * m.hidden + (m.tied_embeddings ? 0 : m.vocab * m.hidden) +
         hyper_head_params(m);
}

int64_t mtp_params(const ModelSpec& m) {
  // DeepSeek-V3 MTP module: RMSNorm of the hidden state and of the next token's embedding,
  // the 2h -> h projection, one decoder layer and the final norm; embedding and head shared.
  if (m.mtp_layers == 0) return 0;
  const int64_t h = m.hidden;
  const int64_t one =
      2 * norm_vector(m) * h + 2 * h * h + layer_params(m, m.layers).total() + norm_vector(m) * h;
  return one * m.mtp_layers;
}

int64_t total_params(const ModelSpec& m) {
  int64_t n = embedding_params(m) + output_params(m);
  for (int i = 0; i < m.layers; ++i)
    n += layer_params(m, i).total();
  return n;
}

int64_t active_params(const ModelSpec& m) {
  int64_t n = embedding_params(m) + output_params(m);
  for (int i = 0; i < m.layers; ++i) {
    const LayerParams p = layer_params(m, i);
    n += p.attention + p.norms + p.dense_mlp + p.router + p.shared_experts +
         (p.routed_experts > 0 ? p.one_expert * m.moe.top_k : 0);
  }
  return n;
}

double attended_keys(const ModelSpec& m, int layer, int seq_len) {
  const double s = seq_len;
  const AttentionSpec& a = m.attention;
  if (is_sparse_attention(m)) return sparse_attended_keys(a.sparse_topk, s);
  const bool windowed =
      a.sliding_window > 0 && a.window_pattern > 0 && (layer % a.window_pattern) < a.window_layers;
  if (!windowed) return s / 2.0;
  const double w = a.sliding_window;
  if (s <= w) return s / 2.0;
  if (a.window_kind == WindowKind::kSliding) return w - w * w / (2.0 * s);
  // Chunked: full chunks of w tokens (w/2 keys on average) and a last partial chunk of r tokens.
  const double full = std::floor(s / w);
  const double r = s - full * w;
  return (full * w * w / 2.0 + r * r / 2.0) / s;
}

double packed_attended_keys(const ModelSpec& m, int layer, int seq_len, int document_tokens) {
  if (document_tokens <= 0 || document_tokens >= seq_len) return attended_keys(m, layer, seq_len);
  double sum = 0;
  for (const DocumentGroup& g : packed_documents(seq_len, document_tokens))
    sum += static_cast<double>(g.count) * g.tokens * attended_keys(m, layer, g.tokens);
  return sum / seq_len;
}

double model_flops_per_token(const ModelSpec& m, int seq_len, const FlopConvention& c) {
  double f = 0;
  for (int i = 0; i < m.layers; ++i)
    f += layer_flops(m, i, seq_len, c);
  const int64_t vocab = c.benchmark_vocab && m.benchmark_vocab > 0 ? m.benchmark_vocab : m.vocab;
  const double head = c.weight_flops * static_cast<double>(m.hidden) * static_cast<double>(vocab);
  f += head;
  if (m.mtp_layers > 0) {
    // One decoder layer shaped like the model's last layer, the 2h x h projection and another
    // LM head per MTP module (Megatron counts the MTP layer among the transformer layers).
    // (a hybrid model's MTP layer is attention + FFN: the layer past the decoder)
    const int last = is_hybrid(m) ? m.layers : m.layers - 1;
    const double h = static_cast<double>(m.hidden);
    if (!is_compressed_attention(m)) {
      f += m.mtp_layers * (layer_flops(m, last, seq_len, c) + c.weight_flops * 2.0 * h * h + head);
    } else {
      // DeepSeek-V4's MTP modules have compress ratios of their own (layers past the decoder).
      for (int j = 0; j < m.mtp_layers; ++j)
        f += layer_flops(m, m.layers + j, seq_len, c) + c.weight_flops * 2.0 * h * h + head;
    }
  }
  return f;
}

double model_flops_per_token(const ModelSpec& m, int seq_len) {
  return model_flops_per_token(m, seq_len, FlopConvention{});
}

}  // namespace fleetsim
