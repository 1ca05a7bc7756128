// One Gated DeltaNet block as Megatron-Core's GatedDeltaNet runs it (megatron/core/ssm/
// gated_delta_net.py with FLA's kernels):
//   RMSNorm → in_proj [h → q, k, v, z, β, α] → causal conv1d + SiLU over q, k, v → L2 norm of
//   q, k and their repeat to the v heads → g = −exp(A_log)·softplus(α + dt_bias), β = σ(β)
//   → chunked gated delta rule (FLA chunk_gated_delta_rule) → RMSNorm(o) · silu(z)
//   → out_proj [v_heads · v_head_dim → h] → residual add.
// Tensor parallelism splits the key and value heads (in_proj column-parallel, out_proj
// row-parallel; the norm is per head, no communication): the same all-gather / reduce-scatter
// (sequence parallel) or all-reduce as an attention block. Backward: each GEMM's dgrad and
// wgrad, the element-wise passes' backward, the chunk kernel's backward; full recompute runs
// the forward first. Megatron's selective recompute names no part of the block.
// Kimi Delta Attention (gdn.kda; tp = 1, step_check.h): the GEMMs from the hidden state (q, k, v,
// f_a, g_a, b) as one linear, the low-rank up projections f_b, g_b as another, no repeat of q, k
// (one head count), the per-channel decay gate (fp32) in place of the per-head g, FLA's chunk_kda
// timed at the Gated DeltaNet chunk kernel's rate for its shape (no KDA rows: the fallback
// step.cpp reports), the sigmoid-gated norm, o_proj.
#include "workload/internal/gated_deltanet_layer.h"

#include <algorithm>
#include <cmath>

#include "workload/internal/block_builder.h"
#include "workload/internal/mixer_builder.h"
#include "workload/step.h"

namespace fleetsim::step_internal {
namespace {

class GdnBuilder : public MixerBuilder {
 public:
  GdnBuilder(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
             const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer, bool backward)
      : MixerBuilder(backward ? "gdn backward" : "gdn forward", m, p, fw, c, comm, layer,
                     backward) {}

 private:
  void pass(bool bwd) override {
    const GdnSpec& s = m_.gdn;
    const double tp = p_.tp;
    const double qk = static_cast<double>(s.qk_dim()) / tp;
    const double v = static_cast<double>(s.v_dim()) / tp;
    const double hv = s.v_heads / tp;
    const double conv = static_cast<double>(s.conv_channels()) / tp;
    const double in_w = static_cast<double>(s.in_proj_width()) / tp;
    const double rep_qk = 2.0 * hv * s.qk_head_dim;  // q, k repeated to the v heads
    const double pass_r = bwd ? 3.0 : 2.0;           // tensors read + written per element
    mem(Tsp_ * h_ * 2.0 * pass_r);                   // pre-norm
    const Time in_proj = linear(T_, in_w, h_, bwd);
    if (!bwd) ag(in_proj);
    if (s.kda) linear(T_, qk + v, s.v_head_dim, bwd);  // f_b, g_b (low-rank up projections)
    const double conv_flops = 2.0 * s.conv_kernel * T_ * conv;
    b_.kernel(c_.memory_bound(T_ * conv * 2.0 * pass_r), conv_flops * (bwd ? 2 : 1));
    mem(T_ * 2.0 * qk * 2.0 * pass_r);  // L2 norm of q and k
    if (s.kda) {
      mem(T_ * qk * (2.0 + 4.0) * pass_r + T_ * hv * (2.0 + 4.0) * pass_r);  // decay gate, β
    } else {
      mem(T_ * (2.0 * qk + rep_qk) * 2.0);              // repeat_interleave to the v heads
      mem(T_ * hv * (2.0 + 2.0 + 4.0 + 4.0) * pass_r);  // g and β from α, β (fp32 g)
    }
    GdnShape sh;
    sh.batch = p_.micro_batch;
    sh.seq = p_.seq_len / p_.cp;
    sh.heads = static_cast<int>(s.v_heads / p_.tp);
    sh.head_dim_k = s.qk_head_dim;
    sh.head_dim_v = s.v_head_dim;
    sh.chunk = s.chunk;
    // FLA's chunk_gated_delta_rule launches 6 Triton kernels forward (chunk_local_cumsum,
    // chunk_scaled_dot_kkt, solve_tril, recompute_w_u, chunk_fwd_h, chunk_fwd_o) and about
    // twice as many backward; the measured time is spread over them (each an eager launch).
    const double chunk_flops = T_ * gdn_chunk_flops_per_token(s) / tp;
    spread(c_.gdn_chunk(sh, bwd), chunk_flops * (bwd ? 2.0 : 1.0), bwd ? 12 : 6);
    norm_out_proj_residual(v, in_proj, bwd);  // gated RMSNorm over o, z
  }
};

}  // namespace

Block build_gdn_layer(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                      const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer,
                      bool backward) {
  return GdnBuilder(m, p, fw, c, comm, layer, backward).build();
}

}  // namespace fleetsim::step_internal
