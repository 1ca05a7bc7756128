// DeepSeek sparse attention as Megatron-Core's DSAttention / DSAIndexer run it
// (megatron/core/transformer/experimental_attention_variant/dsa.py), with fused kernels:
//   indexer: wq_b [q latent → H_I·d_I], wk [h → d_I], LayerNorm of the key, RoPE on the first
//   qk_rope_head_dim dims, Hadamard rotation of q and k, weights_proj [h → H_I]; causal scoring
//   Σ_h w_h·ReLU(q_h·k) over every previous token (DeepGEMM fp8_mqa_logits' shape: a GEMM of
//   tokens·H_I × keys × d_I), top-k per query;
//   core: MLA in MQA mode over the k selected latent rows (TileLang sparse MLA rates);
//   KL loss target: the core's scores over the selected rows, summed over heads and TP
//   all-reduced (the sparse loss), against the indexer's softmax.
// The indexer's linears are duplicated on every TP rank (parallel_mode "duplicated"): each rank
// runs them on the whole micro-batch, after an all-gather of x and of the q latent under
// sequence parallelism. Its inputs are detached: backward has no dgrad for its projections,
// only their weight gradients, the scoring's backward and the element-wise passes; with LoRA's
// frozen weights nothing in the indexer trains and it has no backward.
#include "workload/internal/sparse_attention_layer.h"

#include <cmath>

#include "workload/step.h"

namespace fleetsim::step_internal {

namespace {

// The indexer's projections, key norm, RoPE and rotation, causal scoring and its fp32 logits
// (forward: the top-k read; backward: the softmax gradient) on this rank's whole micro-batch.
void add_indexer_scoring(const ModelSpec& m, const ParallelConfig& p, const ComputeModel& c,
                         bool bwd, BlockBuilder& b) {
  const AttentionSpec& a = m.attention;
  const DType gd = gemm_dtype(p.precision);
  const double T = static_cast<double>(p.micro_batch) * p.seq_len;
  const double h = static_cast<double>(m.hidden);
  const double q_in = a.q_lora_rank > 0 ? a.q_lora_rank : h;
  const double HI = a.indexer_heads, dI = a.indexer_head_dim;
  const double keys_dense = static_cast<double>(p.seq_len) / 2.0;  // causal: every previous token
  const double pass = bwd ? 3.0 : 2.0;
  auto mem = [&](double bytes) { b.kernel(c.memory_bound(bytes)); };
  auto gemm = [&](double M, double N, double K, DType d) {
    return c.gemm(std::llround(M), std::llround(N), std::llround(K), d);
  };
  // Projections: forward, or (inputs detached) the weight gradients only.
  for (const auto& [n, k] : {std::pair<double, double>{HI * dI, q_in}, {dI, h}, {HI, h}}) {
    b.module();
    const double fl = 2.0 * T * n * k;
    b.module_kernel(bwd ? gemm(k, n, T, gd) : gemm(T, n, k, gd), fl);
  }
  mem(T * dI * 2.0 * pass);                     // key LayerNorm
  mem(T * (HI + 1.0) * dI * 2.0 * 2.0 * pass);  // RoPE and Hadamard rotation of q, k
  // Scoring (and in backward its gradients to q, k and the head weights: two such products).
  const double score_fl = 2.0 * T * keys_dense * HI * dI;
  const Time score = gemm(T * HI, keys_dense, dI, DType::kBf16);
  b.kernel(bwd ? score + score : score, bwd ? 2.0 * score_fl : score_fl);
  mem(T * keys_dense * 4.0 * (bwd ? 3.0 : 1.0));  // fp32 logits: top-k read (bwd: softmax grad)
  if (!bwd) mem(T * a.sparse_topk * 4.0);         // the top-k indices
}

}  // namespace

Time add_sparse_attention(const ModelSpec& m, const ParallelConfig& p, const ComputeModel& c,
                          const LayerCostModel::CommFn& comm, bool bwd, BlockBuilder& b) {
  const AttentionSpec& a = m.attention;
  const double T = static_cast<double>(p.micro_batch) * p.seq_len;  // cp = 1 (step_check)
  const double S = p.seq_len;
  const double h = static_cast<double>(m.hidden);
  const double q_in = a.q_lora_rank > 0 ? a.q_lora_rank : h;
  auto mem = [&](double bytes) { b.kernel(c.memory_bound(bytes)); };
  const bool sp = p.sequence_parallel && p.tp > 1;
  if (sp && !bwd) {
    // gather_from_sequence_parallel_region of x and of the q latent for the indexer.
    for (double width : {h, q_in}) {
      const double bytes = T * width * 2.0;
      const Time t = comm(Dim::kTp, CollOp::kAllGather, bytes);
      b.tp(t, Time::zero(), {Dim::kTp, CollOp::kAllGather, bytes, Time::zero()});
    }
  }
  // LoRA freezes the indexer's weights and its inputs are detached: nothing in it trains, so
  // it has no backward at all (its KL loss is still computed in the forward).
  if (!(bwd && p.task.frozen_base())) add_indexer_scoring(m, p, c, bwd, b);
  // Sparse core attention.
  SparseMlaShape sh;
  sh.batch = p.micro_batch;
  sh.seq = p.seq_len;
  sh.heads = a.heads / p.tp;
  sh.topk = a.sparse_topk;
  sh.kv_lora_rank = a.kv_lora_rank;
  sh.rope_dim = a.qk_rope_head_dim;
  const double keys = sparse_attended_keys(a.sparse_topk, S);
  const double core_fl = 2.0 * T * sh.heads * keys * (2.0 * a.kv_lora_rank + a.qk_rope_head_dim);
  b.module();
  const Time core = c.sparse_mla(sh, bwd);
  b.module_kernel(core, bwd ? 2.5 * core_fl : core_fl);
  if (!bwd) {
    // KL target: the core's q·k over the selected rows (its score half, at the core's rate),
    // summed over this rank's heads, all-reduced over TP, against the indexer's softmax.
    const double frac =
        (a.kv_lora_rank + a.qk_rope_head_dim) / (2.0 * a.kv_lora_rank + a.qk_rope_head_dim);
    b.kernel(Time::from_ps(std::llround(static_cast<double>(core.ps()) * frac)), frac * core_fl);
    const double bytes = T * a.sparse_topk * 4.0;
    if (p.tp > 1) {
      const Time t = comm(Dim::kTp, CollOp::kAllReduce, bytes);
      b.tp(t, Time::zero(), {Dim::kTp, CollOp::kAllReduce, bytes, Time::zero()});
    }
    mem(bytes * 3.0);  // softmaxes and the KL terms
  } else if (!p.task.frozen_base()) {
    mem(T * a.sparse_topk * 4.0 * 3.0);  // KL loss gradient to the indexer's scores
  }
  return core;
}

}  // namespace fleetsim::step_internal
