// Test-only reference: the flow-level network as it was before the class-based solver (commit
// 9c22525 of sim/net/flow_network.cpp), kept verbatim apart from its name. Every start and end
// re-solves the whole connected component flow by flow (progressive filling over per-link flow
// lists), which is quadratic in the flows of an all-to-all but simple enough to trust; tests
// compare the new solver's times against it on sizes where it runs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <vector>

#include "core/error.h"
#include "core/simulator.h"
#include "net/flow_network.h"
#include "topo/topology.h"

namespace fleetsim::testing {

class ReferenceFlowNetwork final : public EventHandler {
 public:
  ReferenceFlowNetwork(Simulator& sim, const std::vector<Link>& links);

  // Starts a flow of `bytes` along `route` now; `observer->on_flow_done(sim, tag)` fires when
  // it has been delivered. Returns the flow id.
  uint32_t start(const Route& route, double bytes, FlowObserver* observer, uint64_t tag);

  size_t active_flows() const { return active_count_; }
  double rate(uint32_t flow) const { return flows_[flow].rate; }
  // Bytes carried per link so far (weights applied), for utilisation reports.
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  double link_capacity(uint32_t link) const { return capacity_[link]; }
  // Time so far during which `link` had more demand than capacity: its capacity was fully
  // allocated (it is the bottleneck of at least one flow), the USE view's "saturation".
  Time saturated_time(uint32_t link) const;
  uint64_t solves() const { return solves_; }

  void on_event(Simulator& sim, uint64_t tag) override;

 private:
  struct Flow {
    std::vector<PathHop> hops;
    std::vector<uint32_t> pos;  // position of this flow in flows_on_link_[hop.link]
    double remaining = 0;       // bytes left at last_update
    double rate = 0;            // bytes/s
    Time last_update;
    Time latency;
    uint32_t version = 0;
    FlowObserver* observer = nullptr;
    uint64_t tag = 0;
    bool active = false;
    uint32_t stamp = 0;
  };
  struct Completion {
    int64_t time_ps;
    uint32_t flow;
    uint32_t version;
    bool operator>(const Completion& o) const {
      return time_ps > o.time_ps || (time_ps == o.time_ps && flow > o.flow);
    }
  };

  void request_solve();
  void solve();
  void settle(Flow& f, Time now);
  void finish(uint32_t id);
  void schedule_next_completion();

  Simulator& sim_;
  std::vector<double> capacity_;
  std::vector<double> link_bytes_;
  std::vector<std::vector<uint32_t>> flows_on_link_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_ids_;
  std::vector<uint32_t> dirty_;
  size_t active_count_ = 0;
  bool solve_pending_ = false;
  EventId completion_event_;
  Time completion_at_ = Time::infinite();
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  // Scratch space for solves, indexed by link id / reused across solves.
  std::vector<double> rem_cap_, weight_sum_;
  std::vector<uint32_t> link_stamp_;
  std::vector<int64_t> sat_since_;  // ps when the link became saturated, −1 if it is not
  std::vector<int64_t> sat_ps_;     // closed saturated intervals
  void set_saturated(uint32_t link, bool saturated, int64_t now);
  uint32_t stamp_ = 0;
  uint64_t solves_ = 0;
  // Deliveries waiting out their route latency: (time, flow id).
  struct Delivery {
    FlowObserver* observer;
    uint64_t tag;
  };
  std::vector<Delivery> deliveries_;
  std::vector<uint32_t> free_deliveries_;
};

}  // namespace fleetsim::testing

