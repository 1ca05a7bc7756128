#include "coll/collective.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace fleetsim {

const char* to_string(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce:
      return "all_reduce";
    case CollOp::kAllGather:
      return "all_gather";
    case CollOp::kReduceScatter:
      return "reduce_scatter";
    case CollOp::kAllToAll:
      return "all_to_all";
    case CollOp::kBroadcast:
      return "broadcast";
    case CollOp::kSendRecv:
      return "send_recv";
  }
  return "?";
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kNvlsTree:
      return "nvls_tree";
    case Algorithm::kDirect:
      return "direct";
  }
  return "?";
}

bool parse_coll_op(const std::string& s, CollOp* out) {
  for (CollOp op : {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter,
                    CollOp::kAllToAll, CollOp::kBroadcast, CollOp::kSendRecv}) {
    if (s == to_string(op)) {
      *out = op;
      return true;
    }
  }
  return false;
}

bool parse_algorithm(const std::string& s, Algorithm* out) {
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls,
                      Algorithm::kNvlsTree, Algorithm::kDirect}) {
    if (s == to_string(a)) {
      *out = a;
      return true;
    }
  }
  return false;
}

double busbw_factor(CollOp op, int n) {
  switch (op) {
    case CollOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAllToAll:
      return static_cast<double>(n - 1) / n;
    case CollOp::kBroadcast:
    case CollOp::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

Time pipelined_time(const CollectiveParams& params, const CollectivePlan& plan,
                    Time bandwidth_time) {
  if (plan.flow_count == 0) return Time::zero();
  const double alpha_p = plan.steps_nvlink * params.nvlink_step_latency.seconds() +
                         plan.steps_net * params.net_step_latency.seconds();
  const double root = std::sqrt(bandwidth_time.seconds()) + std::sqrt(alpha_p);
  return params.base_latency + Time::from_seconds(root * root);
}

CollectiveRun::CollectiveRun(const CollectiveParams& params, CollectivePlan plan)
    : params_(params), plan_(std::move(plan)) {}

void CollectiveRun::start(Simulator& sim, FlowNetwork& net, EventHandler* done, uint64_t tag) {
  done_ = done;
  done_tag_ = tag;
  start_ = sim.now();
  outstanding_ = plan_.flows.size();
  if (outstanding_ == 0) {
    sim.schedule_at(start_, this, 0);
    return;
  }
  net.reserve(plan_.flows.size());
  PathTable& table = net.paths();
  if (table.adopt(std::move(plan_.paths))) {  // an idle network: the plan's ids are its ids
    for (size_t i = 0; i < plan_.flows.size(); ++i) {
      const PlanFlow& f = plan_.flows[i];
      net.start_route(f.route, f.bytes, f.count, this, i);
    }
  } else {
    std::vector<uint32_t> seg_map, route_map(plan_.paths.routes(), PathTable::kNone);
    for (size_t i = 0; i < plan_.flows.size(); ++i) {
      const PlanFlow& f = plan_.flows[i];
      uint32_t& r = route_map[f.route];
      if (r == PathTable::kNone) r = table.import_route(plan_.paths, f.route, &seg_map);
      net.start_route(r, f.bytes, f.count, this, i);
    }
  }
  plan_.paths = PathTable();
  plan_.flows = {};
}

double CollectivePlan::total_bytes() const {
  double b = 0;
  for (const PlanFlow& f : flows)
    b += f.bytes * f.count;
  return b;
}

void CollectiveRun::on_flow_done(Simulator& sim, uint64_t /*tag*/) {
  FLEETSIM_ASSERT(outstanding_ > 0);
  if (--outstanding_ > 0) return;
  bw_time_ = sim.now() - start_;
  const Time total = pipelined_time(params_, plan_, bw_time_);
  const Time end = start_ + total;
  sim.schedule_at(end < sim.now() ? sim.now() : end, this, 0);
}

void CollectiveRun::on_event(Simulator& sim, uint64_t /*tag*/) {
  if (done_ != nullptr) done_->on_event(sim, done_tag_);
}

CollectiveResult simulate_collective(const Topology& topo, const CollectiveParams& params,
                                     CollOp op, Algorithm algorithm, Bytes size,
                                     const std::vector<int>& ranks, uint64_t seed) {
  std::vector<Algorithm> algos;
  if (algorithm == Algorithm::kAuto) {
    algos = candidate_algorithms(topo, op, ranks);
  } else {
    algos = {algorithm};
  }
  FLEETSIM_ASSERT(!algos.empty());
  CollectiveResult best;
  bool have = false;
  for (Algorithm a : algos) {
    Simulator sim;
    FlowNetwork net(sim, topo.links());
    CollectiveRun run(params, plan_collective(topo, params, op, a, size, ranks, seed));
    run.start(sim, net, nullptr, 0);
    sim.run();
    CollectiveResult r;
    r.op = op;
    r.algorithm = a;
    r.size = size;
    r.ranks = static_cast<int>(ranks.size());
    r.time = sim.now() - run.started();
    r.bandwidth_time = run.bandwidth_time();
    r.flows = run.plan().flow_count;
    const double t = r.time.seconds();
    r.algbw_gbps = t > 0 ? size.as_double() / t * 1e-9 : 0.0;
    r.busbw_gbps = r.algbw_gbps * busbw_factor(op, r.ranks);
    if (!have || r.time < best.time) {
      best = r;
      have = true;
    }
  }
  return best;
}

AllToAllvStats alltoallv_stats(const std::vector<std::vector<double>>& bytes) {
  const size_t n = bytes.size();
  AllToAllvStats st;
  st.send_bytes.assign(n, 0.0);
  st.recv_bytes.assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    FLEETSIM_ASSERT(bytes[i].size() == n);
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      st.send_bytes[i] += bytes[i][j];
      st.recv_bytes[j] += bytes[i][j];
      st.total_bytes += bytes[i][j];
    }
  }
  if (n == 0) return st;
  for (size_t i = 0; i < n; ++i) {
    st.max_send = std::max(st.max_send, st.send_bytes[i]);
    st.max_recv = std::max(st.max_recv, st.recv_bytes[i]);
  }
  st.mean_send = st.mean_recv = st.total_bytes / static_cast<double>(n);
  if (st.total_bytes > 0) {
    st.send_imbalance = st.max_send / st.mean_send;
    st.recv_imbalance = st.max_recv / st.mean_recv;
  }
  return st;
}

