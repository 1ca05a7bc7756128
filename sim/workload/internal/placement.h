// Rank geometry of the step simulator: Megatron-LM's rank order (tp fastest, then cp, dp, pp),
// the TP units (one per TP group) and the GPUs of each parallel group.
#pragma once

#include <vector>

#include "workload/layer_costs.h"

namespace fleetsim::step_internal {

// ---------------------------------------------------------------------------------------------
// Rank geometry

struct Geometry {
  int tp, cp, dp, pp, ep, etp;
  int world;
  int units;  // TP groups
  int unit_of_gpu(int g) const { return g / tp; }
  int stage_of_unit(int u) const { return u / (cp * dp); }
  int dp_of_unit(int u) const { return (u / cp) % dp; }
  int cp_of_unit(int u) const { return u % cp; }
  int unit(int cp_rank, int dp_rank, int pp_rank) const {
    return cp_rank + cp * (dp_rank + dp * pp_rank);
  }
  int gpu(int tp_rank, int cp_rank, int dp_rank, int pp_rank) const {
    return tp_rank + tp * unit(cp_rank, dp_rank, pp_rank);
  }
};

// GPUs of the group of dimension `d` that contains GPU g.
std::vector<int> group_of(const Geometry& G, Dim d, int g);

}  // namespace fleetsim::step_internal
