// The class-based flow solver against the flow-by-flow solver it replaced (kept test-only in
// tests/net/reference_flow_network.h): every collective plan below runs on both, on the real
// topologies of p6-b200, GB200 NVL72 and DGX-H100 (ECMP), and the bandwidth times agree within
// 1 % (in practice to the picosecond). Random networks with unequal, staggered flows check the
// same for arbitrary routes; plans merge identical flows into classes and count them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "../net/reference_flow_network.h"
#include "coll/collective.h"
#include "core/rng.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

std::vector<int> iota(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

struct Counter final : FlowObserver {
  size_t done = 0;
  void on_flow_done(Simulator&, uint64_t) override { ++done; }
};

// Bandwidth time of `plan` on the reference network: every flow of every class started on its own
// with its route expanded to hops.
Time reference_time(const Topology& topo, const CollectivePlan& plan) {
  Simulator sim;
  testing::ReferenceFlowNetwork net(sim, topo.links());
  Counter c;
  for (const PlanFlow& f : plan.flows) {
    const Route r = plan.paths.expand(f.route);
    for (uint32_t k = 0; k < f.count; ++k)
      net.start(r, f.bytes, &c, 0);
  }
  sim.run();
  CHECK(c.done == plan.flow_count);
  return sim.now();
}

Time new_time(const Topology& topo, const CollectiveParams& p, CollectivePlan plan) {
  Simulator sim;
  FlowNetwork net(sim, topo.links());
  CollectiveRun run(p, std::move(plan));
  run.start(sim, net, nullptr, 0);
  sim.run();
  return run.bandwidth_time();
}

void check_close(Time a, Time b) {
  INFO("class solver " << a.ps() << " ps, reference " << b.ps() << " ps");
  CHECK(std::abs(static_cast<double>(a.ps() - b.ps())) <= 0.01 * static_cast<double>(b.ps()));
  // Equal in exact arithmetic: rounding leaves at most a few picoseconds per completion level.
  CHECK(std::abs(static_cast<double>(a.ps() - b.ps())) <= 1e-9 * static_cast<double>(b.ps()) + 64);
}

void compare(const Topology& topo, const CollectiveParams& p, CollOp op, Algorithm a, Bytes size,
             const std::vector<int>& ranks) {
  const CollectivePlan plan = plan_collective(topo, p, op, a, size, ranks, 7);
  INFO(to_string(op) << " " << to_string(a) << " on " << ranks.size() << " GPUs, "
                     << plan.flow_count << " flows in " << plan.flows.size() << " classes");
  check_close(new_time(topo, p, plan), reference_time(topo, plan));
}

}  // namespace

TEST_CASE("class solver: collectives on p6-b200 agree with the flow-by-flow solver") {
  const SystemSpec s = load_system("p6-b200.48xlarge", kRoot);
  const CollectiveParams p = load_collective_params(s, kRoot);
  const Topology topo(s, s.fabric, 4);  // 32 GPUs, 4 NVLink domains
  const Bytes size(64 << 20);
  compare(topo, p, CollOp::kAllToAll, Algorithm::kDirect, size, iota(32));
  compare(topo, p, CollOp::kAllReduce, Algorithm::kRing, size, iota(32));
  compare(topo, p, CollOp::kAllReduce, Algorithm::kTree, size, iota(32));
  compare(topo, p, CollOp::kAllGather, Algorithm::kRing, size, iota(32));
  compare(topo, p, CollOp::kBroadcast, Algorithm::kRing, size, iota(32));
  for (Algorithm a : candidate_algorithms(topo, CollOp::kAllReduce, iota(32)))
    compare(topo, p, CollOp::kAllReduce, a, size, iota(32));
  // A group that is not the whole cluster: GPUs 4..27 (uneven domains allow only some).
  std::vector<int> part;
  for (int g = 8; g < 24; ++g)
    part.push_back(g);
  compare(topo, p, CollOp::kAllToAll, Algorithm::kDirect, size, part);
}

TEST_CASE("class solver: NVL72 and ECMP (DGX-H100) collectives agree with the reference") {
  {
    const SystemSpec s = load_system("p6e-gb200-ultraserver-72", kRoot);
    const CollectiveParams p = load_collective_params(s, kRoot);
    const Topology topo(s, s.fabric, s.scale_up.domain_nodes * 2);  // 144 GPUs, 2 racks
    compare(topo, p, CollOp::kAllToAll, Algorithm::kDirect, Bytes(16 << 20), iota(72));
    compare(topo, p, CollOp::kAllReduce, Algorithm::kNvlsTree, Bytes(256 << 20), iota(144));
    compare(topo, p, CollOp::kAllReduce, Algorithm::kRing, Bytes(256 << 20), iota(144));
  }
  {
    const SystemSpec s = load_system("dgx-h100", kRoot);
    const CollectiveParams p = load_collective_params(s, kRoot);
    const Topology topo(s, s.fabric, 4);
    REQUIRE(s.fabric.routing == Routing::kEcmp);
    compare(topo, p, CollOp::kAllToAll, Algorithm::kDirect, Bytes(32 << 20), iota(32));
    compare(topo, p, CollOp::kAllReduce, Algorithm::kRing, Bytes(32 << 20), iota(32));
  }
}

TEST_CASE("class solver: a skewed all-to-allv (every pair its own size) stays exact") {
  const SystemSpec s = load_system("p6-b200.48xlarge", kRoot);
  const CollectiveParams p = load_collective_params(s, kRoot);
  const Topology topo(s, s.fabric, 3);
  const int n = topo.gpus();
  Rng rng(5);
  std::vector<std::vector<double>> m(n, std::vector<double>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      m[i][j] = rng.uniform_below(4) == 0 ? 0.0 : static_cast<double>(rng.uniform_below(1 << 24));
  }
  const CollectivePlan plan = plan_alltoallv(topo, p, iota(n), m, 3);
  REQUIRE(plan.flows.size() == plan.flow_count);  // no two pairs share a route: no merging
  check_close(new_time(topo, p, plan), reference_time(topo, plan));
}

