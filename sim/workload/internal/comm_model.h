// Collective durations of the step simulator, from sim/coll on the cluster topology.
//
// Every group of a parallel dimension that shares nodes with the dimension's first group runs
// the collective at the same time on one flow network (a "wave"), so the groups contend for the
// same NICs and links as they do on the real machine. Results are memoized per dimension,
// operation and size (bytes rounded to whole bytes); the links a wave used are kept for the USE
// view (link_bytes / link_saturated_s after account()).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "coll/collective.h"
#include "topo/topology.h"
#include "workload/internal/placement.h"
#include "workload/layer_costs.h"
#include "workload/step.h"

namespace fleetsim::step_internal {

class CommModel {
 public:
  CommModel(const Topology& topo, const CollectiveParams& params, const Geometry& G, uint64_t seed,
            int ranks_per_domain)
      : topo_(topo), params_(params), G_(G), seed_(seed), rpd_(ranks_per_domain) {}

  // Physical GPU of rank r.
  int gpu_of(int r) const { return gpu_of_rank(r, rpd_, topo_.gpus_per_domain()); }

  // Duration of collective `op` of `bytes` per rank over a group of dimension d (zero for no
  // bytes); throws InputError when no algorithm can run on the placement.
  Time time(Dim d, CollOp op, double bytes);
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  const std::vector<double>& link_saturated_s() const { return link_sat_; }

  // One EP dispatch / combine of `dispatcher`'s library and mode (sim/coll/dispatch.h) inside
  // every EP group co-located with the first, at the same time on one flow network: each rank
  // holds `tokens` tokens of `bytes_per_copy` bytes, each routed to top_k of `experts` experts
  // spread evenly over the group (balanced routing). Kernel time (the API's host-side waits
  // are the host model's); the combine's reduction factor is not applied.
  Time ep_dispatch(double tokens, double bytes_per_copy, int experts, int top_k,
                   MoeDispatcher dispatcher, int sms);
  // Bytes that one occurrence of (d, op, bytes) put on each link, for the USE view.
  void account(Dim d, CollOp op, double bytes, double occurrences);

 private:
  using Key = std::tuple<int, int, int64_t>;  // (dim, op, bytes)
  static Key key(Dim d, CollOp op, double bytes);
  // The groups of dimension d whose nodes are those of its first group, as physical GPUs.
  std::vector<std::vector<int>> colocated_groups(Dim d);
  // The fastest candidate algorithm's wave (memoizes the links it used).
  Time simulate(Dim d, CollOp op, double bytes);

  const Topology& topo_;
  const CollectiveParams& params_;
  const Geometry& G_;
  uint64_t seed_;
  int rpd_;
  std::map<Key, Time> memo_;
  std::map<std::tuple<int64_t, int64_t, int>, Time> ep_memo_;
  struct WaveLink {
    uint32_t link;
    double bytes;
    double saturated_s;
  };
  std::map<Key, std::vector<WaveLink>> link_memo_;
  std::vector<double> link_sat_;
  std::map<int, std::vector<std::vector<int>>> groups_;
  std::vector<double> link_bytes_;
};

}  // namespace fleetsim::step_internal
