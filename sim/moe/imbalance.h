// From routed loads (moe/routing.h) to what the step simulator applies (the per-rank load table)
// and what the report shows (max/mean loads, MaxVio, dropped tokens, a layer × rank heatmap).
#pragma once

#include <vector>

#include "moe/routing.h"
#include "workload/step.h"

namespace fleetsim {

// rank_factor = the rank's kept copies / the balanced count (copies / ep); a2a_factor = the
// busiest rank's copies / the balanced count (its link carries that much more).
MoeLoadTable load_table(const RoutingResult& r);

struct MoeSummary {
  // Per MoE layer, averaged over micro-batches.
  std::vector<double> expert_max_over_mean;
  std::vector<double> rank_max_over_mean;
  double expert_max_over_mean_avg = 0;  // over layers
  double rank_max_over_mean_avg = 0;
  double rank_max_over_mean_worst = 0;  // worst layer and micro-batch
  double maxvio = 0;                    // expert max/mean − 1 (Wang et al. 2024), layer average
  double dropped_fraction = 0;          // dropped copies / routed copies
  std::vector<double> rank_tokens;      // per EP rank: copies per layer per micro-batch (mean)
  std::vector<std::vector<double>> heatmap;  // [layer][rank]: mean copies per micro-batch
  std::vector<double> bias_trajectory;
};

MoeSummary summarize(const RoutingResult& r);

}  // namespace fleetsim
