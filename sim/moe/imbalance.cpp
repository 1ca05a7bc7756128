#include "moe/imbalance.h"

#include <algorithm>

namespace fleetsim {

MoeLoadTable load_table(const RoutingResult& r) {
  MoeLoadTable t;
  t.moe_layers = r.moe_layers;
  t.micro_batches = r.micro_batches;
  t.ep = r.ep;
  t.rank_factor.resize(static_cast<size_t>(r.moe_layers) * r.micro_batches * r.ep);
  t.a2a_factor.resize(static_cast<size_t>(r.moe_layers) * r.micro_batches);
  for (int l = 0; l < r.moe_layers; ++l) {
    for (int mb = 0; mb < r.micro_batches; ++mb) {
      const LayerLoad& ld = r.loads[l][mb];
      const double balanced = ld.total / r.ep;
      double busiest = 0;
      for (int q = 0; q < r.ep; ++q) {
        const double f = balanced > 0 ? ld.rank[q] / balanced : 1.0;
        t.rank_factor[(static_cast<size_t>(l) * r.micro_batches + mb) * r.ep + q] =
            static_cast<float>(f);
        busiest = std::max(busiest, f);
      }
      t.a2a_factor[static_cast<size_t>(l) * r.micro_batches + mb] = static_cast<float>(busiest);
    }
  }
  return t;
}

MoeSummary summarize(const RoutingResult& r) {
  MoeSummary s;
  s.rank_tokens.assign(r.ep, 0.0);
  s.heatmap.assign(r.moe_layers, std::vector<double>(r.ep, 0.0));
  double dropped = 0, total = 0;
  for (int l = 0; l < r.moe_layers; ++l) {
    double e_sum = 0, q_sum = 0;
    for (int mb = 0; mb < r.micro_batches; ++mb) {
      const LayerLoad& ld = r.loads[l][mb];
      e_sum += max_over_mean(ld.expert);
      // Rank max over the balanced share (drops lower it).
      const double balanced = ld.total / r.ep;
      double busiest = 0;
      for (int q = 0; q < r.ep; ++q) {
        busiest = std::max(busiest, ld.rank[q]);
        s.heatmap[l][q] += ld.rank[q] / r.micro_batches;
        s.rank_tokens[q] += ld.rank[q] / (static_cast<double>(r.micro_batches) * r.moe_layers);
      }
      const double f = balanced > 0 ? busiest / balanced : 0;
      q_sum += f;
      s.rank_max_over_mean_worst = std::max(s.rank_max_over_mean_worst, f);
      dropped += ld.dropped;
      total += ld.total;
    }
    s.expert_max_over_mean.push_back(e_sum / r.micro_batches);
    s.rank_max_over_mean.push_back(q_sum / r.micro_batches);
    s.expert_max_over_mean_avg += s.expert_max_over_mean.back() / r.moe_layers;
    s.rank_max_over_mean_avg += s.rank_max_over_mean.back() / r.moe_layers;
  }
  s.maxvio = s.expert_max_over_mean_avg - 1.0;
  s.dropped_fraction = total > 0 ? dropped / total : 0;
  s.bias_trajectory = r.bias_trajectory;
  return s;
}

}  // namespace fleetsim
