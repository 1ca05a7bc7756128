// Activation memory of one decoder layer and the micro-batches a pipeline stage holds (see
// memory.h for the contract).
//
// Per layer per micro-batch (Korthikanti et al. 2022, Sec. 4), bytes per token of the rank's
// s/cp tokens, bf16 tensors (2 B), 1-byte dropout masks:
//   norms      2h per norm input (norms_per_layer of them; 2 → 4h)
//   attn_in    g·h   input of the q/k/v projections (norm output)
//   q, k       2·(heads·dqk) + 2·(kv_heads·dqk)  (MLA: + 2·(q_lora + kv_lora + rope) latents)
//   v          2·(kv_heads·dv)                   (MLA: 2·(heads·dv), V is up-projected)
//   qk_norm    per-head RMSNorm on q and k (Qwen3): the norms keep their inputs, q and k
//              before the norm (2·(heads + kv_heads)·dqk), and an fp32 1/rms per head
//              (4·(heads + kv_heads)); Megatron-Core's SelfAttention.get_query_key_value_tensors
//              applies q_layernorm / k_layernorm to the split projection output, so the normed
//              q and k that reach the attention kernel are new tensors beside them
//   core       unfused: softmax output 2·a·s, + dropout mask a·s and dropout output 2·a·s with
//              dropout (5as); flash: log-sum-exp 4·a
//   o          2·(heads·dv)  the attention output (kept by flash attention and, in bf16, also
//              the input of the output projection); FP8 adds its g·(heads·dv) copy
//   mlp_in     g·h   input of the MLP / router / shared experts (norm output)
//   mlp        fc1 output kept by the activation (2·ffn, gated 2·2ffn) + the activation's
//              output, input of fc2 (g·ffn)
//   moe        per routed token copy: permuted input g·h + fc1 output + activation output +
//              the fp32 routing probability (4 B) the weighted activation keeps (Megatron-Core
//              >= 0.13 applies the probabilities between fc1 and fc2), or, with
//              moe_probs_in_unpermute (Megatron-Core <= 0.12), the 2h expert output kept by the
//              unpermute for the probabilities' gradient; + shared experts' mlp term + 4·E
//              router logits (fp32)
//   masks      h after attention and h after the MLP, with dropout
//   recompute of the whole MoE layer (--recompute-modules moe: Megatron-Core moe_layer.py
//   checkpoints router, dispatch, shared and routed experts and combine): none of the moe
//   terms, and the layer's input kept in bf16 (2h) by the checkpoint in place of mlp_in
// g = bytes per element of a saved GEMM input: 2 in bf16; with FP8 recipes Transformer Engine's
// Linear / GroupedLinear save the quantized input they need for the weight gradient (te
// module/linear.py, grouped_linear.py: the column-wise FP8 copy): 1 B (per-tensor scaling),
// 1 + 1/32 (MXFP8's E8M0 scale per 32, FP8 block scaling's fp32 scale per 128), 0.5 + 1/16
// (NVFP4, FP8 scale per 16).
// GPT (heads·dh = h, kv_heads = heads, ffn = 4h, plain, dropout, unfused, bf16):
//   4h + 2h + 4h + 2h + 5as + 2h + 2h + 16h + 2h = 34h + 5as, Korthikanti's sbh(34 + 5as/h).
// Tensor parallelism divides everything by tp with sequence parallelism; without it the norm
// inputs, attn_in, mlp_in and the masks stay whole: sbh(10 + 24/t + 5as/(ht)). Expert
// activations follow the tokens (/tp under SP) times the busiest EP rank's token factor.
// Hybrid blocks (one norm each) keep only their part: attention terms (attn_in, q, k, v, core,
// o, one mask) or FFN terms (mlp_in, mlp / moe, one mask), or a Mamba-2 / Gated DeltaNet
// mixer's (mamba_32nds, gdn_32nds).
// Context parallelism makes s → s/cp. Selective recompute drops what the recomputed modules
// rebuild; offloaded modules' saved tensors leave the GPU.
#include <algorithm>
#include <string>

#include "workload/memory.h"