TEST_CASE("class solver: identical flows of a plan are one class, counted") {
  const SystemSpec s = load_system("p6-b200.48xlarge", kRoot);
  const CollectiveParams p = load_collective_params(s, kRoot);
  const Topology topo(s, s.fabric, 4);
  // Ring all-reduce over 4 domains of 8: 8 channels × 4 domains × (7 NVLink edges + 1 exit).
  const CollectivePlan ring =
      plan_collective(topo, p, CollOp::kAllReduce, Algorithm::kRing, Bytes(1 << 20), iota(32), 1);
  CHECK(ring.flow_count == 8 * 4 * 8);
  // Channel c's ring inside a domain uses the NVLink edges v[c+k] → v[c+k+1], k < 7: each of
  // the 8 edges of a domain's cycle is used by 7 of the 8 channels, so 8 classes per domain
  // carry the 8 × 7 NVLink flows; the 8 exits are distinct (routes through different NICs).
  size_t nvlink_classes = 0, nvlink_flows = 0;
  for (const PlanFlow& f : ring.flows) {
    if (ring.paths.route_segments(f.route).size() == 2) {
      ++nvlink_classes;
      nvlink_flows += f.count;
    }
  }
  CHECK(nvlink_flows == 4 * 8 * 7);
  CHECK(nvlink_classes == 4 * 8);
  // An all-to-all has one route per ordered pair: nothing merges.
  const CollectivePlan a2a =
      plan_collective(topo, p, CollOp::kAllToAll, Algorithm::kDirect, Bytes(1 << 20), iota(32), 1);
  CHECK(a2a.flow_count == 32 * 31);
  CHECK(a2a.flows.size() == 32 * 31);
  // Each GPU sends S/32 to 31 peers; the 7 in its NVLink domain are inflated by 1/eta_a2a.
  CHECK(a2a.total_bytes() == Approx((7.0 / p.eta_a2a + 24.0) * (1 << 20)));
}

TEST_CASE("class solver: random networks with staggered unequal flows match the reference") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    const int links = 3 + static_cast<int>(rng.uniform_below(10));
    std::vector<Link> ls(links);
    for (auto& l : ls)
      l.capacity = Bandwidth::bytes_per_second(1.0 + static_cast<double>(rng.uniform_below(100)));
    Simulator sa, sb;
    FlowNetwork a(sa, ls);
    testing::ReferenceFlowNetwork b(sb, ls);
    struct Times final : FlowObserver {
      std::map<uint64_t, int64_t> at;
      void on_flow_done(Simulator& sim, uint64_t tag) override { at[tag] = sim.now().ps(); }
    } ta, tb;
    // Flows start in three waves; a flow's route is 1–4 distinct links, some sprayed.
    for (int wave = 0; wave < 3; ++wave) {
      const Time at = Time::from_seconds(wave * 0.5);
      sa.run(at);
      sb.run(at);
      for (int k = 0; k < 12; ++k) {
        Route r;
        const int hops = 1 + static_cast<int>(rng.uniform_below(4));
        std::vector<int> used;
        for (int h = 0; h < hops; ++h) {
          const int l = static_cast<int>(rng.uniform_below(links));
          if (std::find(used.begin(), used.end(), l) != used.end()) continue;
          used.push_back(l);
          r.hops.push_back(
              PathHop{static_cast<uint32_t>(l), rng.uniform_below(3) == 0 ? 0.5 : 1.0});
        }
        const double bytes = 1.0 + static_cast<double>(rng.uniform_below(200));
        const uint64_t tag = static_cast<uint64_t>(wave * 100 + k);
        a.start(r, bytes, &ta, tag);
        b.start(r, bytes, &tb, tag);
      }
    }
    sa.run();
    sb.run();
    REQUIRE(ta.at.size() == tb.at.size());
    for (const auto& [tag, t] : tb.at) {
      INFO("seed " << seed << " flow " << tag);
      CHECK(std::abs(static_cast<double>(ta.at[tag] - t)) <= 1e-9 * static_cast<double>(t) + 8);
    }
    for (int l = 0; l < links; ++l) {
      CHECK(a.link_bytes()[l] == Approx(b.link_bytes()[l]).epsilon(1e-9));
      CHECK(a.saturated_time(l).ps() == Approx(b.saturated_time(l).ps()).epsilon(1e-9).margin(64));
    }
  }
}

TEST_CASE("class solver: an all-to-all holds a few tens of bytes per flow") {
  const SystemSpec s = load_system("p6-b200.48xlarge", kRoot);
  const CollectiveParams p = load_collective_params(s, kRoot);
  const Topology topo(s, s.fabric, 16);  // 128 GPUs, 16,256 flows of ~68 hops each
  Simulator sim;
  FlowNetwork net(sim, topo.links());
  CollectiveRun run(p, plan_collective(topo, p, CollOp::kAllToAll, Algorithm::kDirect,
                                       Bytes(1 << 26), iota(128), 1));
  run.start(sim, net, nullptr, 0);
  const double per_flow = static_cast<double>(net.memory_bytes()) / (128.0 * 127.0);
  INFO(per_flow << " bytes per flow");
  // Flow state (64 B), ~5 segment ids (20 B) in the route table and ~5 entries (20 B) in the
  // segment lists, plus the shared segments; the flat hop lists were ~70 × 24 B per flow.
  CHECK(per_flow < 160);
  sim.run();
  CHECK(net.active_flows() == 0);
}
