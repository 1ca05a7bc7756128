#include "workload/layer_costs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "workload/internal/block_builder.h"
#include "workload/internal/decoder_layer.h"
#include "workload/step.h"

namespace fleetsim {

const char* dim_name(Dim d) {
  switch (d) {
    case Dim::kTp:
      return "tp";
    case Dim::kCp:
      return "cp";
    case Dim::kDp:
      return "dp";
    case Dim::kEdp:
      return "edp";
    case Dim::kEp:
      return "ep";
    case Dim::kPp:
      return "pp";
  }
  return "?";
}

using step_internal::BlockBuilder;
using step_internal::gemm_dtype;

LayerCostModel::LayerCostModel(const ModelSpec& m, const ParallelConfig& p,
                               const FrameworkOptions& fw, const ComputeModel& compute, CommFn comm)
    : m_(m), p_(p), fw_(fw), c_(compute), comm_(std::move(comm)) {}

RankParams LayerCostModel::rank_params(int layer) const {
  RankParams r;
  if (p_.task.frozen_base()) {  // LoRA: only the adapters are trained (task.h)
    r.dense = static_cast<double>(lora_adapter_params(m_, p_.task, layer)) / p_.tp;
    return r;
  }
  const LayerParams lp = layer_params(m_, layer);
  r.dense =
      static_cast<double>(lp.attention + lp.norms + lp.dense_mlp + lp.router + lp.shared_experts) /
      p_.tp;
  r.expert = static_cast<double>(lp.routed_experts) / (static_cast<double>(p_.ep) * p_.etp);
  return r;
}

double LayerCostModel::embedding_rank_params() const {
  if (p_.task.frozen_base()) return 0;
  return static_cast<double>(embedding_params(m_)) / p_.tp;
}

double LayerCostModel::head_rank_params() const {
  if (p_.task.frozen_base()) return 0;
  return static_cast<double>(output_params(m_) + mtp_params(m_)) / p_.tp;
}

double LayerCostModel::p2p_bytes() const {
  const double tokens = static_cast<double>(p_.micro_batch) * p_.seq_len / p_.cp;
  const double shard = (p_.sequence_parallel && p_.tp > 1) ? p_.tp : 1.0;
  return tokens * static_cast<double>(m_.hidden) * 2.0 / shard;
}

Time LayerCostModel::p2p_time() {
  if (p_.pp == 1) return Time::zero();
  return comm_(Dim::kPp, CollOp::kSendRecv, p2p_bytes());
}

const Block& LayerCostModel::layer(int layer, bool backward) {
  const bool moe = is_moe_layer(m_, layer);
  const auto& a = m_.attention;
  const bool windowed =
      a.sliding_window > 0 && a.window_pattern > 0 && (layer % a.window_pattern) < a.window_layers;
  // Hybrid blocks differ by kind (layers past the decoder are MTP modules: attention + FFN).
  const int block =
      is_hybrid(m_) && layer < m_.layers ? 1 + static_cast<int>(block_kind(m_, layer)) : 0;
  const int kind = (moe ? 1 : 0) + (windowed ? 2 : 0) + 4 * block;
  const auto key = std::make_pair(kind, backward);
  auto it = layer_memo_.find(key);
  if (it != layer_memo_.end()) return it->second;
  if (!fw_.ep_comm_overlap || !moe || p_.ep == 1)
    return layer_memo_.emplace(key, build_layer(layer, backward)).first->second;
  // EP all-to-all overlap: the forward of one micro-batch and the backward of another are
  // interleaved per layer, so the layer's four all-to-alls (two each way) hide behind the
  // compute of both passes: each is exposed only beyond a quarter of it.
  Block fwd = build_layer(layer, false), bwd = build_layer(layer, true);
  Time compute = Time::zero();
  for (const Block* blk : {&fwd, &bwd})
    for (const Segment& sg : blk->segs)
      compute += sg.compute;
  const Time hide = Time::from_ps(compute.ps() / 4);
  for (Block* blk : {&fwd, &bwd})
    for (Segment& sg : blk->segs)
      if (sg.sync_dim == static_cast<int>(Dim::kEp))
        sg.sync = sg.sync > hide ? sg.sync - hide : Time::zero();
  layer_memo_.emplace(std::make_pair(kind, false), std::move(fwd));
  layer_memo_.emplace(std::make_pair(kind, true), std::move(bwd));
  return layer_memo_.at(key);
}

const Block& LayerCostModel::embedding(bool backward) {
  auto it = emb_memo_.find(backward);
  if (it != emb_memo_.end()) return it->second;
  return emb_memo_.emplace(backward, build_embedding(backward)).first->second;
}

const Block& LayerCostModel::head(bool backward) {
  auto it = head_memo_.find(backward);
  if (it != head_memo_.end()) return it->second;
  return head_memo_.emplace(backward, build_head(backward)).first->second;
}

Block LayerCostModel::build_layer(int layer, bool backward) {
  return step_internal::build_decoder_layer(m_, p_, fw_, c_, comm_, ep_, layer, backward);
}

Block LayerCostModel::build_embedding(bool backward) {
  BlockBuilder b(backward ? "embedding backward" : "embedding", fw_);
  const double T = static_cast<double>(p_.micro_batch) * p_.seq_len / p_.cp;
  const double rows = (p_.sequence_parallel && p_.tp > 1) ? T / p_.tp : T;
  b.kernel(c_.memory_bound(rows * static_cast<double>(m_.hidden) * 2.0 * (backward ? 3.0 : 2.0)));
  return b.finish();
}

Block LayerCostModel::build_head(bool backward) {
  const ParallelConfig& p = p_;
  BlockBuilder b(backward ? "head backward" : "head", fw_);
  const DType gd = gemm_dtype(p.precision);
  const double T = static_cast<double>(p.micro_batch) * p.seq_len / p.cp;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double h = static_cast<double>(m_.hidden);
  const double vocab = static_cast<double>(m_.vocab) / p.tp;
  const double act_bytes = T * h * 2.0;
  const int heads = 1 + m_.mtp_layers;  // main LM head and one per MTP module
  for (int i = 0; i < heads; ++i) {
    b.kernel(c_.memory_bound((sp ? T / p.tp : T) * h * 2.0 * (backward ? 3.0 : 2.0)));  // norm
    if (sp) {
      const CollOp op = backward ? CollOp::kReduceScatter : CollOp::kAllGather;
      b.tp(comm_(Dim::kTp, op, act_bytes), Time::zero(), {Dim::kTp, op, act_bytes});
    }
    const int64_t Ti = static_cast<int64_t>(T), V = static_cast<int64_t>(vocab), H = m_.hidden;
    // The output layer runs in BF16 in Transformer Engine recipes (first / last layers stay
    // in higher precision).
    (void)gd;
    if (!backward) {
      b.kernel(c_.gemm(Ti, V, H, DType::kBf16), 2.0 * T * vocab * h);
      b.kernel(c_.memory_bound(T * vocab * (2.0 + 4.0)));  // fused cross-entropy
    } else {
      b.kernel(c_.memory_bound(T * vocab * (2.0 + 2.0)));  // softmax gradient
      b.kernel(c_.gemm(Ti, H, V, DType::kBf16), 2.0 * T * vocab * h);
      if (!p.task.frozen_base())  // wgrad (none for LoRA's frozen head)
        b.kernel(c_.gemm(H, V, Ti, DType::kBf16), 2.0 * T * vocab * h);
    }
  }
  if (m_.mtp_layers > 0) {
    // Each MTP module: a projection of [h; embedding] (2h → h) and one transformer block of
    // the model's last-layer kind.
    for (int i = 0; i < m_.mtp_layers; ++i) {
      // A hybrid model's MTP module is an attention + MoE / MLP layer (Megatron's "/*E"
      // suffix), built as a layer past the decoder.
      const Block& blk = layer(is_hybrid(m_) ? m_.layers : m_.layers - 1, backward);
      for (const Segment& s : blk.segs)
        b.append(s, s.sync);  // MTP's syncs are folded in as GPU time
      const int64_t Ti = static_cast<int64_t>(T), H = m_.hidden;
      b.kernel(c_.gemm(Ti, H, 2 * H / p.tp, gd), 2.0 * T * h * 2.0 * h / p.tp);
      if (backward && !p.task.frozen_base())
        b.kernel(c_.gemm(2 * H / p.tp, H, Ti, gd), 2.0 * T * h * 2.0 * h / p.tp);
    }
  }
  return b.finish();
}

Time LayerCostModel::optimizer_time(int stage) {
  // Parameters this rank updates: its stage's share, divided over the DP × CP ranks when the
  // optimizer state is sharded (distributed optimizer / FSDP).
  const int V = p_.pp * p_.vp;
  double dense = 0, expert = 0;
  for (int l = 0; l < m_.layers; ++l) {
    // Virtual stage of layer l under an even split (the step simulator's split differs by at
    // most one layer per virtual stage).
    const int v = static_cast<int>(static_cast<int64_t>(l) * V / m_.layers);
    if (v % p_.pp != stage) continue;
    const RankParams r = rank_params(l);
    dense += r.dense;
    expert += r.expert;
  }
  if (stage == 0) dense += embedding_rank_params();
  if (stage == p_.pp - 1) dense += head_rank_params();
  if (p_.distributed_optimizer || p_.fsdp) {
    dense /= static_cast<double>(p_.dp) * p_.cp;
    const double edp =
        static_cast<double>(p_.tp) * p_.cp * p_.dp / (static_cast<double>(p_.ep) * p_.etp);
    expert /= edp;
  }
  // Adam: read FP32 master, m, v and the FP32 gradient, write master, m, v and the BF16
  // parameter copy: 4·4 + 3·4 + 2 = 30 bytes per parameter; plus the gradient-norm pass (4 B).
  const Time t = c_.memory_bound((dense + expert) * 34.0);
  return Time::from_ps(
      static_cast<int64_t>(std::llround(static_cast<double>(t.ps()) / fw_.kernel_efficiency)));
}

}  // namespace fleetsim