AllToAllvResult simulate_alltoallv(const Topology& topo, const CollectiveParams& params,
                                   const std::vector<int>& ranks,
                                   const std::vector<std::vector<double>>& bytes, uint64_t seed) {
  AllToAllvResult out;
  out.stats = alltoallv_stats(bytes);
  Simulator sim;
  FlowNetwork net(sim, topo.links());
  CollectiveRun run(params, plan_alltoallv(topo, params, ranks, bytes, seed));
  run.start(sim, net, nullptr, 0);
  sim.run();
  double buffer = 0;  // all bytes including self-blocks, per rank
  for (const auto& row : bytes) {
    for (double b : row)
      buffer += b;
  }
  const int n = static_cast<int>(ranks.size());
  CollectiveResult& r = out.result;
  r.op = CollOp::kAllToAll;
  r.algorithm = Algorithm::kDirect;
  r.size = Bytes(n > 0 ? static_cast<int64_t>(std::llround(buffer / n)) : 0);
  r.ranks = n;
  r.time = sim.now() - run.started();
  r.bandwidth_time = run.bandwidth_time();
  r.flows = run.plan().flow_count;
  const double t = r.time.seconds();
  r.algbw_gbps = t > 0 ? r.size.as_double() / t * 1e-9 : 0.0;
  r.busbw_gbps = r.algbw_gbps * busbw_factor(CollOp::kAllToAll, n);
  return out;
}

}  // namespace fleetsim
