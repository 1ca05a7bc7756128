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
//   · unpermute (fused: 1; unfused: zeros + scatter_add).
// With the flex dispatcher (DeepEP / HybridEP) the dispatch kernel itself routes tokens to
// ranks: dispatch layout (1) · [dispatch] · permute into local-expert order · experts ·
// unpermute · [combine]; no chunk sorts. HybridEP's dispatch without a handle (every forward)
// first gathers the routing map of every EP rank (torch.distributed.all_gather_into_tensor of
// the [tokens x experts] bool map) and runs its metadata-preprocessing kernel over it
// (deep_ep/hybrid_ep_buffer.py dispatch_with_permute): an EP all-gather of tokens · experts ·
// ep bytes and an HBM-bound read of them, outside the "moe_preprocess" graph (Megatron's
// HybridEPDispatch calls them in token_dispatch).
// Every flex call goes through the library's Torch API, whose time beyond the kernels is t_api of
// sim/coll/dispatch.h (fitted on the Torch-API vs kernel-only rows of
// validation/dispatch-benchmarks.csv; the kernel-only rows exclude "CPU overhead, d2d,
// device_sync", DeepEP hybrid-ep tests/test_hybrid_ep.py @94a9f8f L387). Only the forward
// dispatch blocks the host, and on the GPU reaching it, not for a fixed time:
// - DeepEP (csrc/deep_ep.cpp @567632d, Buffer::intranode_dispatch L585-651, internode_dispatch
//   L1137-1162): without a handle the host busy-waits on the host-mapped moe_recv_counter until
//   the notify kernel has written the receive counts, then allocates and launches the dispatch
//   kernel; with a handle (cached mode: the backward of combine, Megatron-LM
//   megatron/core/transformer/moe/fused_a2a.py @d98e8a6 L200 FusedCombine.backward) it skips
//   the wait; intranode / internode_combine (the combine, and the backward of dispatch,
//   fused_a2a.py L152) never wait on the host. fused_a2a.py L138 builds tokens_per_expert from
//   the host list the wait returned (no further sync).
// - HybridEP (deep_ep/hybrid_ep_buffer.py @94a9f8f L358-379 dispatch_with_permute without a
//   handle -> metadata_preprocessing; csrc/hybrid_ep/executor/executor.cu L165-167
//   cudaStreamSynchronize when non_blocking is false, which Megatron's dropless path passes:
//   fused_a2a.py L415-417 with num_permuted_tokens None, token_dispatcher.py @d98e8a6 L1111); with
//   a handle (the backward of combine, fused_a2a.py L507) and in combine_with_unpermute (L434-479)
//   there is no sync.
// So the forward dispatch's wait is the dropless token-count BlockBuilder::host_sync() before
// it (the host waits until the GPU has run the preprocess, then one round trip), and the rest
// of its t_api (t_api - d2h) is host work after the wait, before the dispatch kernel. The other
// three calls spend t_api as host work before their kernels without waiting: it delays the GPU
// only where the host is behind it.
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
//
// Host synchronisation: dropless routing makes the host wait for the token counts per expert
// (alltoall: the .cpu() of the counts after their EP all-gather; unfused permute: masked_select's
// output size; flex: the receive counts of the dispatch, above) before it can launch the dispatch:
// one BlockBuilder::host_sync() in the forward pass (the backward reuses the counts). CUDA-graph
// scopes (framework.cuda_graph_scopes): "moe_router" captures the router (GEMM, score function +
// top-k, aux loss, token counts), "moe_preprocess" the dispatch preprocess (alltoall: the permute;
// flex: the dispatch layout); everything after the sync stays eager.
#include "workload/internal/moe_layer.h"

#include <algorithm>
#include <cmath>

#include "coll/dispatch.h"

namespace fleetsim::step_internal {
namespace {

using MK = ComputeModel::MoeKernel;
using Pass = ComputeModel::GemmPass;

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

class MoeBuilder {
 public:
  MoeBuilder(const MoeLayerInput& in, BlockBuilder& b);
  void forward();
  void backward();

 private:
  void k(MK kind, double bytes, int launches = 1) {
    for (int i = 0; i < launches; ++i)
      b_.kernel(c_.moe_kernel(kind, bytes));
  }
  void mem(double bytes) { b_.kernel(c_.memory_bound(bytes)); }
  void quant(double elements);
  void preprocess();
  void token_counts();
  void probs_all_to_all(bool bwd);
  void deepep_multihot(bool bwd);
  void router(bool bwd);
  void permute(bool bwd);
  void unpermute(bool bwd);
  void sort_chunks(bool bwd);
  void dispatch_sync(bool first, bool bwd);
  void routing_map_gather();
  void experts(bool bwd);
  void grouped_linear(double n, double kdim, bool bwd);
  void grouped_single_launch(double n, double kdim, bool bwd);
  void sequential_linear(double m_g, double n, double kdim, bool bwd);
  void latent_proj(bool down, bool bwd);

