#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "net/flow_network.h"

using namespace fleetsim;

namespace {
Link link_of(double bytes_per_s) {
  Link l;
  l.capacity = Bandwidth::bytes_per_second(bytes_per_s);
  return l;
}
Route route_of(std::vector<PathHop> hops) {
  Route r;
  r.hops = std::move(hops);
  return r;
}
struct Done final : FlowObserver {
  std::map<uint64_t, double> at;  // tag → completion time in seconds
  void on_flow_done(Simulator& sim, uint64_t tag) override { at[tag] = sim.now().seconds(); }
};
}  // namespace

TEST_CASE("max-min shares on a two-link line match the hand solution") {
  // L0 = 10 B/s carries A and B; L1 = 4 B/s carries B and C. Max-min: B = C = 2 (L1 saturates),
  // then A takes what is left of L0: 8.
  Simulator sim;
  FlowNetwork net(sim, {link_of(10), link_of(4)});
  Done done;
  const uint32_t a = net.start(route_of({{0, 1.0}}), 100, &done, 'A');
  const uint32_t b = net.start(route_of({{0, 1.0}, {1, 1.0}}), 20, &done, 'B');
  const uint32_t c = net.start(route_of({{1, 1.0}}), 20, &done, 'C');
  sim.run(Time::from_seconds(1));
  CHECK(net.rate(a) == Approx(8));
  CHECK(net.rate(b) == Approx(2));
  CHECK(net.rate(c) == Approx(2));
  sim.run();
  // B and C finish at 20/2 = 10 s; A has moved 80 B by then, the last 20 B go at 10 B/s: 12 s.
  CHECK(done.at['B'] == Approx(10.0));
  CHECK(done.at['C'] == Approx(10.0));
  CHECK(done.at['A'] == Approx(12.0));
}

TEST_CASE("a sprayed flow uses weight x rate on each parallel link") {
  Simulator sim;
  FlowNetwork net(sim, {link_of(1), link_of(1)});
  Done done;
  const uint32_t f = net.start(route_of({{0, 0.5}, {1, 0.5}}), 4, &done, 1);
  sim.run(Time::from_seconds(0.5));
  CHECK(net.rate(f) == Approx(2));
  sim.run();
  CHECK(done.at[1] == Approx(2.0));
}

TEST_CASE("bytes are conserved on every link") {
  Simulator sim;
  FlowNetwork net(sim, {link_of(7), link_of(3), link_of(5)});
  Done done;
  net.start(route_of({{0, 1.0}, {1, 1.0}}), 33, &done, 1);
  net.start(route_of({{0, 1.0}, {2, 1.0}}), 50, &done, 2);
  net.start(route_of({{1, 1.0}, {2, 1.0}}), 12, &done, 3);
  net.start(route_of({{2, 0.5}, {0, 0.5}}), 8, &done, 4);
  sim.run();
  CHECK(done.at.size() == 4);
  CHECK(net.link_bytes()[0] == Approx(33 + 50 + 4));
  CHECK(net.link_bytes()[1] == Approx(33 + 12));
  CHECK(net.link_bytes()[2] == Approx(50 + 12 + 4));
  CHECK(net.active_flows() == 0);
}

TEST_CASE("route latency delays delivery, not bandwidth") {
  Simulator sim;
  FlowNetwork net(sim, {link_of(100)});
  Done done;
  Route r = route_of({{0, 1.0}});
  r.latency = Time::from_us(5);
  net.start(r, 100, &done, 9);
  sim.run();
  CHECK(done.at[9] == Approx(1.0 + 5e-6));
}

TEST_CASE("flows in disjoint components keep their completion times") {
  Simulator sim;
  FlowNetwork net(sim, {link_of(1), link_of(1)});
  Done done;
  net.start(route_of({{0, 1.0}}), 10, &done, 1);
  sim.run(Time::from_seconds(2));
  net.start(route_of({{1, 1.0}}), 1, &done, 2);
  sim.run();
  CHECK(done.at[1] == Approx(10.0));
  CHECK(done.at[2] == Approx(3.0));
}

