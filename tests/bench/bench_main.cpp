// Benchmarks (not part of ctest): event-engine throughput with 1e5 pending events, and one
// 1 GiB all-reduce over 4,096 GPUs (512 × p6-b200) simulated flow by flow, and an MoE-style
// all-to-allv. Prints figures.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "bench_util.h"
#include "coll/collective.h"
#include "core/rng.h"
#include "core/simulator.h"
#include "scenario/scenario.h"

using namespace fleetsim;
using namespace fleetsim::bench;

namespace {
// Each event reschedules itself a random delay ahead, keeping the pending set constant (hold
// model).
struct Hold final : EventHandler {
  Rng rng{1};
  void on_event(Simulator& sim, uint64_t tag) override {
    sim.schedule_in(Time::from_ps(1 + static_cast<int64_t>(rng.uniform_below(1'000'000))), this,
                    tag);
  }
};

void bench_events() {
  Simulator sim;
  Hold h;
  const int pending = 100000;
  sim.reserve(pending + 16);
  for (int i = 0; i < pending; ++i)
    sim.schedule_at(Time::from_ps(h.rng.uniform_below(1'000'000)), &h, i);
  const double t0 = now_s();
  uint64_t n = 0;
  while (n < 20'000'000)
    n += sim.run(sim.now() + Time::from_ps(50'000'000));
  const double dt = now_s() - t0;
  std::printf("event engine: %.1f M events/s (%llu events, %d pending)\n",
              static_cast<double>(n) / dt / 1e6, static_cast<unsigned long long>(n), pending);
}

void bench_allreduce() {
  const std::string dir = default_data_dir();
  const SystemSpec s = load_system("p6-b200.48xlarge", dir);
  const CollectiveParams p = load_collective_params(s, dir);
  const double t0 = now_s();
  const Topology topo(s, s.fabric, 512);
  std::vector<int> ranks(topo.gpus());
  for (int i = 0; i < topo.gpus(); ++i)
    ranks[i] = i;
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kAuto}) {
    const double t1 = now_s();
    const auto r = simulate_collective(topo, p, CollOp::kAllReduce, a, Bytes(1LL << 30), ranks, 1);
    std::printf(
        "1 GiB all-reduce, 4096 GPUs (512 x p6-b200), %-4s -> %-9s: %7.3f s wall, %zu flows, "
        "simulated %.2f ms, busbw %.1f GB/s\n",
        to_string(a), to_string(r.algorithm), now_s() - t1, r.flows, r.time.us() / 1e3,
        r.busbw_gbps);
  }
  std::printf("  (topology build + all three: %.3f s, peak RSS %ld MiB)\n", now_s() - t0,
              peak_rss_mib());
}

// An MoE-style all-to-allv over 64 GPUs (8 × p6-b200): 64 MiB per rank routed to experts
// with Zipf-like popularity (expert e gets weight 1/(1 + e mod 16)), so receivers are uneven.
void bench_alltoallv() {
  const std::string dir = default_data_dir();
  const SystemSpec s = load_system("p6-b200.48xlarge", dir);
  const CollectiveParams p = load_collective_params(s, dir);
  const Topology topo(s, s.fabric, 8);
  const int n = topo.gpus();
  std::vector<int> ranks(n);
  for (int i = 0; i < n; ++i)
    ranks[i] = i;
  std::vector<double> w(n);
  double wsum = 0;
  for (int j = 0; j < n; ++j)
    wsum += w[j] = 1.0 / (1 + j % 16);
  std::vector<std::vector<double>> bytes(n, std::vector<double>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      bytes[i][j] = 64.0 * (1 << 20) * w[(j + i / 8) % n] / wsum;
  }
  const double t0 = now_s();
  const auto r = simulate_alltoallv(topo, p, ranks, bytes, 1);
  std::printf(
      "all-to-allv 64 MiB/rank, 64 GPUs (8 x p6-b200): %7.3f s wall, %zu flows, simulated "
      "%.3f ms, recv imbalance %.2f, peak RSS %ld MiB\n",
      now_s() - t0, r.result.flows, r.result.time.us() / 1e3, r.stats.recv_imbalance,
      peak_rss_mib());
}
}  // namespace

// Usage: fleetsim_bench [events|allreduce|alltoallv]... (default: all).
int main(int argc, char** argv) {
  auto want = [&](const char* name) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], name) == 0) return true;
    }
    return false;
  };
  if (want("events")) bench_events();
  if (want("allreduce")) bench_allreduce();
  if (want("alltoallv")) bench_alltoallv();
  return 0;
}
