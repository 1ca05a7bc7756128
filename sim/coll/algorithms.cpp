// Flow decompositions of NCCL's collective algorithms. See collective.h for the timing model.
//
// Ring (NCCL ring.h): ranks ordered by NVLink domain; inside a domain the channel-c ring visits
//   local ranks c, c+1, …, c−1 and leaves the domain through the NIC of local rank c (reached
//   over NVLink, as NCCL's PXN does), entering the next domain at its local rank c, so each
//   channel stays on one rail. One channel per local rank, so every NIC carries one channel.
// Tree (NCCL double binary tree, Sanders et al. 2009): a chain inside each domain and two
//   complementary binary trees over domains, each carrying half of the data.
// NVLS: every GPU sends S(1+1/n) to the NVSwitch and receives S(1+1/n) from it (multimem
//   ld_reduce of its 1/n share, then multimem st of the reduced share to all).
// NVLS-tree: NVLS inside each domain, then a double binary tree across domains per local rank
//   on that rank's 1/m share.
// All-to-all: one flow per ordered pair carrying S/n; all-to-allv: one flow per ordered pair
//   carrying its matrix entry (pairs with no data make no flow). Send/recv: one flow.
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <unordered_map>

#include "coll/collective.h"
#include "core/error.h"
#include "core/rng.h"

namespace fleetsim {
namespace {

struct Groups {
  std::vector<std::vector<int>> by_domain;  // ranks of each domain, in local order
  int per_domain = 0;                       // ranks per domain if uniform, else 0
};

Groups group_by_domain(const Topology& topo, const std::vector<int>& ranks) {
  std::map<int, std::vector<int>> m;
  for (int r : ranks)
    m[topo.domain_of(r)].push_back(r);
  Groups g;
  for (auto& [d, v] : m) {
    std::sort(v.begin(), v.end());
    g.by_domain.push_back(std::move(v));
  }
  g.per_domain = static_cast<int>(g.by_domain.front().size());
  for (const auto& v : g.by_domain) {
    if (static_cast<int>(v.size()) != g.per_domain) g.per_domain = 0;
  }
  return g;
}

Route concat(Route a, const Route& b) {
  a.hops.insert(a.hops.end(), b.hops.begin(), b.hops.end());
  a.latency += b.latency;
  return a;
}

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n)
    ++k;
  return k;
}

// Per-edge volume of a ring for `op` relative to the message size S.
double ring_volume(CollOp op, int n) {
  switch (op) {
    case CollOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;  // broadcast: the whole message passes every edge of the chain
  }
}

class Planner {
 public:
  // `merge`: flows with the same route and size become one PlanFlow with a count (worth the
  // lookup where routes repeat: ring channels, trees; not in an all-to-all, where every pair
  // has its own route).
  Planner(const Topology& topo, const CollectiveParams& p, CollectivePlan* plan, uint64_t seed,
          bool merge)
      : topo_(topo), p_(p), plan_(plan), rng_(Rng::stream(seed, "coll.ecmp")), merge_(merge) {
    plan_->paths = PathTable(topo.links());
  }

  // A GPU→GPU flow; NVLink-only flows are inflated by 1/eta (copy-kernel efficiency).
  void flow(int src, int dst, double bytes, double eta) {
    topo_.route_shape(src, dst, rng_.next_u64(), &shape_);
    if (topo_.domain_of(src) == topo_.domain_of(dst)) bytes /= eta;
    ++plan_->flow_count;
    plan_->paths.split(topo_, shape_, &segs_);
    emit_segments(shape_.latency, bytes);
  }
  // A flow leaving src's domain through the NIC of `proxy` (same domain), PXN-style.
  void flow_via(int src, int proxy, int dst, double bytes) {
    Route r = topo_.route(proxy, dst, rng_.next_u64());
    if (src != proxy) r = concat(topo_.route(src, proxy, 0), r);
    emit(r, bytes);
  }
  void switch_flows(int gpu, double bytes) {
    Route up;
    up.hops = {PathHop{topo_.gpu_to_switch(gpu), 1.0}};
    up.latency = Time::from_ps(topo_.system().scale_up.hop_latency.ps() / 2);
    Route down = up;
    down.hops = {PathHop{topo_.switch_to_gpu(gpu), 1.0}};
    emit(up, bytes);
    emit(down, bytes);
  }

