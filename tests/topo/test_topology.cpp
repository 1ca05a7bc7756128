#include <catch2/catch.hpp>

#include "net/path_table.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "topo/topology.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
SystemSpec sys(const char* name) {
  return load_system(name, kRoot);
}
size_t distinct_chain_hops(const Route& r) {
  size_t n = 0;
  for (const auto& h : r.hops)
    n += h.weight == 1.0 ? 1 : 0;
  return n;
}
}  // namespace

TEST_CASE("every shipped topology loads and builds a connected graph") {
  for (const auto& name : known_systems(kRoot)) {
    INFO(name);
    const SystemSpec s = sys(name.c_str());
    const Topology t(s, s.fabric, 2 * s.unit_nodes);
    CHECK(t.gpus() == 2 * s.unit_nodes * s.node.gpus);
    CHECK(is_strongly_connected(t));
  }
}

TEST_CASE("p6-b200: 8 GPUs per NVLink domain, one 400G EFA NIC per GPU") {
  const SystemSpec s = sys("p6-b200.48xlarge");
  const Topology t(s, s.fabric, 64);
  CHECK(t.gpus() == 512);
  CHECK(t.domains() == 64);
  CHECK(t.gpus_per_domain() == 8);
  CHECK(t.nics_of_gpu(13) == std::vector<int>{13});
  CHECK(s.nics.bandwidth.gbytes_per_second() == Approx(50));
}

TEST_CASE("NVL72: 72 GPUs over 18 trays share one NVLink domain") {
  const SystemSpec s = sys("p6e-gb200-ultraserver-72");
  const Topology t(s, s.fabric, 36);
  CHECK(t.gpus() == 144);
  CHECK(t.domains() == 2);
  CHECK(t.domain_of(71) == 0);
  CHECK(t.domain_of(72) == 1);
  const Route r = t.route(0, 71, 0);
  CHECK(r.hops.size() == 2);  // GPU → NVSwitch → GPU, no NIC
}

TEST_CASE("structural routes are as short as breadth-first paths (ECMP)") {
  SystemSpec s = sys("dgx-h100");
  FabricSpec f = s.fabric;
  f.routing = Routing::kEcmp;
  f.nodes_per_leaf_group = 4;  // 3 leaf groups → cross-group traffic crosses a spine
  const Topology t(s, f, 12);
  for (auto [a, b] : {std::pair{0, 1}, std::pair{0, 8}, std::pair{3, 95}, std::pair{7, 40}}) {
    INFO(a << " -> " << b);
    const Route r = t.route(a, b, 17);
    CHECK(static_cast<int>(distinct_chain_hops(r)) ==
          shortest_hops(t, t.gpu_vertex(a), t.gpu_vertex(b)));
  }
}

TEST_CASE("SRD sprays a cross-leaf flow evenly over all planes, ECMP picks one") {
  SystemSpec s = sys("p6-b200.48xlarge");
  FabricSpec f = s.fabric;
  f.nodes_per_leaf_group = 2;
  const Topology srd(s, f, 4);
  const Route r = srd.route(0, 2 * 8 + 0, 5);  // node 0 → node 2, other leaf group, same rail
  double w = 0;
  for (const auto& h : r.hops) {
    if (srd.links()[h.link].kind == LinkKind::kLeafSpine) w += h.weight;
  }
  CHECK(w == Approx(2.0));  // up and down, each summing to 1 over the planes
  CHECK(r.hops.size() == 4 + 2 * static_cast<size_t>(srd.planes()));
  f.routing = Routing::kEcmp;
  const Topology ecmp(s, f, 4);
  CHECK(ecmp.route(0, 16, 5).hops.size() == 6);
}

TEST_CASE("oversubscription divides leaf uplink capacity") {
  SystemSpec s = sys("p6-b200.48xlarge");
  FabricSpec f = s.fabric;
  const Topology full(s, f, 64);
  f.oversubscription = 2.0;
  const Topology half(s, f, 64);
  auto uplink = [](const Topology& t) {
    for (const auto& l : t.links()) {
      if (l.kind == LinkKind::kLeafSpine) return l.capacity.bytes_per_second();
    }
    return 0.0;
  };
  // 32 nodes × 400 Gb/s × 0.97 efficiency over the planes, halved at 2:1.
  CHECK(uplink(full) == Approx(32 * 50e9 * s.fabric.protocol_efficiency / full.planes()));
  CHECK(uplink(half) == Approx(uplink(full) / 2));
}

TEST_CASE("route shapes split into the same segments, in the same order, as their hop lists") {
  // p5 (4 NICs per GPU, SRD over all planes), p6e NVL72 (4 NICs, racks), DGX-H100 with ECMP on
  // three tiers (one plane per flow, core hops), p6-b200 with SRD over fewer paths than planes.
  struct Case {
    const char* system;
    int nodes;
    Routing routing;
    int tiers;
    int srd_paths;
  };
  for (const Case c : {Case{"p5.48xlarge", 8, Routing::kSrd, 2, 0},
                       Case{"p6e-gb200-ultraserver-72", 36, Routing::kSrd, 2, 0},
                       Case{"dgx-h100", 16, Routing::kEcmp, 3, 0},
                       Case{"p6-b200.48xlarge", 8, Routing::kSrd, 2, 3}}) {
    INFO(c.system);
    const SystemSpec s = sys(c.system);
    FabricSpec f = s.fabric;
    f.routing = c.routing;
    f.tiers = c.tiers;
    f.srd_paths = c.srd_paths;
    f.nodes_per_leaf_group = 2;
    f.switch_radix = 8;
    const Topology t(s, f, c.nodes);
    PathTable by_hops(t.links()), by_shape(t.links());
    std::vector<uint32_t> a, b;
    RouteShape shape;
    const int n = t.gpus();
    for (int src = 0; src < n; src += 3) {
      for (int dst = 0; dst < n; dst += 5) {
        const uint64_t hash = static_cast<uint64_t>(src) * 7919 + static_cast<uint64_t>(dst);
        const Route r = t.route(src, dst, hash);
        t.route_shape(src, dst, hash, &shape);
        by_hops.split(r, &a);
        by_shape.split(t, shape, &b);
        REQUIRE(a == b);  // same ids: the tables handed them out in the same order
        CHECK(shape.latency == r.latency);
      }
    }
    CHECK(by_hops.segments() == by_shape.segments());
  }
}
