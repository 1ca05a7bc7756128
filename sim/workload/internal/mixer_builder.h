// The parts a sequence-mixer block builder shares (Mamba-2 in mamba_layer.cpp, Gated DeltaNet in
// gated_deltanet_layer.cpp): the per-rank token counts, full recompute, and the helpers that
// issue a Transformer Engine linear (quantise, GEMMs, host module call), a memory-bound pass and
// the block's TP collectives (`name`: the block's name in traces, a string literal). A builder
// derives from it and writes pass(); build() runs the recomputed forward (full recompute) and the
// pass itself.
#pragma once

#include <algorithm>
#include <cmath>

#include "workload/internal/block_builder.h"
#include "workload/step.h"

namespace fleetsim::step_internal {

class MixerBuilder {
 public:
  virtual ~MixerBuilder() = default;

  Block build() {
    if (full_recompute_) pass(false);
    pass(backward_);
    return b_.finish();
  }

 protected:
  MixerBuilder(const char* name, const ModelSpec& m, const ParallelConfig& p,
               const FrameworkOptions& fw, const ComputeModel& c,
               const LayerCostModel::CommFn& comm, int layer, bool backward)
      : m_(m),
        p_(p),
        fw_(fw),
        c_(c),
        comm_(comm),
        backward_(backward),
        gd_(gemm_dtype(p.precision)),
        T_(static_cast<double>(p.micro_batch) * p.seq_len / p.cp),
        sp_(p.sequence_parallel && p.tp > 1),
        Tsp_(sp_ ? T_ / p.tp : T_),
        h_(static_cast<double>(m.hidden)),
        full_recompute_(backward && p.recompute == Recompute::kFull &&
                        (p.recompute_layers == 0 ||
                         (layer % std::max(1, m.layers / p.pp)) < p.recompute_layers)),
        b_(name, fw) {}

  virtual void pass(bool bwd) = 0;

  void mem(double bytes) { b_.kernel(c_.memory_bound(bytes)); }
  void quant(double elements) { quantize_kernels(b_, c_, p_.precision, elements); }
  // [rows × k]·[k × n] forward; backward its dgrad and wgrad (no wgrad for LoRA's frozen base
  // weights, workload/task.h: the mixer projections are no LoRA target, so no adapter either).
  // Returns the first GEMM's time. One Transformer Engine module call (in_proj / out_proj are
  // TE linears) on the host.
  Time linear(double rows, double n, double k, bool bwd) {
    const int64_t M = std::llround(rows), N = std::llround(n), K = std::llround(k);
    const double fl = 2.0 * rows * n * k;
    b_.module();
    if (!bwd) {
      quant(rows * k);
      const Time t = c_.gemm(M, N, K, gd_);
      b_.module_kernel(t, fl);
      return t;
    }
    quant(rows * n);
    const Time dgrad = c_.gemm(M, K, N, gd_);
    b_.module_kernel(dgrad, fl);
    if (!p_.task.frozen_base()) b_.module_kernel(c_.gemm(K, N, M, gd_), fl);  // wgrad
    return dgrad;
  }
  void tp(CollOp op, Time hide) {
    const double bytes = T_ * h_ * 2.0;
    const Time t = comm_(Dim::kTp, op, bytes);
    b_.tp(t, fw_.tp_comm_overlap ? hide : Time::zero(), {Dim::kTp, op, bytes, Time::zero()});
  }
  void ag(Time hide) {
    if (sp_) tp(CollOp::kAllGather, hide);
  }
  void rs(Time hide) {
    if (p_.tp > 1) tp(sp_ ? CollOp::kReduceScatter : CollOp::kAllReduce, hide);
  }
  // A chunked kernel's measured time and FLOPs spread evenly over the Triton launches it makes
  // (each an eager launch from Python).
  void spread(Time t, double flops, int parts) {
    for (int i = 0; i < parts; ++i)
      b_.kernel(Time::from_ps(t.ps() / parts), flops / parts);
  }
  // The mixer's tail, after its chunked kernel: the RMSNorm over `width` values per token, the
  // out-projection, the TP collectives as the attention block's (backward: RS of the input
  // gradient, AG before out_proj's dgrad, AG re-gathering the sequence-parallel input for
  // in_proj's weight gradient) and the residual add. `gated`: the norm multiplies by silu(z)
  // (forward y|o and z in, out; backward also their gradients); otherwise the gate ran inside
  // the chunked kernel and the norm is y in, out (backward dy and y in, dy out, then its weight
  // gradient's .sum(0) over the row-group partials and the cast to the weight's dtype:
  // mamba_ssm layernorm_gated.py _layer_norm_bwd).
  void norm_out_proj_residual(double width, Time in_proj, bool bwd, bool gated = true) {
    if (gated) {
      mem(T_ * width * 2.0 * (bwd ? 5.0 : 3.0));
    } else {
      mem(T_ * width * 2.0 * (bwd ? 3.0 : 2.0));
      if (bwd) {
        mem(width * 4.0 * 2.0);  // _dw.sum(0) (fp32 row-group partials, at least one row)
        mem(width * 6.0);        // .to(weight.dtype)
      }
    }
    const Time out_proj = linear(T_, h_, width, bwd);
    if (!bwd) rs(out_proj);
    if (bwd) {
      rs(in_proj);
      ag(out_proj);
      ag(in_proj);
    }
    mem(Tsp_ * h_ * 2.0 * 3.0);
  }

  const ModelSpec& m_;
  const ParallelConfig& p_;
  const FrameworkOptions& fw_;
  const ComputeModel& c_;
  const LayerCostModel::CommFn& comm_;
  const bool backward_;
  const DType gd_;
  const double T_;  // tokens per rank
  const bool sp_;
  const double Tsp_;
  const double h_;
  const bool full_recompute_;
  BlockBuilder b_;
};

}  // namespace fleetsim::step_internal
