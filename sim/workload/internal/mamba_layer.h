// The kernels and collectives of one Mamba-2 block (a hybrid model's 'M' layer) on one rank, for
// one micro-batch: pre-norm, in_proj, causal conv1d, SSD chunked scan, gated RMSNorm, out_proj,
// residual; FP8 / MXFP8 / NVFP4 casts; TP all-gather / reduce-scatter with sequence parallelism.
#pragma once

#include "compute/compute_model.h"
#include "workload/layer_costs.h"
#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim::step_internal {

// Layer `layer` (a Mamba-2 block) forward, or backward with full recompute when configured.
Block build_mamba_layer(const ModelSpec& m, const ParallelConfig& p, const FrameworkOptions& fw,
                        const ComputeModel& c, const LayerCostModel::CommFn& comm, int layer,
                        bool backward);

}  // namespace fleetsim::step_internal