  void ring(CollOp op, double size, const Groups& g, const std::vector<int>& ranks) {
    const int n = static_cast<int>(ranks.size());
    const int domains = static_cast<int>(g.by_domain.size());
    const double vol = ring_volume(op, n) * size;
    const bool chain = op == CollOp::kBroadcast;  // the last edge of a broadcast chain is idle
    if (domains == 1) {
      const auto& v = g.by_domain[0];
      for (int i = 0; i < n; ++i) {
        if (chain && i == n - 1) break;
        flow(v[i], v[(i + 1) % n], vol, p_.eta_ring);
      }
    } else {
      FLEETSIM_ASSERT(g.per_domain > 0);
      const int m = g.per_domain;
      const int channels = m;
      const double per_channel = vol / channels;
      for (int c = 0; c < channels; ++c) {
        for (int d = 0; d < domains; ++d) {
          const auto& v = g.by_domain[d];
          for (int k = 0; k + 1 < m; ++k)
            flow(v[(c + k) % m], v[(c + k + 1) % m], per_channel, p_.eta_ring);
          if (chain && d == domains - 1) continue;
          const auto& next = g.by_domain[(d + 1) % domains];
          flow_via(v[(c + m - 1) % m], v[c], next[c], per_channel);
        }
      }
    }
    const int steps = op == CollOp::kAllReduce ? 2 * (n - 1) : n - 1;
    const int inter = op == CollOp::kAllReduce ? 2 * (domains - 1) : domains - 1;
    plan_->steps_net = domains > 1 ? inter : 0;
    plan_->steps_nvlink = steps - plan_->steps_net;
  }

  // Two complementary binary trees over domains; `edge(child_domain, parent_domain, bytes)`.
  template <typename Edge>
  void double_binary_tree(int domains, double bytes_per_tree, Edge edge) {
    for (int t = 0; t < 2; ++t) {
      auto at = [&](int pos) { return t == 0 ? pos : domains - 1 - pos; };
      for (int pos = 1; pos < domains; ++pos)
        edge(at(pos), at((pos - 1) / 2), bytes_per_tree);
    }
  }

  void tree(double size, const Groups& g) {
    const int m = g.per_domain;
    const int domains = static_cast<int>(g.by_domain.size());
    const double per_channel = size / m;
    for (int c = 0; c < m; ++c) {
      for (const auto& v : g.by_domain) {
        for (int k = 0; k + 1 < m; ++k) {
          flow(v[(c + k + 1) % m], v[(c + k) % m], per_channel, p_.eta_ring);  // reduce up
          flow(v[(c + k) % m], v[(c + k + 1) % m], per_channel, p_.eta_ring);  // broadcast down
        }
      }
      double_binary_tree(domains, per_channel / 2, [&](int child, int parent, double b) {
        flow(g.by_domain[child][c], g.by_domain[parent][c], b, 1.0);
        flow(g.by_domain[parent][c], g.by_domain[child][c], b, 1.0);
      });
    }
    plan_->steps_nvlink = 2 * (m - 1);
    plan_->steps_net = 2 * ceil_log2(domains);
  }

  void nvls(double size, const Groups& g) {
    const int m = g.per_domain;
    const int domains = static_cast<int>(g.by_domain.size());
    for (const auto& v : g.by_domain) {
      for (int r : v)
        switch_flows(r, size * (1.0 + 1.0 / m) / p_.eta_nvls);
    }
    plan_->steps_nvlink = 2;
    if (domains > 1) {
      for (int c = 0; c < m; ++c) {
        double_binary_tree(domains, size / m / 2, [&](int child, int parent, double b) {
          flow(g.by_domain[child][c], g.by_domain[parent][c], b, 1.0);
          flow(g.by_domain[parent][c], g.by_domain[child][c], b, 1.0);
        });
      }
      plan_->steps_net = 2 * ceil_log2(domains);
    }
  }

