#include <catch2/catch.hpp>
#include <cmath>

#include "coll/collective.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// An idealised system: B = 100 GB/s per GPU into the switch, no switch latency.
SystemSpec ideal(int gpus_per_node, int domain_nodes) {
  SystemSpec s = load_system("dgx-h100", kRoot);
  s.node.gpus = gpus_per_node;
  s.nics.per_node = gpus_per_node;
  s.unit_nodes = domain_nodes;
  s.scale_up.domain_nodes = domain_nodes;
  s.scale_up.gpu_bandwidth = Bandwidth::gbytes_per_second(100);
  s.scale_up.hop_latency = Time::zero();
  s.scale_up.nvls = false;
  return s;
}
CollectiveParams unit_params() {
  CollectiveParams p;
  p.eta_ring = p.eta_nvls = p.eta_a2a = 1.0;
  return p;
}
std::vector<int> iota(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i;
  return v;
}
}  // namespace

TEST_CASE("ring all-reduce inside one domain takes 2(n-1)/n S/B: busbw = B") {
  const SystemSpec s = ideal(8, 1);
  const Topology t(s, s.fabric, 1);
  const Bytes size(1 << 30);
  const auto r =
      simulate_collective(t, unit_params(), CollOp::kAllReduce, Algorithm::kRing, size, iota(8), 1);
  CHECK(r.time.seconds() == Approx(2.0 * 7 / 8 * size.as_double() / 100e9).epsilon(1e-9));
  CHECK(r.busbw_gbps == Approx(100).epsilon(1e-6));
}

TEST_CASE("ring latency follows the optimal-pipelining closed form") {
  const SystemSpec s = ideal(8, 1);
  const Topology t(s, s.fabric, 1);
  CollectiveParams p = unit_params();
  p.base_latency = Time::from_us(10);
  p.nvlink_step_latency = Time::from_us(1);
  const double S = 64.0 * (1 << 20);
  const auto r =
      simulate_collective(t, p, CollOp::kAllReduce, Algorithm::kRing, Bytes(64 << 20), iota(8), 1);
  const double tbw = 2.0 * 7 / 8 * S / 100e9;
  const double ap = 2 * 7 * 1e-6;
  const double want = 10e-6 + std::pow(std::sqrt(tbw) + std::sqrt(ap), 2);
  CHECK(r.time.seconds() == Approx(want).epsilon(1e-6));
}

TEST_CASE("all-gather and reduce-scatter rings move (n-1)/n S") {
  const SystemSpec s = ideal(4, 1);
  const Topology t(s, s.fabric, 1);
  for (CollOp op : {CollOp::kAllGather, CollOp::kReduceScatter}) {
    const auto r =
        simulate_collective(t, unit_params(), op, Algorithm::kRing, Bytes(400'000'000), iota(4), 1);
    CHECK(r.time.seconds() == Approx(0.75 * 4e8 / 100e9).epsilon(1e-9));
    CHECK(r.busbw_gbps == Approx(100).epsilon(1e-6));
  }
}

TEST_CASE("NVLS all-reduce moves S(1+1/n) per direction per GPU") {
  SystemSpec s = ideal(8, 1);
  s.scale_up.nvls = true;
  s.scale_up.nvls_min_gpus = 6;
  const Topology t(s, s.fabric, 1);
  const auto r = simulate_collective(t, unit_params(), CollOp::kAllReduce, Algorithm::kNvls,
                                     Bytes(1 << 30), iota(8), 1);
  CHECK(r.time.seconds() == Approx(9.0 / 8 * (1 << 30) / 100e9).epsilon(1e-9));
  const auto pick = simulate_collective(t, unit_params(), CollOp::kAllReduce, Algorithm::kAuto,
                                        Bytes(1 << 30), iota(8), 1);
  CHECK(pick.algorithm == Algorithm::kNvls);  // 1.125 S beats the ring's 1.75 S
}

TEST_CASE("all-to-all inside a domain: each GPU sends (n-1)/n S") {
  const SystemSpec s = ideal(8, 1);
  const Topology t(s, s.fabric, 1);
  const auto r = simulate_collective(t, unit_params(), CollOp::kAllToAll, Algorithm::kDirect,
                                     Bytes(800'000'000), iota(8), 1);
  CHECK(r.time.seconds() == Approx(7.0 / 8 * 8e8 / 100e9).epsilon(1e-9));
  CHECK(r.flows == 56);
}

TEST_CASE("multi-node ring is bounded by the NICs: busbw = NICs per node x NIC rate") {
  SystemSpec s = ideal(8, 1);
  s.nics.bandwidth = Bandwidth::gbytes_per_second(10);
  s.fabric.protocol_efficiency = 1.0;
  s.fabric.nic_latency = Time::zero();
  s.fabric.hop_latency = Time::zero();
  s.node.pcie_bandwidth = Bandwidth::gbytes_per_second(64);
  const Topology t(s, s.fabric, 4);
  const auto r = simulate_collective(t, unit_params(), CollOp::kAllReduce, Algorithm::kRing,
                                     Bytes(1 << 30), iota(32), 1);
  CHECK(r.busbw_gbps == Approx(80).epsilon(1e-3));
}

TEST_CASE("2:1 oversubscription halves cross-group ring bandwidth under ECMP-free spraying") {
  SystemSpec s = ideal(8, 1);
  s.nics.bandwidth = Bandwidth::gbytes_per_second(10);
  s.fabric.protocol_efficiency = 1.0;
  s.fabric.rail_optimized = false;  // every ring hop between nodes crosses the spine
  s.fabric.nodes_per_leaf_group = 1;
  s.fabric.routing = Routing::kSrd;
  const Topology full(s, s.fabric, 4);
  FabricSpec f = s.fabric;
  f.oversubscription = 2.0;
  const Topology over(s, f, 4);
  const auto a = simulate_collective(full, unit_params(), CollOp::kAllReduce, Algorithm::kRing,
                                     Bytes(1 << 30), iota(32), 1);
  const auto b = simulate_collective(over, unit_params(), CollOp::kAllReduce, Algorithm::kRing,
                                     Bytes(1 << 30), iota(32), 1);
  CHECK(b.bandwidth_time.seconds() == Approx(2 * a.bandwidth_time.seconds()).epsilon(0.01));
}

TEST_CASE("busbw factors are the nccl-tests ones") {
  CHECK(busbw_factor(CollOp::kAllReduce, 8) == Approx(1.75));
  CHECK(busbw_factor(CollOp::kAllGather, 8) == Approx(0.875));
  CHECK(busbw_factor(CollOp::kBroadcast, 8) == Approx(1.0));
}
