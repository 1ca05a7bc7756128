// estimate_collective_flows (the work limit --max-flows) counts exactly the flows
// plan_collective builds, for every operation and algorithm, inside one NVLink domain, across
// uniform domains and across a partial last domain.
#include <catch2/catch.hpp>

#include <algorithm>

#include "coll/collective.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
std::vector<int> first(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i;
  return v;
}
}  // namespace

TEST_CASE("estimate_collective_flows equals plan_collective's flow_count") {
  for (const char* name : {"p6-b200.48xlarge", "p6e-gb200-ultraserver-72"}) {
    const SystemSpec sys = load_system(name, kRoot);
    const Topology topo(sys, sys.fabric, 216 / sys.node.gpus);  // 216 GPUs: 3 NVL72 racks
    const CollectiveParams params;
    for (int n : {2, 5, 8, 24, 72, 100, 144, 216}) {
      if (n > topo.gpus()) continue;
      for (CollOp op : {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter,
                        CollOp::kBroadcast, CollOp::kAllToAll}) {
        int64_t all = 0, largest = 0;
        for (Algorithm a : candidate_algorithms(topo, op, first(n))) {
          const int64_t f = static_cast<int64_t>(
              plan_collective(topo, params, op, a, Bytes(1 << 20), first(n), 1).flow_count);
          CAPTURE(name, n, to_string(op), to_string(a));
          CHECK(estimate_collective_flows(sys, op, a, n).flows == f);
          all += f;
          largest = std::max(largest, f);
        }
        CAPTURE(name, n, to_string(op));
        const FlowEstimate e = estimate_collective_flows(sys, op, Algorithm::kAuto, n);
        CHECK(e.flows == all);
        CHECK(e.largest_plan == largest);
      }
    }
  }
}

TEST_CASE("the all-to-all over 4096 GPUs is n(n-1) = 16773120 flows") {
  const SystemSpec sys = load_system("p6-b200.48xlarge", kRoot);
  CHECK(estimate_collective_flows(sys, CollOp::kAllToAll, Algorithm::kDirect, 4096).flows ==
        int64_t{4096} * 4095);
  CHECK(estimate_collective_flows(sys, CollOp::kSendRecv, Algorithm::kDirect, 2).flows == 1);
}
