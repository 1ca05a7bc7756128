// The kernels and collectives of one decoder layer on one rank, for one micro-batch: norms,
// QKV / MLA projections, fused attention (ring attention over CP), output projection, (gated)
// MLP or MoE router + permute + grouped expert GEMMs + shared experts, residuals; FP8 / MXFP8 /
// NVFP4 casts; TP all-gather / reduce-scatter with sequence parallelism; EP dispatch / combine.
#pragma once

#include "compute/compute_model.h"
#include "workload/layer_costs.h"
#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim::step_internal {

// Decoder layer `layer`'s forward (or, with `backward`, its backward with recompute) as one
// Block; kernel times from `c`, collective times from `comm` / `ep` (DeepEP-style dispatch, may
// be empty).
Block build_decoder_layer(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                          const ComputeModel& c, const LayerCostModel::CommFn& comm,
                          const LayerCostModel::EpFn& ep, int layer, bool backward);

}  // namespace fleetsim::step_internal
