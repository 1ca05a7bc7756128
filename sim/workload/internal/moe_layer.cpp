// The routed experts of one MoE layer, kernel by kernel (Megatron-Core megatron/core/transformer/
// moe/: router.py, token_dispatcher.py, experts.py, moe_utils.py; Transformer Engine's
// GroupedLinear and permutation ops). Every launch is one BlockBuilder call with its host cost:
// an eager op (kernel()) for the router, index and permutation kernels, a Transformer Engine
// module call (module(), then module_kernel() per launch) for each GroupedLinear / Linear. Kernel
// times: GEMMs from the GEMM / grouped-GEMM tables (grouped GEMMs below
// ComputeModel::grouped_ref_tokens() tokens per expert from the measured rate against tokens per
// expert), router / permute / unpermute from their measured rows (ComputeModel::moe_kernel), the
// rest HBM-bound (ComputeModel::memory_bound).
//
// Forward with the alltoall dispatcher:
//   router GEMM (BF16: Megatron's router is a plain linear outside Transformer Engine's FP8
//   autocast) · score function + top-k (fused: 1 kernel; unfused: 4, as in Megatron-LM PR 6456's
//   reference) · load-balancing loss (fused: 2; unfused: 5) · token counts per expert (1) ·
//   permute (fused: row-id map + gather; unfused: 4 index kernels + the index_select gather) ·
//   [EP all-to-all] · chunk sort into local-expert order (ep > 1 and more than one local expert;
//   fused: 1, unfused: 2 cats for tokens and probs) · experts · chunk sort back · [EP all-to-all]
//   · unpermute (fused: 1; unfused: zeros + scatter_add). The dispatchers (alltoall, DeepEP,
//   HybridEP), the EP exchange and the host syncs: moe_dispatch.cpp.
// Experts with moe_grouped_gemm (TEGroupedMLP / TE GroupedLinear): per local expert one GEMM
// launch for fc1 and one for fc2 (and, in FP8 / MXFP8 / NVFP4, one quantise launch before each;
// current scaling adds its zero-amax, amax and scale kernels), one activation kernel (SwiGLU with
// the routing probs); their GPU time is the grouped GEMM's, split evenly over the launches. Without
// it (SequentialMLP) each expert is its own TE Linear pair at the dense GEMM's time, plus one cat.
// Backward mirrors it: per expert and linear a quantise of the output gradient, a dgrad and a
// wgrad launch (TE's GroupedLinear backward runs one grouped call of each).
// LatentMoE (moe.latent > 0): fc1_latent_proj (hidden -> latent) after the router and
// fc2_latent_proj (latent -> hidden) after the combine, each a TE Linear; everything between
// (permutes, EP exchange, experts) runs on latent-wide tokens.
#include "workload/internal/moe_layer.h"

#include <algorithm>
#include <cmath>

#include "coll/dispatch.h"
#include "workload/internal/moe_builder.h"

