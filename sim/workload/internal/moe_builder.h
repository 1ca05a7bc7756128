// The builder of one MoE layer's routed experts (internal to moe_layer.cpp, the router, experts
// and pass order, and moe_dispatch.cpp, the token dispatchers and the EP exchange).
#pragma once

#include <cstdint>

#include "workload/internal/moe_layer.h"

namespace fleetsim::step_internal {

using MK = ComputeModel::MoeKernel;
using Pass = ComputeModel::GemmPass;

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

}  // namespace fleetsim::step_internal
