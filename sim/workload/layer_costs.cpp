#include "workload/layer_costs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
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

namespace {

DType gemm_dtype(PrecisionRecipe p) {
  switch (p) {
    case PrecisionRecipe::kBf16:
      return DType::kBf16;
    case PrecisionRecipe::kFp8Delayed:
    case PrecisionRecipe::kFp8Current:
    case PrecisionRecipe::kFp8Block:
      return DType::kFp8;
    case PrecisionRecipe::kMxfp8:
      return DType::kMxfp8;
    case PrecisionRecipe::kNvfp4:
      return DType::kNvfp4;
  }
  return DType::kBf16;
}

// Accumulates the kernels of one block, cutting a new Segment at each synchronisation.
class Builder {
 public:
  Builder(const char* name, Time gap, double efficiency) : gap_(gap), eff_(efficiency) {
    cur_.name = name;
  }
  void kernel(Time t, double flops = 0) {
    cur_.compute += Time::from_ps(static_cast<int64_t>(std::llround(t.ps() / eff_))) + gap_;
    blk_.flops += flops;
    blk_.kernels++;
  }
  // A kernel whose calibration was measured inside a framework (the grouped-GEMM tables come
  // from PyTorch autograd runs), so the in-step efficiency is already part of its time.
  void framework_kernel(Time t, double flops) {
    cur_.compute += t + gap_;
    blk_.flops += flops;
    blk_.kernels++;
  }
  // TP communication of `comm` that can hide behind `hidden` of adjacent GEMM time.
  void tp(Time comm, Time hidden, const CollCall& call) {
    if (comm <= Time::zero()) return;
    cur_.tp += comm > hidden ? comm - hidden : Time::zero();
    blk_.colls.push_back(call);
  }
  void exposed(Time t) { cur_.tp += t; }
  void sync(Dim d, Time t, const char* name, const CollCall& call, const char* next_name) {
    cur_.sync_dim = static_cast<int>(d);
    cur_.sync = t;
    cur_.sync_name = name;
    blk_.colls.push_back(call);
    blk_.segs.push_back(cur_);
    cur_ = Segment{};
    cur_.name = next_name;
    cur_.experts = std::string(next_name) == "experts";
  }
  Block finish() {
    if (cur_.compute > Time::zero() || cur_.tp > Time::zero()) blk_.segs.push_back(cur_);
    return std::move(blk_);
  }

 private:
  Time gap_;
  double eff_;
  Segment cur_;
  Block blk_;
};

}  // namespace

LayerCostModel::LayerCostModel(const ModelSpec& m, const ParallelConfig& p,
                               const FrameworkOptions& fw, const ComputeModel& compute, CommFn comm)
    : m_(m), p_(p), fw_(fw), c_(compute), comm_(std::move(comm)) {}

RankParams LayerCostModel::rank_params(int layer) const {
  const LayerParams lp = layer_params(m_, layer);
  RankParams r;
  r.dense =
      static_cast<double>(lp.attention + lp.norms + lp.dense_mlp + lp.router + lp.shared_experts) /
      p_.tp;
  r.expert = static_cast<double>(lp.routed_experts) / (static_cast<double>(p_.ep) * p_.etp);
  return r;
}

double LayerCostModel::embedding_rank_params() const {
  return static_cast<double>(embedding_params(m_)) / p_.tp;
}

