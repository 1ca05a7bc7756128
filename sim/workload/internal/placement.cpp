#include "workload/internal/placement.h"

namespace fleetsim::step_internal {

std::vector<int> group_of(const Geometry& G, Dim d, int g) {
  std::vector<int> out;
  const int u = G.unit_of_gpu(g);
  const int t = g % G.tp, c = G.cp_of_unit(u), q = G.dp_of_unit(u), s = G.stage_of_unit(u);
  switch (d) {
    case Dim::kTp:
      for (int i = 0; i < G.tp; ++i)
        out.push_back(G.gpu(i, c, q, s));
      break;
    case Dim::kCp:
      for (int i = 0; i < G.cp; ++i)
        out.push_back(G.gpu(t, i, q, s));
      break;
    case Dim::kDp:  // gradients of dense parameters are reduced over DP × CP
      for (int j = 0; j < G.dp; ++j)
        for (int i = 0; i < G.cp; ++i)
          out.push_back(G.gpu(t, i, j, s));
      break;
    case Dim::kEp:
    case Dim::kEdp: {
      // Megatron expert order inside a stage: r = etp_rank + etp·(ep_rank + ep·edp_rank).
      const int per_stage = G.ranks_per_stage();
      const int base = s * per_stage;
      const int r = g - base;
      const int etp_rank = r % G.etp;
      const int ep_rank = G.ep_rank_of(g);
      const int edp_rank = r / (G.etp * G.ep);
      const int edp = per_stage / (G.etp * G.ep);
      if (d == Dim::kEp) {
        for (int i = 0; i < G.ep; ++i)
          out.push_back(base + etp_rank + G.etp * (i + G.ep * edp_rank));
      } else {
        for (int i = 0; i < edp; ++i)
          out.push_back(base + etp_rank + G.etp * (ep_rank + G.ep * i));
      }
      break;
    }
    case Dim::kPp:
      out.push_back(g);
      if (s + 1 < G.pp) out.push_back(G.gpu(t, c, q, s + 1));
      break;
  }
  return out;
}

}  // namespace fleetsim::step_internal
