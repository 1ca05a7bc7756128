#include "workload/internal/schedule.h"

#include <algorithm>
#include <limits>

#include "workload/step.h"

namespace fleetsim {

double bubble_fraction(int pp, int vp, int micro_batches) {
  return static_cast<double>(pp - 1) / (static_cast<double>(vp) * micro_batches);
}

namespace step_internal {

std::vector<ScheduleStep> schedule_order(int pp, int vp, int M, int stage) {
  std::vector<ScheduleStep> out;
  const int total = M * vp;
  auto fwd = [&](int k) {
    if (vp == 1) return ScheduleStep{true, 0, k};
    const int group = k / (pp * vp), in = k % (pp * vp);
    return ScheduleStep{true, in / pp, group * pp + in % pp};
  };
  auto bwd = [&](int k) {
    if (vp == 1) return ScheduleStep{false, 0, k};
    const int group = k / (pp * vp), in = k % (pp * vp);
    return ScheduleStep{false, vp - 1 - in / pp, group * pp + in % pp};
  };
  int warmup =
      vp == 1 ? std::min(pp - stage - 1, M) : std::min((pp - stage - 1) * 2 + (vp - 1) * pp, total);
  const int steady = total - warmup;
  int f = 0, b = 0;
  for (int i = 0; i < warmup; ++i)
    out.push_back(fwd(f++));
  for (int i = 0; i < steady; ++i) {
    out.push_back(fwd(f++));
    out.push_back(bwd(b++));
  }
  while (b < total)
    out.push_back(bwd(b++));
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

}  // namespace step_internal
}  // namespace fleetsim
