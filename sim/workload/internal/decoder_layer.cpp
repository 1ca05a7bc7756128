#include "workload/internal/decoder_layer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "workload/internal/block_builder.h"
#include "workload/internal/gated_deltanet_layer.h"
#include "workload/internal/mamba_layer.h"
#include "workload/internal/moe_layer.h"
#include "workload/internal/sparse_attention_layer.h"
#include "workload/step.h"

namespace fleetsim::step_internal {
namespace {

// The kernels and collectives of one decoder layer's forward or backward pass on one rank
// (LayerCostModel::build_layer): attention block, then dense MLP or MoE block.
class LayerBuilder {
 public:
  LayerBuilder(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
               const ComputeModel& c, const LayerCostModel::CommFn& comm,
               const LayerCostModel::EpFn& ep, int layer, bool backward);
  Block build();

 private:
  bool recompute(unsigned module) const { return selective_ && (p_.recompute_modules & module); }
  void mem(double bytes) { b_.kernel(c_.memory_bound(bytes)); }
  void quant(double elements);
  Time linear(double rows, double n, double k, bool bwd, unsigned lora_target = 0);
  void lora_adapter(double rows, double n, double k, bool bwd, unsigned target);
  Time tp_coll(CollOp op, double bytes) const {
    return p_.tp > 1 ? comm_(Dim::kTp, op, bytes) : Time::zero();
  }
  void ag(Time hide);
  void rs(Time hide);
  void attention_block(bool bwd);
  void qkv_split(bool bwd);
  void norm_grad_tail(double width);
  // One RMSNorm over the hidden states (forward: read and write; backward: the gradient, its
  // dgamma tail, and the recomputed forward under the layernorm recompute module).
  void rms_norm(bool bwd);
  Time mla_projections(bool bwd);
  Time core_attention(bool backward) const;
  void cp_exchange(Time at, bool bwd);
  // `module`: the recompute module that rebuilds it (mlp for dense layers, shared_experts).
  std::pair<Time, Time> dense_mlp(double ffn, bool bwd, double rows,
                                  unsigned module = kRecomputeMlp);
  void mlp_block(bool bwd);
  void moe_block(bool bwd);