  void all_to_all(double size, const std::vector<int>& ranks, const Groups& g) {
    const int n = static_cast<int>(ranks.size());
    reserve(static_cast<size_t>(n) * (n - 1), g.by_domain.size() > 1);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != j) flow(ranks[i], ranks[j], size / n, p_.eta_a2a);
      }
    }
    plan_->steps_nvlink = 1;
    plan_->steps_net = g.by_domain.size() > 1 ? 1 : 0;
  }

  void all_to_allv(const std::vector<int>& ranks, const std::vector<std::vector<double>>& bytes) {
    const size_t n = ranks.size();
    size_t pairs = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j)
        pairs += i != j && bytes[i][j] > 0 ? 1 : 0;
    }
    reserve(pairs, true);
    bool inter = false;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i == j || bytes[i][j] <= 0) continue;
        flow(ranks[i], ranks[j], bytes[i][j], p_.eta_a2a);
        inter = inter || topo_.domain_of(ranks[i]) != topo_.domain_of(ranks[j]);
      }
    }
    plan_->steps_nvlink = plan_->flow_count == 0 ? 0 : 1;
    plan_->steps_net = inter ? 1 : 0;
  }

  void send_recv(double size, const std::vector<int>& ranks) {
    flow(ranks[0], ranks[1], size, p_.eta_ring);
    const bool inter = topo_.domain_of(ranks[0]) != topo_.domain_of(ranks[1]);
    plan_->steps_nvlink = inter ? 0 : 1;
    plan_->steps_net = inter ? 1 : 0;
  }

 private:
  void emit(const Route& r, double bytes) {
    ++plan_->flow_count;
    plan_->paths.split(r, &segs_);
    emit_segments(r.latency, bytes);
  }
  // A flow of `bytes` over the route segs_ (merged with an identical one when merge_).
  void emit_segments(Time latency, double bytes) {
    PathTable& t = plan_->paths;
    if (!merge_) {
      plan_->flows.push_back(PlanFlow{t.add_route(segs_, latency), 1, bytes});
      return;
    }
    uint64_t h = std::bit_cast<uint64_t>(bytes) ^ static_cast<uint64_t>(latency.ps()) * 31;
    for (uint32_t s : segs_)
      h = (h ^ s) * 0x100000001b3ULL;
    auto [it, fresh] = merged_.try_emplace(h, static_cast<uint32_t>(plan_->flows.size()));
    for (uint32_t i = fresh ? PathTable::kNone : it->second; i != PathTable::kNone;
         i = merge_next_[i]) {
      PlanFlow& f = plan_->flows[i];
      const auto other = t.route_segments(f.route);
      if (f.bytes == bytes && t.route_latency(f.route) == latency &&
          std::equal(other.begin(), other.end(), segs_.begin(), segs_.end())) {
        ++f.count;
        return;
      }
    }
    const uint32_t id = static_cast<uint32_t>(plan_->flows.size());
    plan_->flows.push_back(PlanFlow{t.add_route(segs_, latency), 1, bytes});
    merge_next_.push_back(PathTable::kNone);
    if (!fresh) {  // chain behind the first flow with this hash
      merge_next_[id] = merge_next_[it->second];
      merge_next_[it->second] = id;
    }
  }

  // Room for `flows` unmerged flows (an all-to-all: every pair its own route), each of up to
  // five segments per NIC path when `network` (two inside an NVLink domain).
  void reserve(size_t flows, bool network) {
    plan_->flows.reserve(plan_->flows.size() + flows);
    const size_t nics = static_cast<size_t>(std::max(1, topo_.system().nics.nics_per_gpu));
    plan_->paths.reserve(flows, network ? 5 * nics : 2);
  }

  const Topology& topo_;
  const CollectiveParams& p_;
  CollectivePlan* plan_;
  Rng rng_;
  bool merge_;
  std::vector<uint32_t> segs_;
  RouteShape shape_;
  std::unordered_map<uint64_t, uint32_t> merged_;  // route hash → first plan flow with it
  std::vector<uint32_t> merge_next_;               // next plan flow with the same hash
};

}  // namespace

std::vector<Algorithm> candidate_algorithms(const Topology& topo, CollOp op,
                                            const std::vector<int>& ranks) {
  const Groups g = group_by_domain(topo, ranks);
  const int n = static_cast<int>(ranks.size());
  const bool multi = g.by_domain.size() > 1;
  const auto& su = topo.system().scale_up;
  switch (op) {
    case CollOp::kAllReduce: {
      std::vector<Algorithm> out;
      if (!multi || g.per_domain > 0) out.push_back(Algorithm::kRing);
      if (multi && g.per_domain > 0) out.push_back(Algorithm::kTree);
      if (su.nvls && g.per_domain >= std::max(2, su.nvls_min_gpus)) {
        out.push_back(multi ? Algorithm::kNvlsTree : Algorithm::kNvls);
      }
      (void)n;
      return out;
    }
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kBroadcast:
      if (!multi || g.per_domain > 0) return {Algorithm::kRing};
      return {};
    case CollOp::kAllToAll:
    case CollOp::kSendRecv:
      return {Algorithm::kDirect};
  }
  return {};
}

