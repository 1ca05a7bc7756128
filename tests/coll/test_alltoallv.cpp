// All-to-allv: equal matrices reproduce the all-to-all, hot receivers are limited by their
// ingress link (closed forms below), bytes are conserved, and plans run on a shared network.
#include <catch2/catch.hpp>
#include <cmath>

#include "coll/collective.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
// An idealised system: B = 100 GB/s per GPU into the NVSwitch, no switch latency; with
// `nic_gbps` > 0, one NIC of that rate per GPU and a latency-free, lossless fabric.
SystemSpec ideal(int gpus_per_node, double nic_gbps = 0) {
  SystemSpec s = load_system("dgx-h100", kRoot);
  s.node.gpus = gpus_per_node;
  s.nics.per_node = gpus_per_node;
  s.unit_nodes = 1;
  s.scale_up.domain_nodes = 1;
  s.scale_up.gpu_bandwidth = Bandwidth::gbytes_per_second(100);
  s.scale_up.hop_latency = Time::zero();
  s.scale_up.nvls = false;
  if (nic_gbps > 0) {
    s.nics.bandwidth = Bandwidth::gbytes_per_second(nic_gbps);
    s.fabric.protocol_efficiency = 1.0;
    s.fabric.nic_latency = Time::zero();
    s.fabric.hop_latency = Time::zero();
    s.node.pcie_bandwidth = Bandwidth::gbytes_per_second(1000);
  }
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
using Matrix = std::vector<std::vector<double>>;
Matrix filled(int n, double b) {
  return Matrix(n, std::vector<double>(n, b));
}
// Everyone in `senders` sends x bytes to rank `hot`; nothing else moves.
Matrix hot_receiver(int n, int hot, double x) {
  Matrix m = filled(n, 0.0);
  for (int i = 0; i < n; ++i) {
    if (i != hot) m[i][hot] = x;
  }
  return m;
}
}  // namespace

TEST_CASE("all-to-allv of an equal matrix is the all-to-all") {
  // bytes[i][j] = S/n for all i, j is by definition the all-to-all of S: the same flows, the
  // same latency steps, hence the same time to the picosecond, with latencies and eta < 1.
  CollectiveParams p = unit_params();
  p.eta_a2a = 0.8;
  p.base_latency = Time::from_us(10);
  p.nvlink_step_latency = Time::from_us(1);
  p.net_step_latency = Time::from_us(3);
  const double S = 256.0 * (1 << 20);
  for (int nodes : {1, 4}) {
    const SystemSpec s = ideal(8, 10);
    const Topology t(s, s.fabric, nodes);
    const int n = 8 * nodes;
    const auto a2a = simulate_collective(t, p, CollOp::kAllToAll, Algorithm::kDirect,
                                         Bytes(static_cast<int64_t>(S)), iota(n), 3);
    const auto v = simulate_alltoallv(t, p, iota(n), filled(n, S / n), 3);
    CHECK(v.result.time == a2a.time);
    CHECK(v.result.bandwidth_time == a2a.bandwidth_time);
    CHECK(v.result.flows == a2a.flows);
    CHECK(v.result.size.count() == static_cast<int64_t>(S));
    CHECK(v.result.busbw_gbps == Approx(a2a.busbw_gbps).epsilon(1e-12));
    CHECK(v.stats.send_imbalance == Approx(1.0));
    CHECK(v.stats.recv_imbalance == Approx(1.0));
  }
}

TEST_CASE("a hot receiver inside a domain is limited by its NVSwitch ingress") {
  // 7 GPUs each send X to GPU 0. Each sender's uplink carries X, GPU 0's downlink 7X, so
  // T_bw = 7X / B with B = 100 GB/s. With α0 and one NVLink step α_nv (intra-domain only):
  // t = α0 + (√T_bw + √α_nv)².
  const SystemSpec s = ideal(8);
  const Topology t(s, s.fabric, 1);
  CollectiveParams p = unit_params();
  p.base_latency = Time::from_us(5);
  p.nvlink_step_latency = Time::from_us(2);
  p.net_step_latency = Time::from_us(50);  // must not count: no flow leaves the domain
  const double X = 100e6;
  const auto r = simulate_alltoallv(t, p, iota(8), hot_receiver(8, 0, X), 1);
  const double tbw = 7 * X / 100e9;
  CHECK(r.result.bandwidth_time.seconds() == Approx(tbw).epsilon(1e-9));
  const double want = 5e-6 + std::pow(std::sqrt(tbw) + std::sqrt(2e-6), 2);
  CHECK(r.result.time.seconds() == Approx(want).epsilon(1e-9));
  CHECK(r.result.flows == 7);
  // Receive imbalance: GPU 0 gets 7X of a total 7X over 8 ranks (mean 7X/8): max/mean = 8.
  CHECK(r.stats.recv_imbalance == Approx(8.0));
  CHECK(r.stats.send_imbalance == Approx(8.0 / 7.0));  // max X, mean 7X/8
}

