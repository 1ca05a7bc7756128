// One Mamba-2 block as Megatron-Core's MambaLayer / MambaMixer runs it (megatron/core/ssm/
// mamba_mixer.py at core_v0.16-0.18, the NeMo 26.02-26.08 containers, training path
// _ssm_training with mamba_ssm 2.3.1's mamba_split_conv1d_scan_combined):
//   RMSNorm → in_proj [h → z, x, B, C, dt] → causal conv1d + SiLU over x, B, C
//   → SSD chunked scan with the gate y · silu(z) in chunk_scan → RMSNorm (RMSNormGated
//   called without z) → out_proj [d_inner → h] → residual add.
// Tensor parallelism splits the heads and B/C groups (in_proj column-parallel, out_proj
// row-parallel, the norm per group so it needs no communication): the same all-gather /
// reduce-scatter (sequence parallel) or all-reduce as an attention block. Backward: each GEMM's
// dgrad and wgrad, the conv's forward again and its backward (mamba_ssm's
// MambaSplitConv1dScanCombinedFn saves zxBCdt, not the conv output: 2 + 3 passes), the norm's
// backward (3 passes, its weight-gradient sum and cast), the SSD backward kernel by kernel
// (compute/ssm.cpp ssd_kernels); full recompute runs the forward first. With more than
// one sequence per micro-batch, MambaMixer._ssm_training's [l, b] → [b, l] .contiguous() copies
// of zxBCdt and of y (and in_proj's copy of the permuted zxBCdt gradient). Selective recompute
// has nothing to recompute in a Mamba block (Megatron's --recompute-modules name none of its
// parts).
//
// Kernels per block and micro-batch (the count tests/workload/test_hybrid.cpp checks), forward:
// pre-norm, in_proj (its quantises + GEMM), conv, exp + neg + cast, 5 SSD, norm, out_proj,
// residual; backward: pre-norm, in_proj dgrad + wgrad, conv forward + backward, 3 small
// autograd ops, 37 SSD, norm + 2, out_proj dgrad + wgrad, residual.
#include "workload/internal/mamba_layer.h"

#include <algorithm>
#include <cmath>

#include "workload/internal/block_builder.h"
#include "workload/internal/mixer_builder.h"
#include "workload/step.h"

namespace fleetsim::step_internal {
namespace {

class MambaBuilder : public MixerBuilder {
 public:
  MambaBuilder(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
               const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer, bool backward)
      : MixerBuilder(backward ? "mamba backward" : "mamba forward", m, p, fw, c, comm, layer,
                     backward) {}

 private:
  void pass(bool bwd) override {
    const MambaSpec& s = m_.mamba;
    const double tp = p_.tp;
    const double d = static_cast<double>(s.d_inner()) / tp;
    const double conv = static_cast<double>(s.conv_channels()) / tp;
    const double in_w = static_cast<double>(s.in_proj_width()) / tp;
    b_.begin_graph(kGraphMamba);               // CUDA-graph scope "mamba"
    mem(Tsp_ * h_ * 2.0 * (bwd ? 3.0 : 2.0));  // pre-norm
    const Time in_proj = linear(T_, in_w, h_, bwd);
    if (!bwd) ag(in_proj);
    // MambaMixer._ssm_training turns in_proj's [l, b, ·] output into [b, l, ·] with
    // .contiguous(): a copy when the micro-batch has more than one sequence. Backward, the
    // gradient of zxBCdt comes back as the permuted view, which in_proj's backward copies.
    const bool batched = p_.micro_batch > 1;
    if (batched) mem(T_ * in_w * 2.0 * 2.0);
    // mamba_split_conv1d_scan_combined's backward runs causal_conv1d_fwd again (it saves
    // zxBCdt, not the conv output), then causal_conv1d_bwd: 2 + 3 passes of the conv tensor.
    const double conv_flops = 2.0 * s.conv_kernel * T_ * conv;
    if (bwd) b_.kernel(c_.memory_bound(T_ * conv * 2.0 * 2.0), conv_flops);
    b_.kernel(c_.memory_bound(T_ * conv * 2.0 * (bwd ? 3.0 : 2.0)), conv_flops * (bwd ? 2 : 1));
    SsdShape sh;
    sh.batch = p_.micro_batch;
    sh.seq = p_.seq_len / p_.cp;
    sh.heads = static_cast<int>(s.heads / p_.tp);
    sh.head_dim = s.head_dim;
    sh.state = s.state;
    sh.groups = std::max(1, static_cast<int>(s.groups / p_.tp));
    sh.chunk = s.chunk;
    // MambaMixer._ssm_training's small ops on the mixer's parameters before the fused call:
    // A = -torch.exp(A_log.float()) (exp, neg) and dt_bias.float() (a bf16 parameter); their
    // autograd backward: neg, exp's mul, the cast back.
    const double hl = static_cast<double>(s.heads) / tp;
    mem(hl * 4 * 2);
    mem(hl * 4 * 2);
    mem(hl * (2 + 4));
    // mamba_ssm's chunked scan kernel by kernel (compute/ssm.cpp, ssd_kernels: 5 forward, 37
    // backward), each a Triton or PyTorch launch inside the fused autograd function.
    for (const ComputeModel::SsdKernel& k : c_.ssd_kernels(sh, bwd))
      b_.kernel(k.time, k.flops);
    // y back to [l, b, ·] (.contiguous(), forward only: its gradient enters the scan's
    // backward as a permuted view, whose Triton kernels take the strides as they are).
    if (batched && !bwd) mem(T_ * d * 2.0 * 2.0);
    // MambaMixer's RMSNormGated is called without z: the gate y · silu(z) ran in chunk_scan.
    norm_out_proj_residual(d, in_proj, bwd, false);
    b_.end_graph();
  }
};

}  // namespace

Block build_mamba_layer(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                        const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer,
                        bool backward) {
  return MambaBuilder(m, p, fw, c, comm, layer, backward).build();
}

}  // namespace fleetsim::step_internal