namespace {

// Flows Planner emits for one algorithm over n ranks in `domains` NVLink domains of m ranks each
// (m = 0: the domains are not uniform), mirroring ring(), tree(), nvls(), all_to_all().
int64_t plan_flows(CollOp op, Algorithm a, int64_t n, int64_t domains, int64_t m) {
  const bool chain = op == CollOp::kBroadcast;
  switch (a) {
    case Algorithm::kRing:
      if (domains == 1) return chain ? n - 1 : n;
      return m * (domains * (m - 1) + (chain ? domains - 1 : domains));
    case Algorithm::kTree:
      return m * (domains * (m - 1) * 2 + 2 * (domains - 1) * 2);
    case Algorithm::kNvls:
    case Algorithm::kNvlsTree:
      return 2 * n + (domains > 1 ? m * 2 * (domains - 1) * 2 : 0);
    case Algorithm::kDirect:
      return op == CollOp::kSendRecv ? 1 : n * (n - 1);
    case Algorithm::kAuto:
      break;
  }
  return 0;
}

}  // namespace

FlowEstimate estimate_collective_flows(const SystemSpec& system, CollOp op, Algorithm algorithm,
                                       int n) {
  FlowEstimate e;
  if (n < 2) return e;
  const int64_t per_domain = int64_t{system.node.gpus} * system.scale_up.domain_nodes;
  const int64_t domains = (n + per_domain - 1) / per_domain;
  const bool multi = domains > 1;
  const int64_t m = !multi ? n : (n % per_domain == 0 ? per_domain : 0);
  std::vector<Algorithm> algos = {algorithm};
  if (algorithm == Algorithm::kAuto) {  // candidate_algorithms for GPUs 0 … n−1
    algos.clear();
    const bool ring = !multi || m > 0;
    if (op == CollOp::kAllToAll || op == CollOp::kSendRecv) {
      algos.push_back(Algorithm::kDirect);
    } else if (ring) {
      algos.push_back(Algorithm::kRing);
    }
    if (op == CollOp::kAllReduce) {
      if (multi && m > 0) algos.push_back(Algorithm::kTree);
      if (system.scale_up.nvls && m >= std::max(2, system.scale_up.nvls_min_gpus))
        algos.push_back(multi ? Algorithm::kNvlsTree : Algorithm::kNvls);
    }
  }
  for (Algorithm a : algos) {
    const int64_t f = plan_flows(op, a, n, domains, m);
    e.flows += f;
    e.largest_plan = std::max(e.largest_plan, f);
  }
  return e;
}

CollectivePlan plan_collective(const Topology& topo, const CollectiveParams& params, CollOp op,
                               Algorithm algorithm, Bytes size, const std::vector<int>& ranks,
                               uint64_t seed) {
  CollectivePlan plan;
  plan.op = op;
  plan.algorithm = algorithm;
  if (ranks.size() < 2) return plan;
  const Groups g = group_by_domain(topo, ranks);
  Planner p(topo, params, &plan, seed, algorithm != Algorithm::kDirect);
  const double s = size.as_double();
  switch (algorithm) {
    case Algorithm::kRing:
      p.ring(op, s, g, ranks);
      break;
    case Algorithm::kTree:
      p.tree(s, g);
      break;
    case Algorithm::kNvls:
    case Algorithm::kNvlsTree:
      p.nvls(s, g);
      break;
    case Algorithm::kDirect:
      if (op == CollOp::kSendRecv) {
        p.send_recv(s, ranks);
      } else {
        p.all_to_all(s, ranks, g);
      }
      break;
    case Algorithm::kAuto:
      FLEETSIM_ASSERT(false && "plan_collective needs a concrete algorithm");
  }
  return plan;
}

CollectivePlan plan_alltoallv(const Topology& topo, const CollectiveParams& params,
                              const std::vector<int>& ranks,
                              const std::vector<std::vector<double>>& bytes, uint64_t seed) {
  FLEETSIM_ASSERT(bytes.size() == ranks.size());
  for (const auto& row : bytes) {
    FLEETSIM_ASSERT(row.size() == ranks.size());
    for (double b : row)
      FLEETSIM_ASSERT(b >= 0 && std::isfinite(b));
  }
  CollectivePlan plan;
  plan.op = CollOp::kAllToAll;
  plan.algorithm = Algorithm::kDirect;
  if (ranks.size() < 2) return plan;
  Planner p(topo, params, &plan, seed, false);
  p.all_to_allv(ranks, bytes);
  return plan;
}

}  // namespace fleetsim