TEST_CASE("a hot receiver across nodes is limited by its NIC ingress") {
  // 4 nodes of 8 GPUs, one 10 GB/s NIC per GPU. The 24 GPUs of nodes 1-3 each send X to GPU 0:
  // every sender's NIC carries X, GPU 0's NIC carries 24X, so T_bw = 24X / 10 GB/s
  // (the fabric is non-blocking and PCIe is 1 TB/s).
  const SystemSpec s = ideal(8, 10);
  const Topology t(s, s.fabric, 4);
  Matrix m = filled(32, 0.0);
  const double X = 10e6;
  for (int i = 8; i < 32; ++i)
    m[i][0] = X;
  const auto r = simulate_alltoallv(t, unit_params(), iota(32), m, 1);
  CHECK(r.result.bandwidth_time.seconds() == Approx(24 * X / 10e9).epsilon(1e-9));
}

TEST_CASE("all-to-allv conserves bytes") {
  // A random matrix over 2 nodes × 8 GPUs (eta = 1, so flows carry exactly their entries).
  const SystemSpec s = ideal(8, 10);
  const Topology t(s, s.fabric, 2);
  const int n = 16;
  Matrix m = filled(n, 0.0);
  uint64_t x = 99;
  double off_diagonal = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      m[i][j] = (x >> 40) % 5 == 0 ? 0.0 : static_cast<double>(x >> 44);
      if (i != j) off_diagonal += m[i][j];
    }
  }
  const CollectiveParams p = unit_params();
  const CollectivePlan plan = plan_alltoallv(t, p, iota(n), m, 1);
  const double planned = plan.total_bytes();
  CHECK(planned == Approx(off_diagonal).epsilon(1e-12));
  const AllToAllvStats st = alltoallv_stats(m);
  double sent = 0, received = 0;
  for (int i = 0; i < n; ++i) {
    sent += st.send_bytes[i];
    received += st.recv_bytes[i];
  }
  CHECK(sent == Approx(off_diagonal).epsilon(1e-12));
  CHECK(received == Approx(off_diagonal).epsilon(1e-12));
  // Run on a shared network: each GPU's NVSwitch downlink carries exactly what it receives
  // from its own domain.
  Simulator sim;
  FlowNetwork net(sim, t.links());
  CollectiveRun run(p, plan);
  run.start(sim, net, nullptr, 0);
  sim.run();
  for (int j = 0; j < n; ++j) {
    double local = 0;
    for (int i = 0; i < n; ++i) {
      if (i != j && t.domain_of(i) == t.domain_of(j)) local += m[i][j];
    }
    CHECK(net.link_bytes()[t.switch_to_gpu(j)] == Approx(local).epsilon(1e-9));
  }
}

TEST_CASE("all-to-allv statistics by hand") {
  // Rank 0 sends 3 to each of three others (9); ranks 1-3 send 1 to each other rank (3 each).
  // Total 18, mean 4.5 both ways. Sends: max 9 -> 2.0. Receives: rank 0 gets 3, ranks 1-3 get
  // 3 + 1 + 1 = 5 -> 5 / 4.5. Diagonal entries are local copies and do not count.
  Matrix m = filled(4, 1.0);
  for (int j = 0; j < 4; ++j)
    m[0][j] = 3.0;
  const AllToAllvStats st = alltoallv_stats(m);
  CHECK(st.total_bytes == 18.0);
  CHECK(st.send_bytes == std::vector<double>{9, 3, 3, 3});
  CHECK(st.recv_bytes == std::vector<double>{3, 5, 5, 5});
  CHECK(st.send_imbalance == Approx(2.0));
  CHECK(st.recv_imbalance == Approx(5.0 / 4.5));
}

TEST_CASE("two all-to-allv runs on a shared network share the hot link") {
  // Two copies of the intra-domain hot-receiver plan start together on one FlowNetwork: GPU 0's
  // downlink now carries 14X, so each finishes its bandwidth phase at 14X / B.
  const SystemSpec s = ideal(8);
  const Topology t(s, s.fabric, 1);
  const CollectiveParams p = unit_params();
  const double X = 50e6;
  Simulator sim;
  FlowNetwork net(sim, t.links());
  CollectiveRun a(p, plan_alltoallv(t, p, iota(8), hot_receiver(8, 0, X), 1));
  CollectiveRun b(p, plan_alltoallv(t, p, iota(8), hot_receiver(8, 0, X), 2));
  a.start(sim, net, nullptr, 0);
  b.start(sim, net, nullptr, 1);
  sim.run();
  CHECK(a.bandwidth_time().seconds() == Approx(14 * X / 100e9).epsilon(1e-9));
  CHECK(b.bandwidth_time().seconds() == Approx(14 * X / 100e9).epsilon(1e-9));
}