  const ModelSpec& m_;
  const ParallelConfig& p_;
  const FrameworkOptions& fw_;
  const ComputeModel& c_;
  const LayerCostModel::CommFn& comm_;
  const LayerCostModel::EpFn& ep_;
  const AttentionSpec& a_;
  const bool backward_;
  const DType gd_;
  const double tp_;
  const int64_t T_;  // tokens per rank
  const bool sp_;
  const double Tsp_;
  const double h_;
  const bool moe_;
  const bool attn_, ffn_;  // hybrid blocks run one of the two
  const bool windowed_;
  const bool full_recompute_;
  const bool selective_;
  const double act_bytes_;  // full activation, BF16
  const bool frozen_;       // LoRA: base weights frozen, no wgrad (workload/task.h)
  // Documents of one packed sequence (task.h): attention runs within each.
  const std::vector<DocumentGroup> docs_;
  BlockBuilder b_;
  // Attention on this rank: heads, KV heads, head dimensions, the kernel's shape and FLOPs.
  int heads_ = 0, kvh_ = 0, dqk_ = 0, dv_ = 0;
  AttentionShape as_;
  double attn_flops_fwd_ = 0;
};

LayerBuilder::LayerBuilder(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                           const ComputeModel& c, const LayerCostModel::CommFn& comm,
                           const LayerCostModel::EpFn& ep, int layer, bool backward)
    : m_(m),
      p_(p),
      fw_(fw),
      c_(c),
      comm_(comm),
      ep_(ep),
      a_(m.attention),
      backward_(backward),
      gd_(gemm_dtype(p.precision)),
      tp_(p.tp),
      T_(static_cast<int64_t>(p.micro_batch) * p.seq_len / p.cp),
      sp_(p.sequence_parallel && p.tp > 1),
      Tsp_(sp_ ? static_cast<double>(T_) / tp_ : static_cast<double>(T_)),
      h_(static_cast<double>(m.hidden)),
      moe_(is_moe_layer(m, layer)),
      attn_(has_attention(m, layer)),
      ffn_(has_ffn(m, layer)),
      windowed_(a_.sliding_window > 0 && a_.window_pattern > 0 &&
                (layer % a_.window_pattern) < a_.window_layers),
      full_recompute_(
          backward && p.recompute == Recompute::kFull &&
          (p.recompute_layers == 0 || (layer % std::max(1, m.layers / p.pp)) < p.recompute_layers)),
      selective_(backward && p.recompute == Recompute::kSelective),
      act_bytes_(static_cast<double>(T_) * h_ * 2.0),
      frozen_(p.task.frozen_base()),
      docs_(packed_documents(
          p.seq_len, p.task.kind == TrainingTask::kPretrain ? 0 : p.task.mean_document_tokens)),
      b_(backward ? "layer backward" : "layer forward", fw) {
  heads_ = a_.heads / p.tp;
  kvh_ = a_.kind == AttentionKind::kMla ? heads_ : std::max(1, a_.kv_heads / p.tp);
  dqk_ = a_.kind == AttentionKind::kMla ? a_.qk_nope_head_dim + a_.qk_rope_head_dim : a_.head_dim;
  dv_ = a_.kind == AttentionKind::kMla ? a_.v_head_dim : a_.head_dim;
  as_.batch = p.micro_batch;
  as_.seq_q = p.seq_len;
  as_.seq_kv = p.seq_len;
  as_.heads = heads_;
  as_.kv_heads = kvh_;
  as_.head_dim_qk = dqk_;
  as_.head_dim_v = dv_;
  as_.causal = true;
  as_.window = windowed_ ? a_.sliding_window : 0;
  for (const DocumentGroup& g : docs_) {
    const double s = static_cast<double>(g.tokens);
    const double span = windowed_ ? std::min<double>(a_.sliding_window, s) : s / 2.0;
    attn_flops_fwd_ += 2.0 * p.micro_batch * g.count * heads_ * s * span * (dqk_ + dv_);
  }
}

Block LayerBuilder::build() {
  if (!backward_) {
    if (attn_) attention_block(false);
    if (ffn_) mlp_block(false);
  } else {
    if (full_recompute_) {
      if (attn_) attention_block(false);
      if (ffn_) mlp_block(false);
    }
    if (ffn_) mlp_block(true);
    if (attn_) attention_block(true);
  }
  return b_.finish();
}

void LayerBuilder::quant(double elements) {
  quantize_kernels(b_, c_, p_.precision, elements);
}

// One GEMM of the forward pass [T × k]·[k × n]; in backward its dgrad and wgrad (no wgrad for
// frozen LoRA base weights), plus the LoRA adapter when the layer is one of its targets. One
// Transformer Engine module call on the host, launching its quantisation and GEMM kernels.
Time LayerBuilder::linear(double rows, double n, double k, bool bwd, unsigned lora_target) {
  b_.module();
  const int64_t M = static_cast<int64_t>(std::llround(rows));
  const int64_t N = static_cast<int64_t>(std::llround(n));
  const int64_t K = static_cast<int64_t>(std::llround(k));
  if (!bwd) {
    quant(rows * k);
    const Time t = c_.gemm(M, N, K, gd_);
    b_.module_kernel(t, 2.0 * rows * n * k);
    lora_adapter(rows, n, k, false, lora_target);
    return t;
  }
  quant(rows * n);
  const Time dgrad = c_.gemm(M, K, N, gd_);
  b_.module_kernel(dgrad, 2.0 * rows * n * k);
  if (!frozen_) b_.module_kernel(c_.gemm(K, N, M, gd_), 2.0 * rows * n * k);  // wgrad
  lora_adapter(rows, n, k, bwd, lora_target);
  return dgrad;
}

// LoRA adapter of a targeted linear layer [k → n] on this rank, in BF16: forward x·A (k → r)
// then ·B (r → n); backward the dgrad and wgrad of B and of A.
void LayerBuilder::lora_adapter(double rows, double n, double k, bool bwd, unsigned target) {
  if (!frozen_ || !(p_.task.lora_targets & target)) return;
  const double r = p_.task.lora_rank;
  const int64_t M = static_cast<int64_t>(std::llround(rows));
  const int64_t N = static_cast<int64_t>(std::llround(n));
  const int64_t K = static_cast<int64_t>(std::llround(k));
  const int64_t R = p_.task.lora_rank;
  if (!bwd) {
    b_.kernel(c_.gemm(M, R, K, DType::kBf16), 2.0 * rows * r * k);
    b_.kernel(c_.gemm(M, N, R, DType::kBf16), 2.0 * rows * n * r);
    return;
  }
  b_.kernel(c_.gemm(M, R, N, DType::kBf16), 2.0 * rows * n * r);  // B dgrad
  b_.kernel(c_.gemm(R, N, M, DType::kBf16), 2.0 * rows * n * r);  // B wgrad
  b_.kernel(c_.gemm(M, K, R, DType::kBf16), 2.0 * rows * r * k);  // A dgrad
  b_.kernel(c_.gemm(K, R, M, DType::kBf16), 2.0 * rows * r * k);  // A wgrad
}

// Sequence-parallel all-gather of the activation, hidden behind `hide` with TP overlap.
void LayerBuilder::ag(Time hide) {
  if (p_.tp == 1) return;
  if (sp_) {
    b_.tp(tp_coll(CollOp::kAllGather, act_bytes_), fw_.tp_comm_overlap ? hide : Time::zero(),
          {Dim::kTp, CollOp::kAllGather, act_bytes_});
  }
}

// Reduce-scatter (sequence parallel) or all-reduce of the activation.
void LayerBuilder::rs(Time hide) {
  if (p_.tp == 1) return;
  const CollOp op = sp_ ? CollOp::kReduceScatter : CollOp::kAllReduce;
  b_.tp(tp_coll(op, act_bytes_), fw_.tp_comm_overlap ? hide : Time::zero(),
        {Dim::kTp, op, act_bytes_});
}

void LayerBuilder::attention_block(bool bwd) {
  const double T = static_cast<double>(T_);
  b_.begin_graph(kGraphAttn);  // Transformer Engine CUDA-graph scope "attn"
  rms_norm(bwd);               // input RMSNorm
  // Gated attention (output_gate): q_proj also emits the gate, heads · head_dim wide.
  const double gate = a_.output_gate ? 1.0 : 0.0;
  const Time first_gemm =
      a_.kind == AttentionKind::kMla
          ? mla_projections(bwd)
          : linear(T, (heads_ * (1.0 + gate) + 2.0 * kvh_) * a_.head_dim, h_, bwd, kLoraQkv);
  if (!bwd) ag(first_gemm);
  if (a_.kind == AttentionKind::kGqa) {
    qkv_split(bwd);
    // Fused RoPE (Transformer Engine's fused_apply_rotary_pos_emb, apply_rope_fusion on in the
    // recipes): one kernel for q, one for k (attention.py applies it to each).
    mem(T * heads_ * dqk_ * 2.0 * 2.0);
    mem(T * kvh_ * dqk_ * 2.0 * 2.0);
  } else {
    mem(T * (heads_ + kvh_) * dqk_ * 2.0 * 2.0);  // RoPE on q and k
  }
  if (is_sparse_attention(m_)) {
    // DeepSeek sparse attention: the indexer and the top-k core in place of dense attention.
    add_sparse_attention(m_, p_, c_, comm_, bwd, b_);
  } else {
    Time at = core_attention(bwd);
    if (bwd && recompute(kRecomputeCoreAttn)) at += core_attention(false);
    b_.module();  // DotProductAttention
    b_.module_kernel(at, attn_flops_fwd_ * (bwd ? 2.5 : 1.0) / p_.cp);
    if (p_.cp > 1) cp_exchange(at, bwd);
  }
  // sigmoid(gate) ⊙ attention output: read both, write the product (backward: and the grads).
  if (gate > 0) mem(T * heads_ * dv_ * 2.0 * (bwd ? 5.0 : 3.0));
  const Time proj = linear(T, h_, heads_ * static_cast<double>(dv_), bwd, kLoraProj);
  if (!bwd) rs(proj);
  if (bwd) {
    // Backward of the AG is a RS of the input gradient (overlapped with the first GEMM's
    // wgrad), of the RS an AG (before the output projection's dgrad), plus the AG that
    // re-gathers the sequence-parallel input for the weight gradient (base or adapter).
    rs(first_gemm);
    ag(proj);
    if (!frozen_ || (p_.task.lora_targets & kLoraQkv)) ag(first_gemm);
  }
  if (m_.norms_per_layer == 4) rms_norm(bwd);  // sandwich: post-attention RMSNorm (Gemma)
  mem(Tsp_ * h_ * 2.0 * 3.0);                  // residual add
  b_.end_graph();
}

// Between the fused QKV GEMM and RoPE (Megatron-Core SelfAttention.get_query_key_value_tensors,
// attention.py, core_v0.16.0 L1371-1470): the [s, b, groups, (q-per-group + 2) · head_dim] output
// is split into q, k, v views (TE SplitAlongDim), then q is reshaped to [s, b, heads, head_dim];
// with more than one query head per group that reshape cannot be a view of the split (the group
// stride is (q-per-group + 2) · head_dim), so it is a copy kernel. qk_norm (Qwen3's q_layernorm and
// k_layernorm) adds two TENorm modules, one RMSNorm kernel each over head_dim (over all the rank's
// q or k heads with qk_norm_all_heads, OLMo 2's: the same elements, a wider weight). Backward: each
// norm's backward (rmsnorm_bwd kernel and its dgamma finalize, norm_grad_tail), and
// SplitAlongDim.backward concatenating the q, k and v gradients into the QKV gradient (torch.cat
// unless they already share one buffer in the split's layout, which the attention kernel's separate
// dq / dk / dv do not: Transformer Engine transformer_engine/pytorch/utils.py, v2.9,
// SplitAlongDim.backward).
void LayerBuilder::qkv_split(bool bwd) {
  const double T = static_cast<double>(T_);
  const double q = T * heads_ * dqk_ * 2.0, k = T * kvh_ * dqk_ * 2.0;
  if (a_.qk_norm) {
    for (const auto& [x, n] : {std::pair<double, int>{q, heads_}, {k, kvh_}}) {
      b_.module();
      b_.module_kernel(c_.memory_bound(x * (bwd ? 3.0 : 2.0)));
      if (bwd) norm_grad_tail(a_.qk_norm_all_heads ? static_cast<double>(n) * dqk_ : dqk_);
    }
  }
  if (!bwd && heads_ > kvh_) mem(2.0 * q);  // the q reshape copy
  if (bwd) mem(2.0 * (q + 2.0 * k));        // the gradients' cat
}

void LayerBuilder::rms_norm(bool bwd) {
  mem(Tsp_ * h_ * 2.0 * (bwd ? 3.0 : 2.0));
  if (bwd) norm_grad_tail(h_);
  if (bwd && recompute(kRecomputeLayernorm)) mem(Tsp_ * h_ * 2.0 * 2.0);
}

// The end of one TE norm's backward and of its weight's gradient: Transformer Engine's
// rmsnorm_bwd_finalize_tuned_kernel reducing the CTAs' dgamma partials, launched after every
// rmsnorm_bwd kernel (common/normalization/rmsnorm/rmsnorm_bwd_semi_cuda_kernel.cu L48-69, v2.9),
// then Megatron's DDP backward hook adding the gamma's gradient into its main_grad
// (distributed/distributed_data_parallel.py _make_backward_post_hook, param.main_grad.add_(
// param.grad), core_v0.16.0 L440; only TE's GEMM weights write main_grad in the GEMM). `width`
// FP32 values each: both take the kernel floor at these sizes.
void LayerBuilder::norm_grad_tail(double width) {
  b_.module_kernel(c_.memory_bound(width * 4.0 * 2.0));
  if (!frozen_) mem(width * 4.0 * 3.0);
}

// MLA's q / kv down- and up-projections; returns the first GEMM's time (which hides the AG).
Time LayerBuilder::mla_projections(bool bwd) {
  const double T = static_cast<double>(T_);
  const double qd = a_.q_lora_rank > 0 ? a_.q_lora_rank : 0;
  if (bwd && recompute(kRecomputeMlaUpProj)) {  // q / kv up-projections again
    if (qd > 0) linear(T, heads_ * static_cast<double>(dqk_), qd, false);
    linear(T, heads_ * static_cast<double>(a_.qk_nope_head_dim + a_.v_head_dim), a_.kv_lora_rank,
           false);
  }
  Time first_gemm;
  if (qd > 0) {
    first_gemm = linear(T, qd, h_, bwd);
    linear(T, heads_ * static_cast<double>(dqk_), qd, bwd);
  } else {
    first_gemm = linear(T, heads_ * static_cast<double>(dqk_), h_, bwd);
  }
  linear(T, a_.kv_lora_rank + a_.qk_rope_head_dim, h_, bwd);
  linear(T, heads_ * static_cast<double>(a_.qk_nope_head_dim + a_.v_head_dim), a_.kv_lora_rank,
         bwd);
  return first_gemm;
}

// Core attention (ring attention over CP: this rank's share of the causal work), over each
// document of a packed sequence (THD layout: one kernel, cu_seqlens bounding each document;
// its time is the sum of the documents' times). With CP, Transformer Engine's load-balanced ring
// attention splits the sequence into 2·cp chunks, two per rank: step 0 is causal attention of the
// rank's s/cp queries on its own keys, each of the other cp − 1 steps attends half a block (s/(2cp)
// × s/cp), so the rank does 1/cp of the causal work in cp shorter kernels.
Time LayerBuilder::core_attention(bool backward) const {
  Time t = Time::zero();
  for (const DocumentGroup& g : docs_) {
    AttentionShape doc = as_;
    doc.batch = p_.micro_batch * g.count;
    doc.seq_q = doc.seq_kv = g.tokens;
    if (p_.cp == 1) {
      t += c_.attention(doc, backward, DType::kBf16);
      continue;
    }
    AttentionShape diag = doc;
    diag.seq_q = diag.seq_kv = std::max(1, g.tokens / p_.cp);
    AttentionShape half = doc;
    half.seq_q = std::max(1, g.tokens / (2 * p_.cp));
    half.seq_kv = std::max(1, g.tokens / p_.cp);
    half.causal = false;
    t += c_.attention(diag, backward, DType::kBf16) +
         Time::from_ps((p_.cp - 1) * c_.attention(half, backward, DType::kBf16).ps());
  }
  return t;
}

// p.cp − 1 exchanges of this rank's K and V chunk (and dK, dV backward), each overlapped
// with one step of the attention kernel (`at` in all).
void LayerBuilder::cp_exchange(Time at, bool bwd) {
  const double kv = 2.0 * p_.micro_batch * (static_cast<double>(p_.seq_len) / p_.cp) * kvh_ *
                    (dqk_ + dv_) / 2.0 * 2.0 * (bwd ? 2.0 : 1.0);
  const Time t = comm_(Dim::kCp, CollOp::kSendRecv, kv);
  const Time step = Time::from_ps(at.ps() / p_.cp);
  const Time exposed = Time::from_ps((p_.cp - 1) * std::max<int64_t>(0, (t - step).ps()));
  b_.sync(Dim::kCp, exposed, "cp ring exchange", {Dim::kCp, CollOp::kSendRecv, kv},
          bwd ? "attention backward" : "attention forward");
}

std::pair<Time, Time> LayerBuilder::dense_mlp(double ffn, bool bwd, double rows, unsigned module) {
  const double f = ffn / tp_;
  const bool glu = m_.mlp == MlpKind::kGated;
  const double up = (glu ? 2.0 : 1.0) * f;
  // The activation's BF16 passes over f values per row (SwiGLU: 2 in, 1 out; backward the
  // gradient and 2 inputs in, 2 out. Non-gated: 1 in, 1 out; backward 2 in, 1 out).
  const double act_fwd = rows * f * 2.0 * (glu ? 3.0 : 2.0);
  const double act_bwd = rows * f * 2.0 * (glu ? 5.0 : 3.0);
  if (bwd && recompute(module)) {  // the MLP's forward again before its backward
    linear(rows, up, h_, false, kLoraFc1);
    mem(act_fwd);
    linear(rows, h_, f, false, kLoraFc2);
  }
  const Time g1 = linear(rows, up, h_, bwd, kLoraFc1);
  mem(bwd ? act_bwd : act_fwd);
  const Time g2 = linear(rows, h_, f, bwd, kLoraFc2);
  return std::make_pair(g1, g2);
}

void LayerBuilder::mlp_block(bool bwd) {
  if (!moe_) b_.begin_graph(kGraphMlp);  // CUDA-graph scope "mlp" (dense layers)
  rms_norm(bwd);                         // pre-MLP RMSNorm
  if (!moe_) {
    const auto [g1, g2] = dense_mlp(static_cast<double>(m_.ffn), bwd, static_cast<double>(T_));
    if (!bwd) {
      ag(g1);
      rs(g2);
    } else {
      rs(g1);
      ag(g2);
      if (!frozen_ || (p_.task.lora_targets & kLoraFc1)) ag(g1);
    }
  } else {
    moe_block(bwd);
  }
  if (m_.norms_per_layer == 4) rms_norm(bwd);  // sandwich: post-MLP RMSNorm (Gemma)
  mem(Tsp_ * h_ * 2.0 * 3.0);                  // residual add
  b_.end_graph();
}

void LayerBuilder::moe_block(bool bwd) {
  const auto& mo = m_.moe;
  if (bwd && recompute(kRecomputeMoe)) {  // the checkpointed MoE layer's forward again
    const MoeLayerInput fwd{m_, p_, fw_, c_, comm_, ep_, Tsp_, false};
    if (sp_) ag(Time::zero());
    build_moe_experts(fwd, false, b_);
    if (mo.shared_experts > 0) {
      dense_mlp(static_cast<double>(mo.shared_expert_ffn) * mo.shared_experts, false,
                static_cast<double>(T_));
    }
    if (sp_) rs(Time::zero());
  }
  if (sp_ && !bwd) ag(Time::zero());
  // Tokens this rank routes: the sequence-parallel shard of the micro-batch.
  const MoeLayerInput in{m_, p_, fw_, c_, comm_, ep_, Tsp_, bwd && recompute(kRecomputeMoeAct)};
  build_moe_experts(in, bwd, b_);
  if (mo.shared_experts > 0) {
    dense_mlp(static_cast<double>(mo.shared_expert_ffn) * mo.shared_experts, bwd,
              static_cast<double>(T_), kRecomputeSharedExperts);
  }
  if (sp_ && !bwd) rs(Time::zero());
  if (sp_ && bwd) {
    rs(Time::zero());
    ag(Time::zero());
  }
}

}  // namespace

Block build_decoder_layer(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                          const ComputeModel& c, const LayerCostModel::CommFn& comm,
                          const LayerCostModel::EpFn& ep, int layer, bool backward) {
  if (is_hybrid(m) && layer < m.layers && block_kind(m, layer) == BlockKind::kMamba)
    return build_mamba_layer(m, p, fw, c, comm, layer, backward);
  if (is_hybrid(m) && layer < m.layers && block_kind(m, layer) == BlockKind::kGdn)
    return build_gdn_layer(m, p, fw, c, comm, layer, backward);
  return LayerBuilder(m, p, fw, c, comm, ep, layer, backward).build();
}

}  // namespace fleetsim::step_internal
