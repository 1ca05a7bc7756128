#include "workload/internal/comm_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include "coll/dispatch.h"
#include "core/error.h"
#include "core/simulator.h"
#include "net/flow_network.h"

namespace fleetsim::step_internal {
namespace {

struct Done final : EventHandler {
  std::vector<Time> end;
  void on_event(Simulator& sim, uint64_t tag) override { end[tag] = sim.now(); }
};

// Starts every plan at time zero on `net`, runs `sim` to the end and returns the time the last
// plan finished.
Time run_wave(std::vector<CollectivePlan> plans, const CollectiveParams& params, Simulator& sim,
              FlowNetwork& net) {
  Done done;
  done.end.assign(plans.size(), Time::zero());
  std::vector<std::unique_ptr<CollectiveRun>> runs;
  for (size_t i = 0; i < plans.size(); ++i) {
    runs.push_back(std::make_unique<CollectiveRun>(params, std::move(plans[i])));
    runs.back()->start(sim, net, &done, i);
  }
  sim.run();
  Time worst = Time::zero();
  for (const Time& t : done.end)
    worst = std::max(worst, t);
  return worst;
}

// FLEETSIM_DEBUG: why algorithm `a` could not be planned, with the NVLink domains of each group.
void debug_unplannable(const Topology& topo, Algorithm a, const InternalError& e,
                       const std::vector<std::vector<int>>& groups) {
  if (!std::getenv("FLEETSIM_DEBUG")) return;
  std::fprintf(stderr, "%s %s groups=%zu\n", to_string(a), e.what(), groups.size());
  for (auto& gg : groups) {
    std::map<int, int> dc;
    for (int x : gg)
      dc[topo.domain_of(x)]++;
    for (auto& [k, v] : dc)
      std::fprintf(stderr, " d%d:%d", k, v);
    std::fprintf(stderr, " |");
  }
}

}  // namespace

CommModel::Key CommModel::key(Dim d, CollOp op, double bytes) {
  return std::make_tuple(static_cast<int>(d), static_cast<int>(op),
                         static_cast<int64_t>(std::llround(bytes)));
}

Time CommModel::time(Dim d, CollOp op, double bytes) {
  if (bytes <= 0) return Time::zero();
  const Key k = key(d, op, bytes);
  auto it = memo_.find(k);
  if (it != memo_.end()) return it->second;
  const Time t = simulate(d, op, bytes);
  memo_.emplace(k, t);
  return t;
}

namespace {

// The library and mode of a flex dispatcher (step.h).
DispatchCall dispatch_call(MoeDispatcher d) {
  DispatchCall c;
  switch (d) {
    case MoeDispatcher::kAllToAll:
      c.library = DispatchLibrary::kNccl;
      break;
    case MoeDispatcher::kDeepEp:
      c.library = DispatchLibrary::kDeepEp;
      break;
    case MoeDispatcher::kDeepEpLowLatency:
      c.library = DispatchLibrary::kDeepEp;
      c.mode = DispatchMode::kLowLatency;
      break;
    case MoeDispatcher::kHybridEp:
      c.library = DispatchLibrary::kHybridEp;
      break;
    case MoeDispatcher::kUcclEp:
      c.library = DispatchLibrary::kUcclEp;
      break;
    case MoeDispatcher::kUcclEpLowLatency:
      c.library = DispatchLibrary::kUcclEp;
      c.mode = DispatchMode::kLowLatency;
      break;
    case MoeDispatcher::kPplx:
      c.library = DispatchLibrary::kPplx;
      break;
    case MoeDispatcher::kNvlinkOneSided:
      c.library = DispatchLibrary::kNvlinkOneSided;
      break;
  }
  return c;
}

}  // namespace

Time CommModel::ep_dispatch(double tokens, double bytes_per_copy, int experts, int top_k,
                            MoeDispatcher dispatcher, int sms) {
  const auto k = std::make_tuple(static_cast<int64_t>(std::llround(tokens)),
                                 static_cast<int64_t>(std::llround(bytes_per_copy)), experts);
  auto it = ep_memo_.find(k);
  if (it != ep_memo_.end()) return it->second;
  const auto groups = colocated_groups(Dim::kEp);
  DispatchCall c = dispatch_call(dispatcher);
  c.ranks = static_cast<int>(groups.front().size());
  c.tokens_per_rank = tokens;
  c.copy_bytes = bytes_per_copy;
  c.hidden = 1;  // unused: copy_bytes says the bytes
  c.top_k = top_k;
  c.experts = experts;
  c.sms = sms;
  std::vector<DispatchPlan> calls;
  std::vector<CollectivePlan> plans;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    calls.push_back(plan_dispatch(topo_, params_, c, groups[gi], seed_ + gi));
    plans.push_back(std::move(calls.back().flows));
  }
  Time flow = Time::zero();
  if (!plans.front().flows.empty()) {
    Simulator sim;
    FlowNetwork net(sim, topo_.links());
    flow = run_wave(std::move(plans), calls.front().params, sim, net);
  }
  // The terms outside the network are the same for every co-located group (same sizes).
  const Time worst = dispatch_time(calls.front(), flow);
  ep_memo_.emplace(k, worst);
  return worst;
}