TEST_CASE("saturation: a link counts the time its capacity is fully allocated") {
  // Same line as the hand solution above: L1 (4 B/s) is the bottleneck of B and C until they end
  // at 10 s; L0 (10 B/s) is full (A at 8 + B at 2) for those 10 s, then A alone at 10 B/s until
  // 12 s: 12 s. After that both links are idle.
  Simulator sim;
  FlowNetwork net(sim, {link_of(10), link_of(4)});
  Done done;
  net.start(route_of({{0, 1.0}}), 100, &done, 'A');
  net.start(route_of({{0, 1.0}, {1, 1.0}}), 20, &done, 'B');
  net.start(route_of({{1, 1.0}}), 20, &done, 'C');
  sim.run();
  CHECK(net.saturated_time(1).seconds() == Approx(10.0));
  CHECK(net.saturated_time(0).seconds() == Approx(12.0));
  // A flow limited by a faster link elsewhere leaves its other links unsaturated.
  Simulator sim2;
  FlowNetwork net2(sim2, {link_of(10), link_of(4)});
  net2.start(route_of({{0, 1.0}, {1, 1.0}}), 8, &done, 'D');
  sim2.run();
  CHECK(net2.saturated_time(1).seconds() == Approx(2.0));
  CHECK(net2.saturated_time(0).seconds() == 0.0);
}

namespace {
// Deliveries in the order they arrive, with their times.
struct Ordered final : FlowObserver {
  std::vector<std::pair<uint64_t, int64_t>> got;  // (tag, ps)
  void on_flow_done(Simulator& sim, uint64_t tag) override {
    got.emplace_back(tag, sim.now().ps());
  }
};

// `groups` × `per_group` flows of sizes 1, 2, …, groups MB, each over its own 1 GB/s link and
// one shared 1 GB/s link (one component), started in a shuffled order; returns the deliveries.
// Max-min: the f unfinished flows share the shared link equally (1/f GB/s each), so the group of
// size k ends after Σ_{j ≤ k} (f_j × 1 MB) / (1 GB/s), f_j = flows left while group j finishes.
std::vector<std::pair<uint64_t, int64_t>> run_groups(int groups, int per_group,
                                                     std::vector<int64_t>* expected_ps) {
  const int n = groups * per_group;
  std::vector<Link> links(n + 1, link_of(1e9));
  Simulator sim;
  FlowNetwork net(sim, links);
  Ordered obs;
  for (int i = 0; i < n; ++i) {
    const int f =
        (i * 7919) % n;  // a permutation of 0 … n−1 (7919 is prime, n is not its multiple)
    const int group = f % groups;
    net.start(route_of({{static_cast<uint32_t>(f + 1), 1.0}, {0, 1.0}}), (group + 1) * 1e6, &obs,
              static_cast<uint64_t>(f));
  }
  sim.run();
  double t = 0;
  for (int g = 0; g < groups; ++g) {
    t += static_cast<double>(n - g * per_group) * 1e6 / 1e9;
    expected_ps->push_back(static_cast<int64_t>(std::llround(t * 1e12)));
  }
  return obs.got;
}

void check_groups(int groups, int per_group) {
  std::vector<int64_t> expected;
  const auto got = run_groups(groups, per_group, &expected);
  REQUIRE(got.size() == static_cast<size_t>(groups * per_group));
  // Group by group, in the order the flows were started (flow id order), at the closed-form time.
  size_t k = 0;
  for (int g = 0; g < groups; ++g) {
    std::vector<uint64_t> started;
    for (int i = 0; i < groups * per_group; ++i) {
      const int f = (i * 7919) % (groups * per_group);
      if (f % groups == g) started.push_back(static_cast<uint64_t>(f));
    }
    for (uint64_t tag : started) {
      INFO("group " << g << " flow " << tag << " delivery " << k);
      REQUIRE(got[k].first == tag);
      CHECK(std::abs(got[k].second - expected[g]) <= 64 * (g + 1));
      ++k;
    }
  }
}
}  // namespace

TEST_CASE("many flows ending together are delivered in finishing order at the closed-form times") {
  // 2 finish times over 2,000 flows: completions kept as one run per time.
  check_groups(2, 1000);
  // 40 finish times: more than the solver groups by time; completions sorted.
  check_groups(40, 50);
}
