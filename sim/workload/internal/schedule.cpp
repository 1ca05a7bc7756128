#include "workload/internal/schedule.h"

#include <algorithm>
#include <limits>

namespace fleetsim {

double bubble_fraction(int pp, int vp, int micro_batches) {
  return static_cast<double>(pp - 1) / (static_cast<double>(vp) * micro_batches);
}

namespace step_internal {

std::vector<ScheduleStep> schedule_order(int pp, int vp, int M, int stage) {
  std::vector<ScheduleStep> out;
  const int total = M * vp;
  auto at = [&](int k, bool forward) {
    if (vp == 1) return ScheduleStep{forward, 0, k};
    const int group = k / (pp * vp), in = k % (pp * vp);
    return ScheduleStep{forward, forward ? in / pp : vp - 1 - in / pp, group * pp + in % pp};
  };
  int warmup =
      vp == 1 ? std::min(pp - stage - 1, M) : std::min((pp - stage - 1) * 2 + (vp - 1) * pp, total);
  const int steady = total - warmup;
  int f = 0, b = 0;
  for (int i = 0; i < warmup; ++i)
    out.push_back(at(f++, true));
  for (int i = 0; i < steady; ++i) {
    out.push_back(at(f++, true));
    out.push_back(at(b++, false));
  }
  while (b < total)
    out.push_back(at(b++, false));
  return out;
}

std::vector<int> split_layers(int layers, int vstages) {
  std::vector<int> n(vstages, layers / vstages);
  int rem = layers % vstages;
  std::vector<int> order;
  for (int v = 1; v + 1 < vstages; ++v)
    order.push_back(v);
  if (vstages > 1) order.push_back(vstages - 1);
  order.push_back(0);
  for (int i = 0; rem > 0; i = (i + 1) % static_cast<int>(order.size()), --rem)
    n[order[i]]++;
  return n;
}

std::vector<int> balanced_split(const std::vector<double>& items, int parts) {
  const int n = static_cast<int>(items.size());
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + items[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: minimal max cost of splitting the first i items into k non-empty groups.
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> cut(parts + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= parts; ++k) {
    for (int i = k; i <= n - (parts - k); ++i) {
      for (int j = k - 1; j < i; ++j) {
        if (best[k - 1][j] == inf) continue;
        const double v = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (v < best[k][i]) {
          best[k][i] = v;
          cut[k][i] = j;
        }
      }
    }
  }
  std::vector<int> bounds(parts + 1, 0);
  bounds[parts] = n;
  for (int k = parts, i = n; k > 0; --k) {
    i = cut[k][i];
    bounds[k - 1] = i;
  }
  // Items [bounds[k], bounds[k+1]) are group k; count decoder layers (item 0 is the embedding,
  // item n−1 the head).
  std::vector<int> layers(parts, 0);
  for (int k = 0; k < parts; ++k)
    for (int i = bounds[k]; i < bounds[k + 1]; ++i)
      if (i != 0 && i != n - 1) layers[k]++;
  return layers;
}

std::vector<int> layers_per_vstage(const ModelSpec& m, PipelineSplit split, int vstages,
                                   LayerCostModel& costs, std::vector<std::string>* warnings) {
  const bool balanced = split == PipelineSplit::kBalanced ||
                        (split == PipelineSplit::kAuto && m.layers % vstages != 0);
  if (!balanced) return split_layers(m.layers, vstages);
  auto cost = [](const Block& b) {
    int64_t t = 0;
    for (const Segment& sg : b.segs)
      t += sg.compute.ps() + sg.tp.ps() + sg.sync.ps();
    return static_cast<double>(t);
  };
  std::vector<double> items;
  items.push_back(cost(costs.embedding(false)) + cost(costs.embedding(true)));
  for (int l = 0; l < m.layers; ++l)
    items.push_back(cost(costs.layer(l, false)) + cost(costs.layer(l, true)));
  items.push_back(cost(costs.head(false)) + cost(costs.head(true)));
  std::vector<int> per_v = balanced_split(items, vstages);
  warnings->push_back("pipeline layers split to balance stage time (" + std::to_string(m.layers) +
                      " layers over " + std::to_string(vstages) + " virtual stages)");
  return per_v;
}

}  // namespace step_internal
}  // namespace fleetsim