void CommModel::account(Dim d, CollOp op, double bytes, double occurrences) {
  if (bytes <= 0 || occurrences <= 0) return;
  time(d, op, bytes);
  const auto& lb = link_memo_[key(d, op, bytes)];
  if (link_bytes_.empty()) {
    link_bytes_.assign(topo_.links().size(), 0.0);
    link_sat_.assign(topo_.links().size(), 0.0);
  }
  for (const auto& u : lb) {
    link_bytes_[u.link] += u.bytes * occurrences;
    link_sat_[u.link] += u.saturated_s * occurrences;
  }
}

std::vector<std::vector<int>> CommModel::colocated_groups(Dim d) {
  auto cached = groups_.find(static_cast<int>(d));
  if (cached != groups_.end()) return cached->second;
  // Groups in rank space; nodes in physical space.
  const std::vector<int> g0 = group_of(G_, d, 0);
  std::set<int> nodes;
  for (int g : g0)
    nodes.insert(topo_.node_of(gpu_of(g)));
  std::vector<int> rank_of_gpu(topo_.gpus(), -1);
  for (int r = 0; r < G_.world; ++r)
    rank_of_gpu[gpu_of(r)] = r;
  std::vector<std::vector<int>> out;
  std::set<int> taken;
  for (int n : nodes) {
    for (int l = 0; l < topo_.gpus_per_node(); ++l) {
      const int g = rank_of_gpu[n * topo_.gpus_per_node() + l];
      if (g < 0 || taken.count(g)) continue;
      std::vector<int> grp = group_of(G_, d, g);
      bool inside = true;
      for (int x : grp)
        inside = inside && nodes.count(topo_.node_of(gpu_of(x))) > 0;
      if (!inside || grp.size() < 2) continue;
      // Only groups whose first member is `g` are new (avoid duplicates).
      if (grp.front() != g && d != Dim::kPp) {
        bool seen = false;
        for (int x : grp)
          seen = seen || taken.count(x) > 0;
        if (seen) continue;
      }
      for (int x : grp)
        taken.insert(x);
      out.push_back(std::move(grp));
    }
  }
  if (out.empty()) out.push_back(g0);
  for (auto& grp : out)
    for (int& x : grp)
      x = gpu_of(x);
  groups_.emplace(static_cast<int>(d), out);
  return out;
}

Time CommModel::simulate(Dim d, CollOp op, double bytes) {
  const auto groups = colocated_groups(d);
  std::vector<Algorithm> algos = candidate_algorithms(topo_, op, groups.front());
  if (algos.empty()) algos = {Algorithm::kRing};
  Time best = Time::infinite();
  std::vector<WaveLink> best_links;
  const Bytes size(static_cast<int64_t>(std::llround(bytes)));
  for (Algorithm a : algos) {
    std::vector<CollectivePlan> plans;
    try {
      for (size_t i = 0; i < groups.size(); ++i)
        plans.push_back(plan_collective(topo_, params_, op, a, size, groups[i], seed_ + i));
    } catch (const InternalError& e) {
      debug_unplannable(topo_, a, e, groups);
      continue;  // this algorithm cannot run on the placement (e.g. uneven NVLink domains)
    }
    Simulator sim;
    FlowNetwork net(sim, topo_.links());
    const Time worst = run_wave(std::move(plans), params_, sim, net);
    if (worst < best) {
      best = worst;
      best_links.clear();
      // Bytes the whole wave (every co-located group) put on each link.
      const std::vector<double>& lb = net.link_bytes();
      for (uint32_t l = 0; l < lb.size(); ++l)
        if (lb[l] > 0) best_links.push_back({l, lb[l], net.saturated_time(l).seconds()});
    }
  }
  if (best == Time::infinite()) {
    throw InputError("", "/workload/parallelism",
                     std::string("no collective algorithm can run the ") + dim_name(d) + " " +
                         to_string(op) +
                         " on this rank placement (groups split unevenly over NVLink domains)");
  }
  link_memo_[key(d, op, bytes)] = best_links;
  return best;
}

}  // namespace fleetsim::step_internal