double LayerCostModel::head_rank_params() const {
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
  const int kind = (moe ? 1 : 0) + (windowed ? 2 : 0);
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
  const ModelSpec& m = m_;
  const ParallelConfig& p = p_;
  const auto& a = m.attention;
  const DType gd = gemm_dtype(p.precision);
  const bool lowp = gd != DType::kBf16;
  const double tp = p.tp;
  const int64_t T = static_cast<int64_t>(p.micro_batch) * p.seq_len / p.cp;  // tokens per rank
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double Tsp = sp ? static_cast<double>(T) / tp : static_cast<double>(T);
  const double h = static_cast<double>(m.hidden);
  const bool moe = is_moe_layer(m, layer);
  const bool windowed =
      a.sliding_window > 0 && a.window_pattern > 0 && (layer % a.window_pattern) < a.window_layers;
  const bool full_recompute =
      backward && p.recompute == Recompute::kFull &&
      (p.recompute_layers == 0 || (layer % std::max(1, m.layers / p.pp)) < p.recompute_layers);
  const bool selective = backward && p.recompute == Recompute::kSelective;
  auto recompute = [&](unsigned module) { return selective && (p.recompute_modules & module); };

  Builder b(backward ? "layer backward" : "layer forward", fw_.kernel_gap, fw_.kernel_efficiency);
  auto mem = [&](double bytes) { b.kernel(c_.memory_bound(bytes)); };
  auto quant = [&](double elements) {
    if (!lowp) return;
    // One fused kernel writes the row-wise copy and, where needed, the column-wise one
    // (ComputeModel::quantized_copies).
    b.kernel(c_.quantize(static_cast<int64_t>(elements), gd));
    if (p.precision == PrecisionRecipe::kFp8Current) mem(elements * 2.0);  // amax pass
  };
  // One GEMM of the forward pass [T × k]·[k × n]; in backward its dgrad and wgrad.
  auto linear = [&](double rows, double n, double k, bool bwd) -> Time {
    const int64_t M = static_cast<int64_t>(std::llround(rows));
    const int64_t N = static_cast<int64_t>(std::llround(n));
    const int64_t K = static_cast<int64_t>(std::llround(k));
    if (!bwd) {
      quant(rows * k);
      const Time t = c_.gemm(M, N, K, gd);
      b.kernel(t, 2.0 * rows * n * k);
      return t;
    }
    quant(rows * n);
    const Time dgrad = c_.gemm(M, K, N, gd);
    const Time wgrad = c_.gemm(K, N, M, gd);
    b.kernel(dgrad, 2.0 * rows * n * k);
    b.kernel(wgrad, 2.0 * rows * n * k);
    return dgrad;
  };
  auto tp_coll = [&](CollOp op, double bytes) -> Time {
    return p.tp > 1 ? comm_(Dim::kTp, op, bytes) : Time::zero();
  };
  const double act_bytes = static_cast<double>(T) * h * 2.0;  // full activation, BF16
  auto ag = [&](Time hide) {
    if (p.tp == 1) return;
    if (sp) {
      b.tp(tp_coll(CollOp::kAllGather, act_bytes), fw_.tp_comm_overlap ? hide : Time::zero(),
           {Dim::kTp, CollOp::kAllGather, act_bytes});
    }
  };
  auto rs = [&](Time hide) {
    if (p.tp == 1) return;
    const CollOp op = sp ? CollOp::kReduceScatter : CollOp::kAllReduce;
    b.tp(tp_coll(op, act_bytes), fw_.tp_comm_overlap ? hide : Time::zero(),
         {Dim::kTp, op, act_bytes});
  };

  // ---- attention block ----
  const int heads = a.heads / p.tp;
  const int kvh = a.kind == AttentionKind::kMla ? heads : std::max(1, a.kv_heads / p.tp);
  const int dqk =
      a.kind == AttentionKind::kMla ? a.qk_nope_head_dim + a.qk_rope_head_dim : a.head_dim;
  const int dv = a.kind == AttentionKind::kMla ? a.v_head_dim : a.head_dim;
  AttentionShape as;
  as.batch = p.micro_batch;
  as.seq_q = p.seq_len;
  as.seq_kv = p.seq_len;
  as.heads = heads;
  as.kv_heads = kvh;
  as.head_dim_qk = dqk;
  as.head_dim_v = dv;
  as.causal = true;
  as.window = windowed ? a.sliding_window : 0;
  const double attn_flops_fwd = [&] {
    const double s = static_cast<double>(p.seq_len);
    const double span = windowed ? std::min<double>(a.sliding_window, s) : s / 2.0;
    return 2.0 * p.micro_batch * heads * s * span * (dqk + dv);
  }();

  auto attention_block = [&](bool bwd) {
    mem(Tsp * h * 2.0 * (bwd ? 3.0 : 2.0));  // input RMSNorm
    if (bwd && recompute(kRecomputeLayernorm)) mem(Tsp * h * 2.0 * 2.0);
    Time first_gemm;
    if (a.kind == AttentionKind::kMla) {
      const double qd = a.q_lora_rank > 0 ? a.q_lora_rank : 0;
      if (bwd && recompute(kRecomputeMlaUpProj)) {  // q / kv up-projections again
        if (qd > 0) linear(T, heads * static_cast<double>(dqk), qd, false);
        linear(T, heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank,
               false);
      }
      if (qd > 0) {
        first_gemm = linear(T, qd, h, bwd);
        linear(T, heads * static_cast<double>(dqk), qd, bwd);
      } else {
        first_gemm = linear(T, heads * static_cast<double>(dqk), h, bwd);
      }
      linear(T, a.kv_lora_rank + a.qk_rope_head_dim, h, bwd);
      linear(T, heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank,
             bwd);
    } else {
      first_gemm = linear(T, (heads + 2.0 * kvh) * a.head_dim, h, bwd);
    }
    if (!bwd) ag(first_gemm);
    mem(static_cast<double>(T) * (heads + kvh) * dqk * 2.0 * 2.0);  // RoPE on q and k
    // Core attention (ring attention over CP: this rank's share of the causal work).
    // With CP, Transformer Engine's load-balanced ring attention splits the sequence into 2·cp
    // chunks, two per rank: step 0 is causal attention of the rank's s/cp queries on its own
    // keys, each of the other cp − 1 steps attends half a block (s/(2cp) × s/cp), so the rank
    // does 1/cp of the causal work in cp shorter kernels.
    auto core = [&](bool backward) {
      if (p.cp == 1) return c_.attention(as, backward, DType::kBf16);
      AttentionShape diag = as;
      diag.seq_q = diag.seq_kv = p.seq_len / p.cp;
      AttentionShape half = as;
      half.seq_q = p.seq_len / (2 * p.cp);
      half.seq_kv = p.seq_len / p.cp;
      half.causal = false;
      return c_.attention(diag, backward, DType::kBf16) +
             Time::from_ps((p.cp - 1) * c_.attention(half, backward, DType::kBf16).ps());
    };
    Time at = core(bwd);
    if (bwd && recompute(kRecomputeCoreAttn)) at += core(false);
    b.kernel(at, attn_flops_fwd * (bwd ? 2.5 : 1.0) / p.cp);
    if (p.cp > 1) {
      // p.cp − 1 exchanges of this rank's K and V chunk (and dK, dV backward), each overlapped
      // with one step of the attention kernel.
      const double kv = 2.0 * p.micro_batch * (static_cast<double>(p.seq_len) / p.cp) * kvh *
                        (dqk + dv) / 2.0 * 2.0 * (bwd ? 2.0 : 1.0);
      const Time t = comm_(Dim::kCp, CollOp::kSendRecv, kv);
      const Time step = Time::from_ps(at.ps() / p.cp);
      const Time exposed = Time::from_ps((p.cp - 1) * std::max<int64_t>(0, (t - step).ps()));
      b.sync(Dim::kCp, exposed, "cp ring exchange", {Dim::kCp, CollOp::kSendRecv, kv},
             bwd ? "attention backward" : "attention forward");
    }
    const Time proj = linear(T, h, heads * static_cast<double>(dv), bwd);
    if (!bwd) rs(proj);
    if (bwd) {
      // Backward of the AG is a RS of the input gradient (overlapped with the first GEMM's
      // wgrad), of the RS an AG (before the output projection's dgrad), plus the AG that
      // re-gathers the sequence-parallel input for the weight gradient.
      rs(first_gemm);
      ag(proj);
      ag(first_gemm);
    }
    mem(Tsp * h * 2.0 * 3.0);  // residual add
  };

  auto dense_mlp = [&](double ffn, bool bwd, double rows) {
    const double f = ffn / tp;
    const double up = (m.mlp == MlpKind::kGated ? 2.0 : 1.0) * f;
    if (bwd && recompute(kRecomputeMlp)) {  // the MLP's forward again before its backward
      linear(rows, up, h, false);
      mem(rows * f * 2.0 * 3.0);
      linear(rows, h, f, false);
    }
    const Time g1 = linear(rows, up, h, bwd);
    mem(rows * f * 2.0 * (bwd ? 5.0 : 3.0));  // activation (SwiGLU: 2 in, 1 out)
    const Time g2 = linear(rows, h, f, bwd);
    return std::make_pair(g1, g2);
  };

  auto mlp_block = [&](bool bwd) {
    mem(Tsp * h * 2.0 * (bwd ? 3.0 : 2.0));  // pre-MLP RMSNorm
    if (bwd && recompute(kRecomputeLayernorm)) mem(Tsp * h * 2.0 * 2.0);
    if (!moe) {
      const auto [g1, g2] = dense_mlp(static_cast<double>(m.ffn), bwd, static_cast<double>(T));
      if (!bwd) {
        ag(g1);
        rs(g2);
      } else {
        rs(g1);
        ag(g2);
        ag(g1);
      }
    } else {
      const auto& mo = m.moe;
      // Tokens this rank routes (sequence-parallel shard of the micro-batch).
      const double Tm = sp ? static_cast<double>(T) / tp : static_cast<double>(T);
      const double local_experts = static_cast<double>(mo.experts) / p.ep;
      const double rows = Tm * mo.top_k * p.etp;  // token copies this rank's experts process
      const double per_group = rows / local_experts;
      const double fe = static_cast<double>(mo.expert_ffn) / p.etp;
      const double up = (m.mlp == MlpKind::kGated ? 2.0 : 1.0) * fe;
      if (sp && !bwd) ag(Time::zero());
      linear(Tm, static_cast<double>(mo.experts), h, bwd);  // router
      mem(Tm * mo.experts * 4.0 * 3.0);                     // softmax / top-k
      mem(Tm * mo.top_k * h * 2.0 * 2.0);                   // permute
      // Dispatch carries tokens to their experts, combine brings the outputs back; backward
      // runs them in reverse with gradients (BF16). The DeepEP-style dispatcher sends FP8
      // tokens (with one FP32 scale per 128 values) when the GEMMs run in FP8.
      const bool deepep = fw_.moe_dispatcher == MoeDispatcher::kDeepEp && ep_;
      const double copy_bf16 = h * 2.0;
      const double copy_dispatch = deepep && lowp ? h * (1.0 + 4.0 / 128.0) : copy_bf16;
      auto ep_time = [&](double bytes_per_copy) {
        if (p.ep == 1) return Time::zero();
        if (deepep) return ep_(Tm, bytes_per_copy);
        return comm_(Dim::kEp, CollOp::kAllToAll, Tm * mo.top_k * bytes_per_copy);
      };
      const double a2a = Tm * mo.top_k * copy_bf16;
      const Time t_first = ep_time(bwd ? copy_bf16 : copy_dispatch);
      const Time t_second = ep_time(copy_bf16);
      if (p.ep > 1)
        b.sync(Dim::kEp, t_first, bwd ? "ep combine (grad)" : "ep dispatch",
               {Dim::kEp, CollOp::kAllToAll, a2a}, "experts");
      auto grouped = [&](double n, double k) {
        const int64_t G = static_cast<int64_t>(std::llround(local_experts));
        const int64_t Mg = std::max<int64_t>(1, static_cast<int64_t>(std::llround(per_group)));
        const int64_t N = static_cast<int64_t>(std::llround(n));
        const int64_t K = static_cast<int64_t>(std::llround(k));
        const double fl = 2.0 * rows * n * k;
        if (lowp) b.kernel(c_.quantize(static_cast<int64_t>(rows * k), gd));
        if (!bwd) {
          b.framework_kernel(c_.grouped_gemm(G, Mg, N, K, gd), fl);
        } else {
          b.framework_kernel(c_.grouped_gemm(G, Mg, K, N, gd), fl);  // dgrad
          b.framework_kernel(c_.grouped_gemm(G, N, K, Mg, gd), fl);  // wgrad (per expert)
        }
      };
      if (bwd && recompute(kRecomputeMoeAct)) mem(rows * fe * 2.0 * 3.0);
      grouped(up, h);
      mem(rows * fe * 2.0 * (bwd ? 5.0 : 3.0));
      grouped(h, fe);
      if (p.ep > 1)
        b.sync(Dim::kEp, t_second, bwd ? "ep dispatch (grad)" : "ep combine",
               {Dim::kEp, CollOp::kAllToAll, a2a}, "moe tail");
      mem(Tm * mo.top_k * h * 2.0 * 2.0);  // unpermute + weighted sum
      if (mo.shared_experts > 0) {
        dense_mlp(static_cast<double>(mo.shared_expert_ffn) * mo.shared_experts, bwd,
                  static_cast<double>(T));
      }
      if (sp && !bwd) rs(Time::zero());
      if (sp && bwd) {
        rs(Time::zero());
        ag(Time::zero());
      }
    }
    mem(Tsp * h * 2.0 * 3.0);  // residual add
  };

  if (!backward) {
    attention_block(false);
    mlp_block(false);
  } else {
    if (full_recompute) {
      attention_block(false);
      mlp_block(false);
    }
    mlp_block(true);
    attention_block(true);
  }
  return b.finish();
}