namespace fleetsim::step_internal {
namespace {

// The Torch-API time of one flex dispatcher call beyond its kernels (dispatch.h t_api without
// HybridEP's buffer copy, which the permute after the dispatch is here); zero for the alltoall
// dispatcher and the libraries whose rows state no Torch-API time.
Time api_overhead(MoeDispatcher d) {
  const DispatchGlobals& g = dispatch_globals();
  switch (d) {
    case MoeDispatcher::kHybridEp:
      return g.api_wait;
    case MoeDispatcher::kDeepEp:
    case MoeDispatcher::kUcclEp:
      return g.api_wait_deepep;
    default:
      return Time::zero();
  }
}

}  // namespace

MoeBuilder::MoeBuilder(const MoeLayerInput& in, BlockBuilder& b)
    : in_(in),
      p_(in.par),
      fw_(in.fw),
      c_(in.compute),
      b_(b),
      gd_(gemm_dtype(in.par.precision)),
      lowp_(gd_ != DType::kBf16),
      E_(static_cast<double>(in.model.moe.experts)),
      topk_(static_cast<double>(in.model.moe.top_k)),
      h_(static_cast<double>(in.model.hidden)),
      Tm_(in.tokens),
      d_(static_cast<double>(in.model.moe.expert_width(in.model.hidden))),
      G_(E_ / in.par.ep),
      rows_(in.tokens * in.model.moe.top_k * in.par.etp),
      fe_(static_cast<double>(in.model.moe.expert_ffn) / in.par.etp),
      up_((in.model.mlp == MlpKind::kGated ? 2.0 : 1.0) * fe_),
      flex_(in.fw.moe_dispatcher != MoeDispatcher::kAllToAll && static_cast<bool>(in.ep)),
      hybrid_(flex_ && in.fw.moe_dispatcher == MoeDispatcher::kHybridEp),
      api_(flex_ ? api_overhead(in.fw.moe_dispatcher) : Time::zero()),
      sort_(!flex_ && in.par.ep > 1 && E_ / in.par.ep > 1.0),
      Gi_(std::max<int64_t>(1, static_cast<int64_t>(std::llround(E_ / in.par.ep)))),
      m_g_(rows_ / std::max(1.0, E_ / in.par.ep)) {}

// Quantisation of `elements` BF16 values before a low-precision GEMM (quantize_kernels:
// the cast, and current scaling's zero-amax, amax and scale kernels before it).
void MoeBuilder::quant(double elements) {
  quantize_kernels(b_, c_, p_.precision, elements);
}

// Router GEMM, score function + top-k, load-balancing loss (Megatron's default
// moe_router_load_balancing_type "aux_loss"; DeepSeek-V3's sequence aux loss and expert-bias
// updates launch as many), token counts per expert. Backward: the same in reverse, the GEMM's
// dgrad and wgrad.
void MoeBuilder::router(bool bwd) {
  const int64_t T = static_cast<int64_t>(std::llround(Tm_));
  const int64_t Ei = static_cast<int64_t>(std::llround(E_));
  const int64_t H = static_cast<int64_t>(std::llround(h_));
  const double scores = Tm_ * E_ * 4.0;  // FP32 scores (moe_router_dtype fp32 in the recipes)
  const double fl = 2.0 * Tm_ * E_ * h_;
  const bool fused = fw_.moe_router_fusion;
  b_.begin_graph(kGraphMoeRouter);
  if (!bwd) {
    b_.kernel(c_.gemm(T, Ei, H, DType::kBf16), fl);
    if (fw_.moe_router_force_load_balancing) {
      // RandomSTE (moe_utils.py core_v0.16.0 L1130): logits.clone().normal_(), its backward
      // passes the gradient through.
      mem(scores * 2.0);
      mem(scores);
    }
    k(fused ? MK::kRouterFused : MK::kRouterUnfused, scores, fused ? 1 : 4);
    k(fused ? MK::kRouterFused : MK::kRouterUnfused, scores, fused ? 2 : 5);  // aux loss
    mem(Tm_ * E_);  // tokens per expert: routing_map.sum(0)
    // attach_and_log_load_balancing_loss: save_to_aux_losses_tracker's aux_loss / coeff and
    // the tracker's values[layer] += (one FP32 value each).
    mem(4.0);
    mem(4.0);
    b_.end_graph();
    return;
  }
  // MoEAuxLossAutoScaler.backward: torch.ones_like(aux_loss) * main_loss_backward_scale.
  mem(4.0);
  mem(4.0);
  // Fused: the aux loss's backward and the aux scores' (fused_score_for_moe_aux_loss_bwd), then
  // the top-k's; unfused 3 + 3 as before.
  k(fused ? MK::kRouterFused : MK::kRouterUnfused, scores, fused ? 2 : 3);  // aux loss
  k(fused ? MK::kRouterFused : MK::kRouterUnfused, scores, fused ? 1 : 3);  // scores + top-k
  mem(scores * 3.0);  // the logits' two gradients (top-k, aux scores) summed by autograd
  b_.kernel(c_.gemm(T, H, Ei, DType::kBf16), fl);  // dgrad
  if (!p_.task.frozen_base()) {
    b_.kernel(c_.gemm(H, Ei, T, DType::kBf16), fl);  // wgrad into param.grad (not TE)
    mem(E_ * h_ * (2.0 + 4.0 + 4.0));                // DDP hook: main_grad.add_(grad)
  }
  b_.end_graph();
}

// One TE GroupedLinear [rows × kdim]·[kdim × n] over the local experts: per expert a quantise and
// a GEMM launch (backward: a quantise of the gradient, a dgrad and a wgrad launch), the grouped
// GEMM's time split evenly over the launches. The grouped tables were measured inside PyTorch,
// so their time is not derated (framework_kernel). Host: one module call, and per GEMM call
// (forward 1, backward dgrad + wgrad) the per-expert work of TE's per-expert path
// (HostCosts::expert × local experts). With moe_grouped_gemm_single_launch each GEMM pass and
// each quantise is one launch over all experts and there is no per-expert host work.
void MoeBuilder::grouped_linear(double n, double kdim, bool bwd) {
  if (fw_.moe_grouped_gemm_single_launch) {
    grouped_single_launch(n, kdim, bwd);
    return;
  }
  const int64_t Mg = std::max<int64_t>(1, static_cast<int64_t>(std::llround(m_g_)));
  const int64_t N = static_cast<int64_t>(std::llround(n));
  const int64_t K = static_cast<int64_t>(std::llround(kdim));
  const double per = 1.0 / static_cast<double>(Gi_);
  const double fl = 2.0 * rows_ * n * kdim * per;
  auto share = [&](Pass pass) {
    const Time t = c_.grouped_gemm(Gi_, Mg, N, K, gd_, pass);
    return Time::from_ps(static_cast<int64_t>(std::llround(static_cast<double>(t.ps()) * per)));
  };
  const Time fwd = bwd ? Time::zero() : share(Pass::kForward);
  const Time dgrad = bwd ? share(Pass::kDgrad) : Time::zero();
  const Time wgrad = bwd ? share(Pass::kWgrad) : Time::zero();
  const bool wgrad_on = bwd && !p_.task.frozen_base();  // no wgrad for LoRA's frozen experts
  b_.module();
  b_.expert_host(Gi_ * (wgrad_on ? 2 : 1));
  for (int64_t e = 0; e < Gi_; ++e)
    quant(m_g_ * (bwd ? n : kdim));
  for (int64_t e = 0; e < Gi_; ++e)
    b_.module_framework_kernel(bwd ? dgrad : fwd, fl);
  if (wgrad_on)
    for (int64_t e = 0; e < Gi_; ++e)
      b_.module_framework_kernel(wgrad, fl);
}

// The single-launch grouped GEMM: one quantise over every expert's rows, one launch per GEMM
// pass, the grouped GEMM's whole time in it.
void MoeBuilder::grouped_single_launch(double n, double kdim, bool bwd) {
  const int64_t Mg = std::max<int64_t>(1, static_cast<int64_t>(std::llround(m_g_)));
  const int64_t N = static_cast<int64_t>(std::llround(n));
  const int64_t K = static_cast<int64_t>(std::llround(kdim));
  const double fl = 2.0 * rows_ * n * kdim;
  b_.module();
  quant(rows_ * (bwd ? n : kdim));
  b_.module_framework_kernel(
      c_.grouped_gemm(Gi_, Mg, N, K, gd_, bwd ? Pass::kDgrad : Pass::kForward), fl);
  if (bwd && !p_.task.frozen_base())
    b_.module_framework_kernel(c_.grouped_gemm(Gi_, Mg, N, K, gd_, Pass::kWgrad), fl);
}

// One expert's TE Linear (SequentialMLP): quantise + the dense GEMM of m_g tokens; backward its
// gradient's quantise, dgrad and wgrad.
void MoeBuilder::sequential_linear(double m_g, double n, double kdim, bool bwd) {
  const int64_t M = std::max<int64_t>(1, static_cast<int64_t>(std::llround(m_g)));
  const int64_t N = static_cast<int64_t>(std::llround(n));
  const int64_t K = static_cast<int64_t>(std::llround(kdim));
  const double fl = 2.0 * m_g * n * kdim;
  b_.module();
  quant(m_g * (bwd ? n : kdim));
  if (!bwd) {
    b_.module_kernel(c_.gemm(M, N, K, gd_), fl);
    return;
  }
  b_.module_kernel(c_.gemm(M, K, N, gd_), fl);
  if (!p_.task.frozen_base()) b_.module_kernel(c_.gemm(K, N, M, gd_), fl);  // wgrad
}

void MoeBuilder::experts(bool bwd) {
  // The activation's BF16 passes over fe values per row: SwiGLU reads 2 and writes 1 forward,
  // reads the gradient and 2 inputs and writes 2 gradients backward; a non-gated one (squared
  // ReLU, GELU) reads 1 and writes 1, backward reads the gradient and its input, writes 1.
  const bool glu = in_.model.mlp == MlpKind::kGated;
  const double act_fwd = rows_ * fe_ * 2.0 * (glu ? 3.0 : 2.0);
  const double act_bwd = rows_ * fe_ * 2.0 * (glu ? 5.0 : 3.0);
  if (fw_.moe_grouped_gemm) {
    if (!bwd) {
      grouped_linear(up_, d_, false);
      mem(act_fwd);
      grouped_linear(d_, fe_, false);
    } else {
      grouped_linear(d_, fe_, true);
      if (in_.recompute_act) mem(act_fwd);
      mem(act_bwd);
      grouped_linear(up_, d_, true);
    }
    return;
  }
  const double per = 1.0 / static_cast<double>(Gi_);
  for (int64_t e = 0; e < Gi_; ++e) {
    if (!bwd) {
      sequential_linear(m_g_, up_, d_, false);
      mem(act_fwd * per);
      sequential_linear(m_g_, d_, fe_, false);
    } else {
      sequential_linear(m_g_, d_, fe_, true);
      if (in_.recompute_act) mem(act_fwd * per);
      mem(act_bwd * per);
      sequential_linear(m_g_, up_, d_, true);
    }
  }
  mem(rows_ * d_ * 2.0 * 2.0);  // cat of the experts' outputs (or split of their gradients)
}

// LatentMoE's projections (MoELayer.fc1_latent_proj after the router, fc2_latent_proj after the
// combine): TE Linears replicated on the TP ranks over this rank's tokens.
void MoeBuilder::latent_proj(bool down, bool bwd) {
  if (in_.model.moe.latent == 0) return;
  if (down)
    sequential_linear(Tm_, d_, h_, bwd);
  else
    sequential_linear(Tm_, h_, d_, bwd);
}

void MoeBuilder::forward() {
  router(false);
  latent_proj(true, false);
  preprocess();
  routing_map_gather();
  // Dropless routing: the host needs the token counts per expert (all-to-all splits, grouped
  // GEMM sizes) before it can launch the dispatch.
  b_.host_sync();
  if (flex_) {
    dispatch_sync(true, false);
    deepep_multihot(false);
    permute(false);
    experts(false);
    unpermute(false);
    dispatch_sync(false, false);
    latent_proj(false, false);
    return;
  }
  dispatch_sync(true, false);
  probs_all_to_all(false);
  sort_chunks(false);
  experts(false);
  sort_chunks(false);
  dispatch_sync(false, false);
  unpermute(false);
  latent_proj(false, false);
}

void MoeBuilder::backward() {
  latent_proj(false, true);
  if (flex_) {
    dispatch_sync(true, true);
    unpermute(true);
    experts(true);
    permute(true);
    deepep_multihot(true);
    dispatch_sync(false, true);
  } else {
    unpermute(true);
    dispatch_sync(true, true);
    sort_chunks(true);
    experts(true);
    sort_chunks(true);
    dispatch_sync(false, true);
    probs_all_to_all(true);
    b_.begin_graph(kGraphMoePreprocess);  // the permute's backward, in the same graph
    permute(true);
    b_.end_graph();
  }
  latent_proj(true, true);
  router(true);
  // The MoE input feeds the router and the dispatch: autograd sums its two gradients.
  mem(Tm_ * h_ * 2.0 * 3.0);
}

void build_moe_experts(const MoeLayerInput& in, bool backward, BlockBuilder& b) {
  MoeBuilder mb(in, b);
  if (backward)
    mb.backward();
  else
    mb.forward();
}

}  // namespace fleetsim::step_internal
