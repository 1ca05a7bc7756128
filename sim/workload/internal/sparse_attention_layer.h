// DeepSeek sparse attention (DSA) inside an MLA attention block on one rank, for one
// micro-batch: the lightning indexer (projections, key LayerNorm, RoPE and Hadamard rotation,
// causal scoring, top-k), the sparse core attention and the indexer's KL-loss target, forward
// or backward. The decoder-layer builder calls it in place of the dense core attention.
#pragma once

#include "compute/compute_model.h"
#include "workload/internal/block_builder.h"
#include "workload/layer_costs.h"
#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim::step_internal {

// Adds the DSA kernels and collectives to `b`; returns the sparse core's time.
Time add_sparse_attention(const ModelSpec& m, const ParallelConfig& p, const ComputeModel& c,
                          const LayerCostModel::CommFn& comm, bool backward, BlockBuilder& b);

}  // namespace fleetsim::step_internal
