// DeepSeek-V4 (model.h: AttentionKind::kSharedKv, AttentionSpec::compress_ratios,
// HyperConnectionSpec): closed-form parameters of the per-layer compressors, the lightning
// indexer of CSA layers and the mHC modules, and Megatron-Bridge's dsv4_hybrid model FLOPs.
// Sources: transformers models/deepseek_v4/modeling_deepseek_v4.py (DeepseekV4HCACompressor,
// DeepseekV4CSACompressor, DeepseekV4Indexer, DeepseekV4HyperConnection, DeepseekV4HyperHead:
// the parameter layouts), Megatron-Bridge training/utils/flop_utils.py @067f987d (the
// experimental_attention_variant == "dsv4_hybrid" branch: the FLOP terms).
#include <algorithm>

#include "core/error.h"
#include "workload/model.h"
#include "workload/task.h"

namespace fleetsim {
namespace {

// Σ L² / T over the documents of a packed sequence (s for one document of s tokens): the
// factor Megatron-Bridge's effective_seqlen_squared_sum gives the quadratic terms per token.
double squared_length_per_token(int seq_len, int document_tokens) {
  if (document_tokens <= 0 || document_tokens >= seq_len) return seq_len;
  double sum = 0;
  for (const DocumentGroup& g : packed_documents(seq_len, document_tokens))
    sum += static_cast<double>(g.count) * g.tokens * g.tokens;
  return sum / seq_len;
}

bool is_csa(const ModelSpec& m, int ratio) {
  return ratio > 0 && ratio == m.attention.csa_ratio;
}

}  // namespace

bool is_compressed_attention(const ModelSpec& m) {
  return m.attention.kind == AttentionKind::kSharedKv;
}

int compress_ratio(const ModelSpec& m, int layer) {
  const std::vector<int>& r = m.attention.compress_ratios;
  FLEETSIM_ASSERT(layer >= 0);
  return static_cast<size_t>(layer) < r.size() ? r[static_cast<size_t>(layer)] : 0;
}

int64_t compressor_params(const ModelSpec& m, int layer) {
  const AttentionSpec& a = m.attention;
  const int ratio = compress_ratio(m, layer);
  if (!is_compressed_attention(m) || ratio == 0) return 0;
  const int64_t h = m.hidden, d = a.head_dim;
  if (!is_csa(m, ratio)) return 2 * h * d + ratio * d + d;  // kv_proj, gate_proj, bias, norm
  // CSA: both series (2·d wide), then the indexer's own compressor at indexer_head_dim, its q_b
  // from the q latent and weights_proj.
  const int64_t di = a.indexer_head_dim, hi = a.indexer_heads;
  const int64_t main = 2 * h * 2 * d + ratio * 2 * d + d;
  const int64_t indexer =
      2 * h * 2 * di + ratio * 2 * di + di + int64_t{a.q_lora_rank} * hi * di + h * hi;
  return main + indexer;
}

int64_t hyper_connection_params(const ModelSpec& m) {
  const int64_t n = m.hyper.streams;
  if (n == 0) return 0;
  const int64_t mixes = (2 + n) * n;              // pre n, post n, comb n·n
  return 2 * (mixes * n * m.hidden + mixes + 3);  // attn_hc and ffn_hc: fn, base, scale
}

int64_t hyper_head_params(const ModelSpec& m) {
  const int64_t n = m.hyper.streams;
  return n == 0 ? 0 : n * n * m.hidden + n + 1;  // hc_fn, hc_base, hc_scale
}

// Megatron-Bridge dsv4_hybrid, per token and layer (weights × weight_flops, the rest × 3 · 2):
//   q  q_lora · (h + heads · head_dim + 1)     kv  h · d + d     o  heads · d · o_lora + g · o_lora
//   · h window attention          2 · heads · W · d                                (every layer)
//   HCA (ratio r)             compressor 2 · h · d;  core heads · d / r per Σ L² / T
//   CSA (ratio r)             compressor 4 · h · d;  indexer 4 · h · d_I + q_lora · H_I · d_I + h ·
//   H_I;
//                             core 2 · heads · c · d with c = k' · (1 − r · k' / (2 s)),
//                             k' = min(top-k, s / r);  scoring H_I · d_I / r per Σ L² / T
// The window and the CSA selection use the configured sequence length s, as Bridge does.
double compressed_attention_flops(const ModelSpec& m, int layer, int seq_len,
                                  const FlopConvention& c) {
  const AttentionSpec& a = m.attention;
  const double h = static_cast<double>(m.hidden), d = a.head_dim, n = a.heads, ql = a.q_lora_rank;
  const double q = ql * (h + n * d + 1.0);
  const double kv = h * d + d;
  const double o = n * d * a.o_lora_rank + static_cast<double>(a.o_groups) * a.o_lora_rank * h;
  double weights = q + kv + o;
  double linear = 2.0 * n * a.sliding_window * d;
  double quadratic = 0;
  const int ratio = compress_ratio(m, layer);
  if (is_csa(m, ratio)) {
    const double di = a.indexer_head_dim, hi = a.indexer_heads;
    const double k = std::min<double>(a.sparse_topk, seq_len / ratio);
    const double selected = k * (1.0 - ratio * k / (2.0 * seq_len));
    weights += 4.0 * h * d + 4.0 * h * di + ql * hi * di + h * hi;
    linear += 2.0 * n * selected * d;
    quadratic = hi * di / ratio;
  } else if (ratio > 0) {
    weights += 2.0 * h * d;
    quadratic = n * d / ratio;
  }
  const double sq = squared_length_per_token(seq_len, c.document_tokens);
  return c.weight_flops * weights + 6.0 * (linear + sq * quadratic);
}

}  // namespace fleetsim