namespace fleetsim::testing {

namespace ref_detail {
constexpr uint64_t kSolveTag = 0;
constexpr uint64_t kCompletionTag = 1;
constexpr uint64_t kDeliveryBase = 2;
}  // namespace ref_detail
using namespace ref_detail;

inline ReferenceFlowNetwork::ReferenceFlowNetwork(Simulator& sim, const std::vector<Link>& links)
    : sim_(sim) {
  capacity_.reserve(links.size());
  for (const Link& l : links)
    capacity_.push_back(l.capacity.bytes_per_second());
  link_bytes_.assign(links.size(), 0.0);
  flows_on_link_.resize(links.size());
  rem_cap_.assign(links.size(), 0.0);
  weight_sum_.assign(links.size(), 0.0);
  link_stamp_.assign(links.size(), 0);
  sat_since_.assign(links.size(), -1);
  sat_ps_.assign(links.size(), 0);
}

inline void ReferenceFlowNetwork::set_saturated(uint32_t link, bool saturated, int64_t now) {
  if (saturated && sat_since_[link] < 0) {
    sat_since_[link] = now;
  } else if (!saturated && sat_since_[link] >= 0) {
    sat_ps_[link] += now - sat_since_[link];
    sat_since_[link] = -1;
  }
}

inline Time ReferenceFlowNetwork::saturated_time(uint32_t link) const {
  int64_t t = sat_ps_[link];
  if (sat_since_[link] >= 0) t += sim_.now().ps() - sat_since_[link];
  return Time::from_ps(t);
}

inline uint32_t ReferenceFlowNetwork::start(const Route& route, double bytes,
                                            FlowObserver* observer, uint64_t tag) {
  FLEETSIM_ASSERT(observer != nullptr);
  FLEETSIM_ASSERT(std::isfinite(bytes) && bytes >= 0);
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.hops = route.hops;
  f.pos.assign(f.hops.size(), 0);
  f.remaining = bytes;
  f.rate = 0;
  f.last_update = sim_.now();
  f.latency = route.latency;
  f.observer = observer;
  f.tag = tag;
  ++f.version;
  if (bytes <= 0 || f.hops.empty()) {
    // Nothing to transmit (or a GPU sending to itself): only the latency remains.
    f.active = false;
    free_ids_.push_back(id);
    uint32_t d;
    if (!free_deliveries_.empty()) {
      d = free_deliveries_.back();
      free_deliveries_.pop_back();
    } else {
      d = static_cast<uint32_t>(deliveries_.size());
      deliveries_.emplace_back();
    }
    deliveries_[d] = Delivery{observer, tag};
    sim_.schedule_at(sim_.now() + route.latency, this, kDeliveryBase + d);
    return id;
  }
  f.active = true;
  for (size_t h = 0; h < f.hops.size(); ++h) {
    auto& on_link = flows_on_link_[f.hops[h].link];
    f.pos[h] = static_cast<uint32_t>(on_link.size());
    on_link.push_back(id);
  }
  ++active_count_;
  dirty_.push_back(id);
  request_solve();
  return id;
}

inline void ReferenceFlowNetwork::request_solve() {
  if (solve_pending_) return;
  solve_pending_ = true;
  sim_.schedule_at(sim_.now(), this, kSolveTag);
}

inline void ReferenceFlowNetwork::settle(Flow& f, Time now) {
  const double dt = (now - f.last_update).seconds();
  if (dt > 0 && f.rate > 0) {
    const double moved = std::min(f.remaining, f.rate * dt);
    f.remaining -= moved;
    for (const PathHop& h : f.hops)
      link_bytes_[h.link] += moved * h.weight;
  }
  f.last_update = now;
}

inline void ReferenceFlowNetwork::solve() {
  ++solves_;
  ++stamp_;
  const uint32_t stamp = stamp_;
  const Time now = sim_.now();
  std::vector<uint32_t> comp_flows;
  std::vector<uint32_t> comp_links;
  for (uint32_t id : dirty_) {
    Flow& f = flows_[id];
    if (!f.active || f.stamp == stamp) continue;
    f.stamp = stamp;
    comp_flows.push_back(id);
  }
  dirty_.clear();
  for (size_t i = 0; i < comp_flows.size(); ++i) {
    const Flow& f = flows_[comp_flows[i]];
    for (const PathHop& h : f.hops) {
      if (link_stamp_[h.link] == stamp) continue;
      link_stamp_[h.link] = stamp;
      comp_links.push_back(h.link);
      for (uint32_t other : flows_on_link_[h.link]) {
        Flow& o = flows_[other];
        if (o.stamp == stamp) continue;
        o.stamp = stamp;
        comp_flows.push_back(other);
      }
    }
  }
  if (comp_flows.empty()) return;

  for (uint32_t id : comp_flows) {
    settle(flows_[id], now);
    flows_[id].rate = -1.0;  // unfrozen
  }
  for (uint32_t l : comp_links) {
    rem_cap_[l] = capacity_[l];
    double w = 0;
    for (uint32_t id : flows_on_link_[l]) {
      for (const PathHop& h : flows_[id].hops) {
        if (h.link == l) w += h.weight;
      }
    }
    weight_sum_[l] = w;
  }

  // Progressive filling: raise all unfrozen rates together until a link saturates, freeze the
  // flows crossing it, repeat.
  size_t unfrozen = comp_flows.size();
  std::vector<uint32_t> bottlenecks;
  while (unfrozen > 0) {
    double best = std::numeric_limits<double>::infinity();
    for (uint32_t l : comp_links) {
      if (weight_sum_[l] <= 1e-12) continue;
      best = std::min(best, std::max(rem_cap_[l], 0.0) / weight_sum_[l]);
    }
    if (!std::isfinite(best)) break;
    bottlenecks.clear();
    for (uint32_t l : comp_links) {
      if (weight_sum_[l] <= 1e-12) continue;
      if (std::max(rem_cap_[l], 0.0) / weight_sum_[l] <= best * (1.0 + 1e-9))
        bottlenecks.push_back(l);
    }
    for (uint32_t l : bottlenecks) {
      for (uint32_t id : flows_on_link_[l]) {
        Flow& f = flows_[id];
        if (f.rate >= 0) continue;
        f.rate = best;
        --unfrozen;
        for (const PathHop& h : f.hops) {
          rem_cap_[h.link] -= h.weight * best;
          weight_sum_[h.link] -= h.weight;
        }
      }
      weight_sum_[l] = 0;
    }
  }

  for (uint32_t l : comp_links)
    set_saturated(l, rem_cap_[l] <= capacity_[l] * 1e-6, now.ps());
  for (uint32_t id : comp_flows) {
    Flow& f = flows_[id];
    if (f.rate < 0) f.rate = 0;
    ++f.version;
    if (f.rate <= 0) continue;
    const double ps = std::ceil(f.remaining / f.rate * 1e12);
    const int64_t finish =
        ps >= 9.0e18 ? Time::infinite().ps() : (now.ps() + static_cast<int64_t>(ps));
    completions_.push(Completion{finish, id, f.version});
  }
}

inline void ReferenceFlowNetwork::finish(uint32_t id) {
  Flow& f = flows_[id];
  settle(f, sim_.now());
  for (size_t h = 0; h < f.hops.size(); ++h) {
    const uint32_t link = f.hops[h].link;
    auto& on_link = flows_on_link_[link];
    const uint32_t pos = f.pos[h];
    const uint32_t last = on_link.back();
    on_link[pos] = last;
    if (last != id) {
      Flow& moved = flows_[last];
      for (size_t k = 0; k < moved.hops.size(); ++k) {
        if (moved.hops[k].link == link && moved.pos[k] == on_link.size() - 1) {
          moved.pos[k] = pos;
          break;
        }
      }
    }
    on_link.pop_back();
    if (on_link.empty()) set_saturated(link, false, sim_.now().ps());
    for (uint32_t other : on_link)
      dirty_.push_back(other);
  }
  f.active = false;
  ++f.version;
  --active_count_;
  uint32_t d;
  if (!free_deliveries_.empty()) {
    d = free_deliveries_.back();
    free_deliveries_.pop_back();
  } else {
    d = static_cast<uint32_t>(deliveries_.size());
    deliveries_.emplace_back();
  }
  deliveries_[d] = Delivery{f.observer, f.tag};
  sim_.schedule_at(sim_.now() + f.latency, this, kDeliveryBase + d);
  free_ids_.push_back(id);
}

inline void ReferenceFlowNetwork::schedule_next_completion() {
  while (!completions_.empty()) {
    const Completion& c = completions_.top();
    const Flow& f = flows_[c.flow];
    if (f.active && f.version == c.version) break;
    completions_.pop();
  }
  if (completions_.empty()) return;
  const Time next = Time::from_ps(completions_.top().time_ps);
  if (next.is_infinite()) return;
  if (sim_.is_pending(completion_event_)) {
    if (completion_at_ <= next) return;
    sim_.cancel(completion_event_);
  }
  completion_at_ = next;
  completion_event_ = sim_.schedule_at(next, this, kCompletionTag);
}

inline void ReferenceFlowNetwork::on_event(Simulator& sim, uint64_t tag) {
  if (tag == kSolveTag) {
    solve_pending_ = false;
    solve();
    schedule_next_completion();
    return;
  }
  if (tag == kCompletionTag) {
    completion_at_ = Time::infinite();
    const int64_t now = sim.now().ps();
    while (!completions_.empty() && completions_.top().time_ps <= now) {
      const Completion c = completions_.top();
      completions_.pop();
      const Flow& f = flows_[c.flow];
      if (!f.active || f.version != c.version) continue;
      finish(c.flow);
    }
    if (!dirty_.empty() && !solve_pending_) solve();
    schedule_next_completion();
    return;
  }
  const uint32_t d = static_cast<uint32_t>(tag - kDeliveryBase);
  const Delivery del = deliveries_[d];
  free_deliveries_.push_back(d);
  del.observer->on_flow_done(sim, del.tag);
}

}  // namespace fleetsim::testing