Block LayerCostModel::build_embedding(bool backward) {
  Builder b(backward ? "embedding backward" : "embedding", fw_.kernel_gap, fw_.kernel_efficiency);
  const double T = static_cast<double>(p_.micro_batch) * p_.seq_len / p_.cp;
  const double rows = (p_.sequence_parallel && p_.tp > 1) ? T / p_.tp : T;
  b.kernel(c_.memory_bound(rows * static_cast<double>(m_.hidden) * 2.0 * (backward ? 3.0 : 2.0)));
  return b.finish();
}

Block LayerCostModel::build_head(bool backward) {
  const ParallelConfig& p = p_;
  Builder b(backward ? "head backward" : "head", fw_.kernel_gap, fw_.kernel_efficiency);
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
      b.kernel(c_.gemm(H, V, Ti, DType::kBf16), 2.0 * T * vocab * h);
    }
  }
  if (m_.mtp_layers > 0) {
    // Each MTP module: a projection of [h; embedding] (2h → h) and one transformer block of
    // the model's last-layer kind.
    for (int i = 0; i < m_.mtp_layers; ++i) {
      const Block& blk = layer(m_.layers - 1, backward);
      for (const Segment& s : blk.segs) {
        Segment c = s;
        c.sync_dim = -1;  // MTP's syncs are folded in as exposed time
        c.compute += s.sync;
        b.kernel(c.compute);
        b.exposed(c.tp);
      }
      const int64_t Ti = static_cast<int64_t>(T), H = m_.hidden;
      b.kernel(c_.gemm(Ti, H, 2 * H / p.tp, gd), 2.0 * T * h * 2.0 * h / p.tp);
      if (backward) b.kernel(c_.gemm(2 * H / p.tp, H, Ti, gd), 2.0 * T * h * 2.0 * h / p.tp);
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
  return Time::from_ps(static_cast<int64_t>(std::llround(t.ps() / fw_.kernel_efficiency)));
}

}  // namespace fleetsim
