// The token dispatchers of one MoE layer (Megatron-Core megatron/core/transformer/moe/
// token_dispatcher.py, fused_a2a.py; see moe_layer.cpp for the layer): the alltoall
// dispatcher's token counts, permute, EP all-to-alls and chunk sorts, and the flex
// dispatcher (DeepEP / HybridEP) calls.
//
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
//
// Host synchronisation: dropless routing makes the host wait for the token counts per expert
// (alltoall: the .cpu() of the counts after their EP all-gather; unfused permute: masked_select's
// output size; flex: the receive counts of the dispatch, above) before it can launch the dispatch:
// one BlockBuilder::host_sync() in the forward pass (the backward reuses the counts). CUDA-graph
// scopes (framework.cuda_graph_scopes): "moe_router" captures the router (GEMM, score function +
// top-k, aux loss, token counts), "moe_preprocess" the dispatch preprocess (alltoall: the permute;
// flex: the dispatch layout); everything after the sync stays eager.
#include <algorithm>
#include <cmath>

#include "coll/dispatch.h"
#include "workload/internal/moe_builder.h"

namespace fleetsim::step_internal {

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

}  // namespace fleetsim::step_internal
