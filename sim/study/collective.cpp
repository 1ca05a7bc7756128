// Collective scenarios (collective.h).
#include "study/collective.h"

#include "core/error.h"

namespace fleetsim {

std::vector<int> collective_group(const CollectiveWorkload& w, const Topology& topo) {
  const int n = w.group_gpus > 0 ? w.group_gpus : topo.gpus();
  std::vector<int> ranks(n);
  for (int i = 0; i < n; ++i)
    ranks[i] = i;
  return ranks;
}

CollectiveResult simulate_scenario_collective(const Scenario& s, const StudyCluster& cluster,
                                              Bytes size) {
  FLEETSIM_ASSERT(s.collective.has_value());
  const CollectiveWorkload& w = *s.collective;
  return simulate_collective(cluster.topo, cluster.collective, w.op, w.algorithm, size,
                             collective_group(w, cluster.topo), s.seed);
}

CollectiveResult simulate_fastest_collective(const StudyCluster& cluster, CollOp op,
                                             const std::vector<Algorithm>& algorithms, Bytes size,
                                             const std::vector<int>& ranks, uint64_t seed) {
  FLEETSIM_ASSERT(!algorithms.empty());
  CollectiveResult best;
  bool have = false;
  for (Algorithm a : algorithms) {
    CollectiveResult r =
        simulate_collective(cluster.topo, cluster.collective, op, a, size, ranks, seed);
    if (!have || r.time < best.time) {
      best = r;
      have = true;
    }
  }
  return best;
}

}  // namespace fleetsim