namespace fleetsim {
namespace {

// Bytes per element of a saved GEMM input, in 32nds.
int64_t gemm_input_32nds(PrecisionRecipe r) {
  switch (r) {
    case PrecisionRecipe::kBf16:
      return 64;
    case PrecisionRecipe::kFp8Delayed:
    case PrecisionRecipe::kFp8Current:
      return 32;
    case PrecisionRecipe::kFp8Block:
    case PrecisionRecipe::kMxfp8:
      return 33;
    case PrecisionRecipe::kNvfp4:
      return 18;
  }
  return 64;
}

// Saved tensors of a Mamba-2 mixer per token, in 32nds of a byte, split over TP (heads):
// conv1d input x, B, C (the in_proj output, 2 B) and its SiLU output (the SSD's x, B, C), z for
// the gate, dt (bf16 in, fp32 after softplus) and the scan's fp32 dA_cumsum, the scan output y
// (gated norm input) and the norm output (out_proj input, a GEMM input); mamba_ssm's
// mamba_chunk_scan_combined saves no chunk states (it recomputes them in backward).
int64_t mamba_32nds(const MambaSpec& s, int64_t g32) {
  return 64 * 2 * s.conv_channels() + 64 * s.d_inner() /*z*/ + (64 + 128 + 128) * s.heads +
         64 * s.d_inner() /*y*/ + g32 * s.d_inner();
}

// Saved tensors of a Gated DeltaNet mixer per token, in 32nds of a byte, split over TP (heads):
// the conv1d input q, k, v (in_proj output, 2 B) and the L2-norm inputs q, k (conv + SiLU
// output); the delta-rule kernel's inputs q, k repeated to the v heads, v, the fp32 gate g, β
// and α, and its per-chunk solved matrix A (bf16, chunk values per head); the gate z, the
// kernel output (gated-norm input) and the norm output (out_proj input, a GEMM input).
// KDA: no repeat (one head count); the fp32 per-channel decay and the bf16 β, the low-rank
// f_a / g_a outputs (f_b / g_b inputs), the gate g_b's output in place of z.
int64_t gdn_32nds(const GdnSpec& s, int64_t g32) {
  if (s.kda)
    return 64 * s.conv_channels() + 64 * 2 * s.qk_dim() + 64 * (2 * s.qk_dim() + s.v_dim()) +
           128 * s.qk_dim() + 64 * int64_t{s.v_heads} + 64 * 2 * int64_t{s.v_head_dim} +
           64 * int64_t{s.v_heads} * s.chunk + 64 * s.v_dim() /*gate*/ + 64 * s.v_dim() /*o*/ +
           g32 * s.v_dim();
  const int64_t rep_qk = 2 * int64_t{s.v_heads} * s.qk_head_dim;
  return 64 * s.conv_channels() + 64 * 2 * s.qk_dim() + 64 * (rep_qk + s.v_dim()) +
         (128 + 64 + 128) * s.v_heads + 64 * int64_t{s.v_heads} * s.chunk + 64 * s.v_dim() /*z*/ +
         64 * s.v_dim() /*o*/ + g32 * s.v_dim();
}

// The attention terms of one layer (q, k, v, o, core), 32nds of a byte per token, split over TP.
int64_t attention_32nds(const ModelSpec& m, const ParallelConfig& p, const MemoryOptions& o,
                        Recompute recompute, int64_t g32) {
  const AttentionSpec& a = m.attention;
  const int64_t s = p.seq_len / p.cp;
  const bool fp8 = p.precision != PrecisionRecipe::kBf16;
  const int64_t mask = o.dropout ? 1 : 0;
  const bool selective = recompute == Recompute::kSelective;
  auto recomputed = [&](unsigned module) { return selective && (p.recompute_modules & module); };
  const auto off = [&](unsigned module) { return (o.offload_modules & module) != 0; };
  int64_t split = 0;
  const int64_t o_width = a.kind == AttentionKind::kMla ? int64_t{a.heads} * a.v_head_dim
                                                        : int64_t{a.heads} * a.head_dim;
  const bool core_off = off(kOffloadCoreAttn);
  if (a.kind == AttentionKind::kMla) {
    const int64_t qk = int64_t{a.heads} * (a.qk_nope_head_dim + a.qk_rope_head_dim);
    // Latents, q, k, v (inputs of the fused attention). With mla_up_proj recomputed, q, k and
    // v are rebuilt from the latents.
    split += 64 * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim);
    if (!recomputed(kRecomputeMlaUpProj) && !core_off) split += 64 * (2 * qk + o_width);
  } else {
    const int64_t qw = int64_t{a.heads} * a.head_dim;
    const int64_t kvw = int64_t{a.kv_heads} * a.head_dim;
    if (!core_off) split += 64 * (qw + kvw) + 64 * kvw;
    // QK-norm: the norms' inputs (q and k before the norm) and their fp32 1/rms per head.
    if (a.qk_norm) split += 64 * (qw + kvw) + 32 * 4 * (int64_t{a.heads} + a.kv_heads);
  }
  // Gated attention: the gate (q_proj's second half) and the ungated attention output, kept by
  // the sigmoid-gate product for its backward.
  if (a.output_gate) split += 64 * 2 * o_width;
  // DeepSeek sparse attention: the indexer's q, k and head weights (bf16) and the top-k indices
  // (int32) the sparse kernel's backward reads; the indexer is duplicated on every TP rank, so
  // its share is tp times what splitting would leave.
  if (a.sparse_topk > 0) {
    const int64_t idx = 64 * (int64_t{a.indexer_heads} * a.indexer_head_dim + a.indexer_head_dim +
                              a.indexer_heads) +
                        128 * int64_t{a.sparse_topk};
    split += int64_t{p.tp} * idx;
  }
  // The attention output: kept by the attention kernel, and (the same tensor in bf16, an FP8
  // copy otherwise) by the output projection.
  if (fp8) {
    split += (core_off ? 0 : 64 * o_width) + (off(kOffloadAttnProj) ? 0 : g32 * o_width);
  } else if (!(core_off && off(kOffloadAttnProj))) {
    split += 64 * o_width;
  }
  if (!core_off &&
      (recompute == Recompute::kNone || (selective && !recomputed(kRecomputeCoreAttn)))) {
    split +=
        o.flash_attention ? 32 * 4 * int64_t{a.heads} : 32 * (2 + 3 * mask) * int64_t{a.heads} * s;
  }
  return split;
}

// The MLP / MoE terms of one layer, 32nds of a byte per token, split over TP.
int64_t ffn_32nds(const ModelSpec& m, const ParallelConfig& p, const MemoryOptions& o,
                  Recompute recompute, bool moe, int64_t g32) {
  const int64_t h = m.hidden;
  const bool selective = recompute == Recompute::kSelective;
  auto recomputed = [&](unsigned module) { return selective && (p.recompute_modules & module); };
  const auto off = [&](unsigned module) { return (o.offload_modules & module) != 0; };
  int64_t split = 0;
  // MLP: fc1 output kept by the activation (2 B per width, twice for gated) + fc2's input.
  const int64_t fc1_out = m.mlp == MlpKind::kGated ? 128 : 64;
  const bool mlp_recomputed = recomputed(kRecomputeMlp);
  if (moe && recomputed(kRecomputeMoe)) return 0;  // only the layer's input, counted as mlp_in
  if (moe) {
    const int64_t f = m.moe.expert_ffn;
    // One routed copy: permuted input, fc1 output, activation output (recomputed with
    // moe_act), and the probability kept by the weighted activation or (older Megatron-Core)
    // the expert output kept by the unpermute.
    // A routed copy is latent-wide in a LatentMoE (moe.latent), whose fc2_latent_proj also
    // keeps its input, the combined latent output (g·latent per token).
    const int64_t d = m.moe.expert_width(h);
    const int64_t probs_term = o.moe_probs_in_unpermute ? 64 * d : 32 * 4;
    const int64_t copy = (off(kOffloadExpertFc1) ? 0 : g32 * d) +
                         (off(kOffloadMoeAct) ? 0 : fc1_out * f) +
                         (recomputed(kRecomputeMoeAct) ? 0 : g32 * f) + probs_term;
    const int64_t copies_x1000 =
        static_cast<int64_t>(static_cast<double>(m.moe.top_k) * o.moe_token_factor * 1000 + 0.5);
    split += copy * copies_x1000 / 1000 +
             (recomputed(kRecomputeSharedExperts)
                  ? 0
                  : int64_t{m.moe.shared_experts} * (fc1_out + g32) * m.moe.shared_expert_ffn) +
             32 * 4 * int64_t{m.moe.experts} + g32 * m.moe.latent;
  } else {
    split += mlp_recomputed ? 0 : (fc1_out + g32) * m.ffn;
  }
  return split;
}

}  // namespace

