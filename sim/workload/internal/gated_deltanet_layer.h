// The kernels and collectives of one Gated DeltaNet block (a hybrid model's 'G' layer, Qwen3-Next's
// linear-attention mixer) on one rank, for one micro-batch: pre-norm, in_proj, causal conv1d,
// L2 norms, the chunked gated delta rule, gated RMSNorm, out_proj, residual; FP8 / MXFP8 /
// NVFP4 casts; TP all-gather / reduce-scatter with sequence parallelism.
#pragma once

#include "compute/compute_model.h"
#include "workload/layer_costs.h"
#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim::step_internal {

// Layer `layer` (a Gated DeltaNet block) forward, or backward with full recompute when
// configured.
Block build_gdn_layer(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                      const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer,
                      bool backward);

}  // namespace fleetsim::step_internal
