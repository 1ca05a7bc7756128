// Rank placement of the step simulator.
//
// Ranks follow Megatron-LM's default order (tp fastest, then cp, dp, pp):
// rank = tp_rank + tp·(cp_rank + cp·(dp_rank + dp·pp_rank)). The ranks of one TP group form a
// "TP unit", the thing the replay engine simulates (unit = rank / tp). Expert groups use
// Megatron's expert order inside a pipeline stage (etp fastest, then ep, then expert-DP).
// Rank r runs on GPU r unless ranks are placed on part of each NVLink domain (gpu_of_rank).
#pragma once

#include <vector>

#include "workload/layer_costs.h"

namespace fleetsim::step_internal {

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
  int ranks_per_stage() const { return tp * cp * dp; }
  // EP rank of rank g in Megatron's expert order: r = etp_rank + etp·(ep_rank + ep·edp_rank),
  // with r the rank's index inside its pipeline stage.
  int ep_rank_of(int g) const { return ((g % ranks_per_stage()) / etp) % ep; }
};

// Ranks of the group of dimension `d` that contains rank g (kPp: g and its successor stage).
std::vector<int> group_of(const Geometry& G, Dim d, int g);

// Physical GPU of rank r when `ranks_per_domain` ranks fill each NVLink domain of
// `gpus_per_domain` GPUs (0 = every GPU): (r / ranks_per_domain)·gpus_per_domain + r mod it.
inline int gpu_of_rank(int r, int ranks_per_domain, int gpus_per_domain) {
  if (ranks_per_domain <= 0) return r;
  return (r / ranks_per_domain) * gpus_per_domain + r % ranks_per_domain;
}

}  // namespace fleetsim::step_internal