bool parse_offload_module(const std::string& s, unsigned* bit) {
  static const std::pair<const char*, unsigned> kNames[] = {
      {"attn_norm", kOffloadAttnNorm},   {"core_attn", kOffloadCoreAttn},
      {"attn_proj", kOffloadAttnProj},   {"mlp_norm", kOffloadMlpNorm},
      {"expert_fc1", kOffloadExpertFc1}, {"moe_act", kOffloadMoeAct}};
  for (const auto& [name, b] : kNames) {
    if (s == name) {
      *bit = b;
      return true;
    }
  }
  return false;
}

std::vector<int> stage_layers(const ModelSpec& m, const ParallelConfig& p, int stage) {
  const int blocks = p.pp * p.vp;
  const int base = m.layers / blocks;
  const int extra = m.layers % blocks;
  std::vector<int> out;
  for (int c = 0; c < p.vp; ++c) {
    const int block = c * p.pp + stage;
    const int start = block * base + std::min(block, extra);
    const int n = base + (block < extra ? 1 : 0);
    for (int i = start; i < start + n; ++i)
      out.push_back(i);
  }
  return out;
}

std::vector<int> embedding_loss_split(int layers, int pp, int vp, bool embedding, bool loss) {
  const int V = pp * vp;
  const int total = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  if (V < 1 || total % V != 0) return {};
  std::vector<int> out(V, total / V);
  if (embedding) --out.front();
  if (loss) --out.back();
  if (out.front() < 0 || out.back() < 0) return {};
  return out;
}

