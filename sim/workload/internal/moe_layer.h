// The routed-expert part of one MoE layer on one rank, kernel by kernel as Megatron-Core runs it
// with Transformer Engine: router GEMM, score function + top-k, load-balancing loss, token
// counts, permute, EP dispatch, the local experts' GEMMs (one launch per expert where TE's
// GroupedLinear launches one, each with its quantisation), activation, combine, unpermute; the
// backward in reverse. Shared experts and the sequence-parallel collectives around the layer stay
// in decoder_layer.cpp.
#pragma once

#include "compute/compute_model.h"
#include "workload/internal/block_builder.h"
#include "workload/layer_costs.h"
#include "workload/model.h"
#include "workload/parallel.h"
#include "workload/step.h"

namespace fleetsim::step_internal {

struct MoeLayerInput {
  const ModelSpec& model;
  const ParallelConfig& par;
  const FrameworkOptions& fw;
  const ComputeModel& compute;
  const LayerCostModel::CommFn& comm;
  const LayerCostModel::EpFn& ep;  // DeepEP-style dispatch time (may be empty)
  double tokens = 0;               // tokens this rank routes (its sequence-parallel shard)
  bool recompute_act = false;      // backward: the expert activation is recomputed first
};

// Appends the routed experts' forward (or backward) kernels and EP syncs to `b`.
void build_moe_experts(const MoeLayerInput& in, bool backward, BlockBuilder& b);

}  // namespace fleetsim::step_internal