  const MoeLayerInput& in_;
  const ParallelConfig& p_;
  const FrameworkOptions& fw_;
  const ComputeModel& c_;
  BlockBuilder& b_;
  const DType gd_;
  const bool lowp_;
  const double E_, topk_, h_, Tm_;
  const double d_;     // width of a routed token: LatentMoE's latent, else hidden
  const double G_;     // local experts
  const double rows_;  // token copies this rank's experts process
  const double fe_;    // expert FFN width on this rank (ETP shard)
  const double up_;    // fc1 width (gated: 2 · fe)
  const bool flex_;    // DeepEP / HybridEP dispatch
  const bool hybrid_;  // HybridEP (routing-map all-gather before each forward dispatch)
  const Time api_;     // Torch-API time per flex call beyond its kernels
  const bool sort_;    // alltoall chunk sort between the all-to-all and the experts
  const int64_t Gi_;   // G_ rounded
  const double m_g_;   // tokens per local expert
};

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

// Tokens into expert order (forward), or the gradient back to token order (backward: the
// gather's transpose, a scatter-add).
void MoeBuilder::permute(bool bwd) {
  const double copies = flex_ ? rows_ : Tm_ * topk_;
  const double bytes = (Tm_ + copies) * d_ * 2.0;
  if (fw_.moe_permute_fusion) {
    if (!bwd) {
      // make_row_id_map's three Triton passes (block cumsum, global cumsum, per-token sort):
      // the measured map kernel, then two HBM-bound passes over the int32 [tokens, 2E + 1] map.
      k(MK::kPermuteMapFused, Tm_ * E_ * 4.0);
      mem(Tm_ * E_ * 4.0 * 2.0);
      mem(Tm_ * (2.0 * E_ + 1.0) * 4.0 * 2.0);
    }
    k(bwd ? MK::kUnpermuteFused : MK::kPermuteFused, bytes);
    return;
  }
  if (!bwd) {
    // routing_map.T.contiguous(), arange, masked_select of indices and of probs (int64).
    for (int i = 0; i < 4; ++i)
      mem(Tm_ * E_ * 8.0);
    k(MK::kPermuteUnfused, bytes);
  } else {
    mem(Tm_ * d_ * 2.0);  // zeros
    k(MK::kUnpermuteUnfused, bytes);
  }
}

// Expert outputs back to token order, weighted (forward), or its gradient (backward: a gather).
void MoeBuilder::unpermute(bool bwd) {
  const double copies = flex_ ? rows_ : Tm_ * topk_;
  const double bytes = (copies + Tm_) * d_ * 2.0;
  if (fw_.moe_permute_fusion) {
    k(bwd ? MK::kPermuteFused : MK::kUnpermuteFused, bytes);
    return;
  }
  if (!bwd) {
    mem(Tm_ * d_ * 2.0);  // zeros
    k(MK::kUnpermuteUnfused, bytes);
  } else {
    k(MK::kPermuteUnfused, bytes);
  }
}

// The alltoall dispatcher's sort of the received chunks (rank-major) into local-expert order,
// and back after the experts: contiguous chunk copies of the tokens and probs, HBM-bound.
void MoeBuilder::sort_chunks(bool bwd) {
  if (!sort_) return;
  const double tokens = 2.0 * rows_ * d_ * 2.0, probs = 2.0 * rows_ * 4.0;
  if (fw_.moe_permute_fusion) {
    // moe_sort_chunks_by_index_with_probs: forward make_chunk_sort_map (an int32 per row) and
    // sort_chunks_by_map; backward only the sort, with the saved map.
    if (!bwd) mem(rows_ * 4.0);
    mem(tokens + probs);
  } else {
    mem(tokens);  // split + cat of the tokens
    mem(probs);   // and of the probs
  }
}

// The EP all-to-all (or DeepEP dispatch / combine) that opens (`first`) or closes the experts'
// segment. Dispatch carries tokens to their experts, combine brings the outputs back; backward
// runs them in reverse with gradients (BF16). Megatron-Core's DeepEP and HybridEP managers hand
// the BF16 hidden states to the library (megatron/core/transformer/moe/fused_a2a.py: HybridEP's
// fp8_dispatch is forced off, DeepEP's dispatch gets x as it is), so their dispatch is BF16 in
// every recipe; the other libraries send FP8 tokens (one FP32 scale per 128 values) when the
// GEMMs run in FP8.
void MoeBuilder::dispatch_sync(bool first, bool bwd) {
  if (p_.ep == 1) return;
  const double copy_bf16 = d_ * 2.0;
  const bool megatron_bf16 = fw_.moe_dispatcher == MoeDispatcher::kDeepEp ||
                             fw_.moe_dispatcher == MoeDispatcher::kDeepEpLowLatency ||
                             fw_.moe_dispatcher == MoeDispatcher::kHybridEp;
  const double copy_dispatch =
      flex_ && lowp_ && !megatron_bf16 ? d_ * (1.0 + 4.0 / 128.0) : copy_bf16;
  const double bytes_per_copy = first && !bwd ? copy_dispatch : copy_bf16;
  const Time t = flex_ ? in_.ep(Tm_, bytes_per_copy)
                       : in_.comm(Dim::kEp, CollOp::kAllToAll, Tm_ * topk_ * bytes_per_copy);
  // The link view counts the call as the all-to-all of its copies; its time is the call's own
  // for the flex dispatchers (the collective model's all-to-all is the alltoall dispatcher's).
  const CollCall call{Dim::kEp, CollOp::kAllToAll, Tm_ * topk_ * copy_bf16,
                      flex_ ? t : Time::zero()};
  // The Torch API's host work before the call's kernels (see the header): after the forward
  // dispatch's wait (the token-count sync before it holds the round trip), or, for the calls
  // that never wait, all of t_api.
  const Time d2h = fw_.host.d2h;
  const bool waits = first && !bwd;
  b_.host_item(!waits ? api_ : api_ > d2h ? api_ - d2h : Time::zero());
  if (first)
    b_.sync(Dim::kEp, t, bwd ? "ep combine (grad)" : "ep dispatch", call, "experts");
  else
    b_.sync(Dim::kEp, t, bwd ? "ep dispatch (grad)" : "ep combine", call, "moe tail");
}

// HybridEP's forward dispatch builds its handle from the routing map of every EP rank: the
// all-gather of the [tokens x experts] bool map, then the metadata-preprocessing kernel reading
// the gathered map.
void MoeBuilder::routing_map_gather() {
  if (!hybrid_ || p_.ep == 1) return;
  const double map = Tm_ * E_ * static_cast<double>(p_.ep);
  b_.sync(Dim::kEp, in_.comm(Dim::kEp, CollOp::kAllGather, map), "ep routing-map all-gather",
          {Dim::kEp, CollOp::kAllGather, map, Time::zero()}, "dispatch preprocess");
  mem(map);
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

// The dispatcher's preprocess before the EP exchange (CUDA-graph scope "moe_preprocess"): the
// alltoall dispatcher's permute, the flex dispatcher's dispatch layout.
void MoeBuilder::preprocess() {
  b_.begin_graph(kGraphMoePreprocess);
  if (flex_) {
    // DeepEP's setup_metadata: torch.topk of the probs into [tokens, topk] indices and probs.
    if (fw_.moe_dispatcher == MoeDispatcher::kDeepEp) mem(Tm_ * E_ * 4.0 + Tm_ * topk_ * 12.0);
    mem(Tm_ * E_ * 4.0);  // dispatch layout (tokens per rank / expert)
  } else {
    token_counts();
    permute(false);
  }
  b_.end_graph();
  if (flex_) return;
  // _maybe_dtoh_and_synchronize at cuda_dtoh_point: one maybe_move_tensor_to_cpu (a
  // non_blocking D2H copy on the side stream, no kernel) each for tokens_per_expert and, with
  // ep > 1, input_splits, output_splits and output_splits_tp, plus
  // num_global_tokens_per_local_expert without the fused permute (token_dispatcher.py
  // core_v0.16.0 L862-900): eager ops on the host, outside the scope's graph (with
  // moe_preprocess captured, cuda_dtoh_point moves to before_ep_alltoall, L438-L443: the graph
  // returns the counts and token_dispatch copies them).
  const int copies = p_.ep > 1 ? 4 + (!fw_.moe_permute_fusion && Gi_ > 1 ? 1 : 0) : 1;
  for (int i = 0; i < copies; ++i)
    b_.host_item(fw_.host.op);
}

// The alltoall dispatcher's dropless preprocess (token_dispatcher.py
// MoEAlltoAllTokenDispatcher.preprocess, core_v0.16.0 L469-590): routing_map.sum(0) (the tokens
// per expert), and with ep > 1 the input splits (a sum over each rank's experts), the
// all-gather of the counts over the EP group (gather_from_sequence_parallel_region, a
// torch.distributed collective of E int64 per rank), the local experts' slice (.contiguous()),
// the sums per rank (output splits), per TP rank and per local expert. All but the first touch
// at most ep x E int64 values: the kernel floor.
void MoeBuilder::token_counts() {
  mem(Tm_ * E_);
  if (p_.ep == 1) return;
  const double ep = p_.ep, counts = E_ * 8.0, gathered = counts * ep;
  mem(counts);
  b_.sync(Dim::kEp, in_.comm(Dim::kEp, CollOp::kAllGather, gathered), "ep token-count all-gather",
          {Dim::kEp, CollOp::kAllGather, gathered, Time::zero()}, "dispatch preprocess");
  mem(G_ * ep * 8.0 * 2.0);
  mem(G_ * ep * 8.0);
  mem(ep * 8.0);
  mem(G_ * ep * 8.0);
}

// The alltoall dispatcher's second all-to-all: token_dispatch sends the permuted probs (one FP32
// value per token copy) with the same splits as the tokens (token_dispatcher.py core_v0.16.0
// L647-673); its backward returns their gradients.
void MoeBuilder::probs_all_to_all(bool bwd) {
  if (flex_ || p_.ep == 1) return;
  const double bytes = Tm_ * topk_ * 4.0;
  b_.sync(Dim::kEp, in_.comm(Dim::kEp, CollOp::kAllToAll, bytes),
          bwd ? "ep probs all-to-all (grad)" : "ep probs all-to-all",
          {Dim::kEp, CollOp::kAllToAll, bytes, Time::zero()}, bwd ? "moe tail" : "experts");
}

// DeepEP's _indices_to_multihot after the dispatch (token_dispatcher.py _DeepepManager,
// core_v0.16.0 L1198-1226; its fused variant only under --enable-experimental): the received
// [tokens, topk] indices and probs into a [tokens, local experts] map and probs. Forward: two
// torch.zeros, the mask (indices != -1), indices[mask] and probs[mask] (boolean indexing:
// nonzero, whose output size the host reads back, then the gather), arange, mask.sum(1),
// repeat_interleave (a cumsum whose total the host reads, then the expansion), two index_put_
// and .bool(): 16 kernels and 3 host syncs. Backward (autograd of the probs path): the gather of
// the index_put_ gradient, then probs[mask]'s zeros and scatter. Received tokens: at most the
// copies, at most every EP rank's tokens.
void MoeBuilder::deepep_multihot(bool bwd) {
  if (!flex_ || fw_.moe_dispatcher != MoeDispatcher::kDeepEp) return;
  const double n = std::min(rows_, Tm_ * p_.ep);
  const double idx = n * topk_ * 8.0, map = n * G_;
  if (fw_.megatron_experimental && fw_.moe_permute_fusion) {
    // fused_indices_to_multihot (fusions/fused_indices_converter.py L186-L280): one Triton
    // kernel each way, no host sync.
    mem(bwd ? idx + map * 4.0 : idx * 1.5 + map * 13.0);
    return;
  }
  if (bwd) {
    mem(idx * 2.0);
    mem(n * topk_ * 4.0);
    mem(idx * 2.0);
    return;
  }
  mem(map * 8.0);  // zeros (long)
  mem(map * 4.0);  // zeros (float)
  mem(idx + n * topk_);
  auto masked = [&](double value_bytes) {  // x[mask]: nonzero (count, select), sync, gather
    mem(n * topk_);
    mem(idx);
    b_.host_sync("deepep multihot nonzero (D2H)");
    mem(n * topk_ * value_bytes * 2.0);
  };
  masked(8.0);     // valid_indices = indices[mask]
  mem(n * 8.0);    // arange
  mem(n * topk_);  // mask.sum(dim=1)
  mem(n * 16.0);   // repeat_interleave: cumsum of the repeats
  b_.host_sync("deepep repeat_interleave (D2H)");
  mem(idx);        // its expansion
  mem(idx * 2.0);  // multihot_routing_map[rows, indices] = 1
  masked(4.0);     // probs[mask]
  mem(idx * 2.0);  // multihot_probs[rows, indices] = ...
  mem(map * 9.0);  // .bool()
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

}  // namespace

void build_moe_experts(const MoeLayerInput& in, bool backward, BlockBuilder& b) {
  MoeBuilder mb(in, b);
  if (backward)
    mb.backward();
  else
    mb.forward();
}

}  // namespace fleetsim::step_internal