std::vector<int> in_flight_per_chunk(const ParallelConfig& p, int stage) {
  const int64_t mb = p.global_batch > 0 ? std::max(1, p.micro_batches()) : int64_t{1} << 30;
  std::vector<int> out(p.vp, 0);
  if (p.vp <= 1) {
    out[0] = static_cast<int>(std::min<int64_t>(p.pp - stage, mb));
    return out;
  }
  const int64_t warmup = int64_t{p.pp - stage - 1} * 2 + int64_t{p.vp - 1} * p.pp;
  const int64_t passes = std::min<int64_t>(warmup + 1, mb * p.vp);
  for (int64_t k = 0; k < passes; ++k)
    ++out[(k / p.pp) % p.vp];
  return out;
}

int64_t layer_activation_bytes(const ModelSpec& m, int layer, const ParallelConfig& p,
                               const MemoryOptions& o, Recompute recompute) {
  const int64_t h = m.hidden;
  const int64_t tokens = int64_t{p.seq_len / p.cp} * p.micro_batch;
  const int64_t mask = o.dropout ? 1 : 0;
  const bool sp = p.sequence_parallel || p.tp == 1;
  const int64_t g32 = gemm_input_32nds(p.precision);  // saved GEMM input, 32nds of a byte
  const auto off = [&](unsigned module) { return (o.offload_modules & module) != 0; };

  const bool moe = layer >= m.layers ? is_moe(m) : is_moe_layer(m, layer);
  const bool attn = has_attention(m, layer), ffn = has_ffn(m, layer);
  const bool gdn = is_hybrid(m) && layer < m.layers && block_kind(m, layer) == BlockKind::kGdn;
  const bool mamba = !attn && !ffn && !gdn;
  const int norm_count = is_hybrid(m) && layer < m.layers ? 1 : m.norms_per_layer;
  // Selective recompute of a module (Megatron's --recompute-modules): what it recomputes in
  // backward is not stored, only its input (which another term already counts).
  const bool selective = recompute == Recompute::kSelective;
  auto recomputed = [&](unsigned module) { return selective && (p.recompute_modules & module); };
  // Per-token bytes in 32nds, kept whole on every TP rank without SP, and split over TP.
  int64_t norms = 0;
  if (!recomputed(kRecomputeLayernorm)) {
    for (int n = 0; n < norm_count; ++n) {
      const unsigned first = !attn && ffn ? kOffloadMlpNorm : kOffloadAttnNorm;
      const bool offloaded = (n == 0 && off(first)) || (n == 1 && off(kOffloadMlpNorm));
      norms += offloaded ? 0 : 64 * h;
    }
  }
  const bool mixer = attn || mamba || gdn;
  const int64_t residuals = (mixer ? 1 : 0) + (ffn ? 1 : 0);
  // A checkpointed MoE layer keeps its bf16 input (the pre-MLP norm's output) itself.
  const int64_t mlp_in32 = moe && recomputed(kRecomputeMoe) ? 64 : g32;
  int64_t replicated = norms + (mixer ? g32 * h : 0) /*attn_in*/ + (ffn ? mlp_in32 * h : 0) +
                       32 * mask * residuals * h /*masks*/;
  int64_t split = mamba ? mamba_32nds(m.mamba, g32) : gdn ? gdn_32nds(m.gdn, g32) : 0;
  if (attn) split += attention_32nds(m, p, o, recompute, g32);
  if (ffn) split += ffn_32nds(m, p, o, recompute, moe, g32);
  const int64_t per_token_32 = sp ? (replicated + split) / p.tp : replicated + split / p.tp;
  return per_token_32 * tokens / 32;
}

}  // namespace fleetsim
