// One Mamba-2 block as Megatron-Core's MambaLayer / MambaMixer runs it (megatron/core/ssm/
// mamba_mixer.py with mamba_ssm's kernels):
//   RMSNorm → in_proj [h → z, x, B, C, dt] → causal conv1d + SiLU over x, B, C
//   → SSD chunked scan (mamba_chunk_scan_combined) → gated RMSNorm norm(y · silu(z))
//   → out_proj [d_inner → h] → residual add.
// Tensor parallelism splits the heads and B/C groups (in_proj column-parallel, out_proj
// row-parallel, the gated norm per group so it needs no communication): the same all-gather /
// reduce-scatter (sequence parallel) or all-reduce as an attention block. Backward: each GEMM's
// dgrad and wgrad, the conv's and the norm's backward (3 and 5 passes of their tensors), the SSD
// backward; full recompute runs the forward first. Selective recompute has nothing to recompute
// in a Mamba block (Megatron's --recompute-modules name none of its parts).
#include "workload/internal/mamba_layer.h"

#include <algorithm>
#include <cmath>

#include "workload/internal/block_builder.h"
#include "workload/step.h"

namespace fleetsim::step_internal {
namespace {

class MambaBuilder {
 public:
  MambaBuilder(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
               const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer, bool backward)
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
        b_(backward ? "mamba backward" : "mamba forward", fw) {}

  Block build() {
    if (full_recompute_) pass(false);
    pass(backward_);
    return b_.finish();
  }

 private:
  void mem(double bytes) { b_.kernel(c_.memory_bound(bytes)); }
  void quant(double elements) {
    if (gd_ == DType::kBf16) return;
    b_.module_kernel(c_.quantize(static_cast<int64_t>(elements), gd_));
    if (p_.precision == PrecisionRecipe::kFp8Current)  // amax pass
      b_.module_kernel(c_.memory_bound(elements * 2.0));
  }
  // [rows × k]·[k × n] forward; backward its dgrad and wgrad. Returns the first GEMM's time.
  // One Transformer Engine module call (in_proj / out_proj are TE linears) on the host.
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
    b_.module_kernel(c_.gemm(K, N, M, gd_), fl);
    return dgrad;
  }
  void tp(CollOp op, Time hide) {
    const double bytes = T_ * h_ * 2.0;
    const Time t = comm_(Dim::kTp, op, bytes);
    b_.tp(t, fw_.tp_comm_overlap ? hide : Time::zero(), {Dim::kTp, op, bytes});
  }
  void ag(Time hide) {
    if (sp_) tp(CollOp::kAllGather, hide);
  }
  void rs(Time hide) {
    if (p_.tp > 1) tp(sp_ ? CollOp::kReduceScatter : CollOp::kAllReduce, hide);
  }

  void pass(bool bwd) {
    const MambaSpec& s = m_.mamba;
    const double tp = p_.tp;
    const double d = static_cast<double>(s.d_inner()) / tp;
    const double conv = static_cast<double>(s.conv_channels()) / tp;
    const double in_w = static_cast<double>(s.in_proj_width()) / tp;
    b_.begin_graph(kGraphMamba);               // CUDA-graph scope "mamba"
    mem(Tsp_ * h_ * 2.0 * (bwd ? 3.0 : 2.0));  // pre-norm
    const Time in_proj = linear(T_, in_w, h_, bwd);
    if (!bwd) ag(in_proj);
    const double conv_flops = 2.0 * s.conv_kernel * T_ * conv;
    b_.kernel(c_.memory_bound(T_ * conv * 2.0 * (bwd ? 3.0 : 2.0)), conv_flops * (bwd ? 2 : 1));
    SsdShape sh;
    sh.batch = p_.micro_batch;
    sh.seq = p_.seq_len / p_.cp;
    sh.heads = static_cast<int>(s.heads / p_.tp);
    sh.head_dim = s.head_dim;
    sh.state = s.state;
    sh.groups = std::max(1, static_cast<int>(s.groups / p_.tp));
    sh.chunk = s.chunk;
    // mamba_ssm's chunked scan runs 5 kernels forward (chunk_cumsum, chunk_state,
    // state_passing, bmm_chunk, chunk_scan) and 14 backward (those recomputed but chunk_scan,
    // then the dstates, state-passing, dx, dC, dB, dCB, ddA and cumsum gradients); the time is
    // spread over them (each a Triton launch from Python: one eager op's host cost).
    const double ssd_flops = T_ * ssd_scan_flops_per_token(s) / tp;
    const int parts = bwd ? 14 : 5;
    const Time ssd = c_.ssd_scan(sh, bwd);
    for (int i = 0; i < parts; ++i)
      b_.kernel(Time::from_ps(ssd.ps() / parts), ssd_flops * (bwd ? 2.0 : 1.0) / parts);
    mem(T_ * d * 2.0 * (bwd ? 5.0 : 3.0));  // gated RMSNorm: y, z in, out (bwd + dy, dz)
    const Time out_proj = linear(T_, h_, d, bwd);
    if (!bwd) rs(out_proj);
    if (bwd) {
      // As the attention block: RS of the input gradient, AG before out_proj's dgrad, and the
      // AG re-gathering the sequence-parallel input for in_proj's weight gradient.
      rs(in_proj);
      ag(out_proj);
      ag(in_proj);
    }
    mem(Tsp_ * h_ * 2.0 * 3.0);  // residual add
    b_.end_graph();
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

}  // namespace

Block build_mamba_layer(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                        const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer,
                        bool backward) {
  return MambaBuilder(m, p, fw, c, comm, layer, backward).build();
}

}  // namespace fleetsim::step_internal
