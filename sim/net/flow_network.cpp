#include "net/flow_network.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/error.h"

namespace fleetsim {
namespace {
constexpr uint64_t kSolveTag = 0;
constexpr uint64_t kCompletionTag = 1;
constexpr uint64_t kDeliveryBase = 2;
}  // namespace

FlowNetwork::FlowNetwork(Simulator& sim, const std::vector<Link>& links)
    : sim_(sim), paths_(links) {
  capacity_.reserve(links.size());
  for (const Link& l : links)
    capacity_.push_back(l.capacity.bytes_per_second());
  link_bytes_.assign(links.size(), 0.0);
  link_segs_.resize(links.size());
  rem_cap_.assign(links.size(), 0.0);
  weight_sum_.assign(links.size(), 0.0);
  link_stamp_.assign(links.size(), 0);
  sat_since_.assign(links.size(), -1);
  sat_ps_.assign(links.size(), 0);
}

void FlowNetwork::set_saturated(uint32_t link, bool saturated, int64_t now) {
  if (saturated && sat_since_[link] < 0) {
    sat_since_[link] = now;
  } else if (!saturated && sat_since_[link] >= 0) {
    sat_ps_[link] += now - sat_since_[link];
    sat_since_[link] = -1;
  }
}

Time FlowNetwork::saturated_time(uint32_t link) const {
  int64_t t = sat_ps_[link];
  if (sat_since_[link] >= 0) t += sim_.now().ps() - sat_since_[link];
  return Time::from_ps(t);
}

void FlowNetwork::register_segments() {
  const size_t n = paths_.segments();
  if (n == registered_segs_) return;
  for (size_t s = registered_segs_; s < n; ++s) {
    for (const PathHop& h : paths_.segment_hops(static_cast<uint32_t>(s)))
      link_segs_[h.link].push_back(SegUse{static_cast<uint32_t>(s), h.weight});
  }
  registered_segs_ = n;
  seg_flows_.resize(n);
  seg_live_.resize(n, 0);
  seg_stamp_.resize(n, 0);
  seg_dirty_.resize(n, 0);
  seg_w_.resize(n, 0.0);
  seg_delta_.resize(n, 0.0);
  seg_moved_.resize(n, 0.0);
}

void FlowNetwork::mark_dirty(uint32_t seg) {
  if (seg_dirty_[seg]) return;
  seg_dirty_[seg] = 1;
  dirty_segs_.push_back(seg);
}

void FlowNetwork::deliver(FlowObserver* observer, uint64_t tag, Time at) {
  uint32_t d;
  if (!free_deliveries_.empty()) {
    d = free_deliveries_.back();
    free_deliveries_.pop_back();
  } else {
    d = static_cast<uint32_t>(deliveries_.size());
    deliveries_.emplace_back();
  }
  deliveries_[d] = Delivery{observer, tag};
  sim_.schedule_at(at, this, kDeliveryBase + d);
}

uint32_t FlowNetwork::start_route(uint32_t route, double bytes, uint32_t count,
                                  FlowObserver* observer, uint64_t tag) {
  FLEETSIM_ASSERT(observer != nullptr);
  FLEETSIM_ASSERT(std::isfinite(bytes) && bytes >= 0);
  FLEETSIM_ASSERT(count >= 1 && route < paths_.routes());
  register_segments();
  const uint32_t id = static_cast<uint32_t>(flows_.size());
  FLEETSIM_ASSERT(flows_.size() < std::numeric_limits<uint32_t>::max());
  Flow& f = flows_.emplace_back();
  f.remaining = bytes;
  f.last_update_ps = sim_.now().ps();
  f.observer = observer;
  f.tag = tag;
  f.route = route;
  f.count = count;
  if (bytes <= 0 || paths_.route_empty(route)) {
    // Nothing to transmit (or a GPU sending to itself): only the latency remains.
    deliver(observer, tag, sim_.now() + paths_.route_latency(route));
    return id;
  }
  f.active = true;
  ++active_count_;
  for (uint32_t s : paths_.route_segments(route)) {
    seg_flows_[s].push_back(id);
    ++seg_live_[s];
    mark_dirty(s);
  }
  request_solve();
  return id;
}

void FlowNetwork::request_solve() {
  if (solve_pending_) return;
  solve_pending_ = true;
  sim_.schedule_at(sim_.now(), this, kSolveTag);
}

void FlowNetwork::settle(Flow& f, int64_t now_ps) {
  const double dt = Time::from_ps(now_ps - f.last_update_ps).seconds();
  if (dt > 0 && f.rate > 0) {
    const double moved = std::min(f.remaining, f.rate * dt);
    f.remaining -= moved;
    const double all = moved * f.count;
    for (uint32_t s : paths_.route_segments(f.route)) {
      if (seg_moved_[s] == 0) moved_segs_.push_back(s);
      seg_moved_[s] += all;
    }
  }
  f.last_update_ps = now_ps;
}

void FlowNetwork::flush_moved() {
  for (uint32_t s : moved_segs_) {
    const double b = seg_moved_[s];
    for (const PathHop& h : paths_.segment_hops(s))
      link_bytes_[h.link] += b * h.weight;
    seg_moved_[s] = 0;
  }
  moved_segs_.clear();
}

void FlowNetwork::compact(uint32_t seg) {
  auto& v = seg_flows_[seg];
  if (v.size() <= 2 * static_cast<size_t>(seg_live_[seg]) + 8) return;
  v.erase(std::remove_if(v.begin(), v.end(), [&](uint32_t id) { return !flows_[id].active; }),
          v.end());
}

// The links, segments and flows connected to the dirty segments through shared links and flows.
void FlowNetwork::collect_component(uint32_t stamp) {
  comp_links_.clear();
  comp_segs_.clear();
  comp_flows_.clear();
  auto add_link = [&](uint32_t l) {
    if (link_stamp_[l] == stamp) return;
    link_stamp_[l] = stamp;
    comp_links_.push_back(l);
  };
  auto add_seg = [&](uint32_t s) {
    if (seg_stamp_[s] == stamp || seg_live_[s] == 0) return;
    seg_stamp_[s] = stamp;
    comp_segs_.push_back(s);
  };
  for (uint32_t s : dirty_segs_) {
    seg_dirty_[s] = 0;
    for (const PathHop& h : paths_.segment_hops(s))
      add_link(h.link);
  }
  dirty_segs_.clear();
  size_t li = 0, si = 0;
  while (li < comp_links_.size() || si < comp_segs_.size()) {
    for (; li < comp_links_.size(); ++li) {
      for (const SegUse& u : link_segs_[comp_links_[li]])
        add_seg(u.seg);
    }
    for (; si < comp_segs_.size(); ++si) {
      const uint32_t s = comp_segs_[si];
      compact(s);
      for (const PathHop& h : paths_.segment_hops(s))
        add_link(h.link);
      for (uint32_t id : seg_flows_[s]) {
        Flow& f = flows_[id];
        if (!f.active || f.stamp == stamp) continue;
        f.stamp = stamp;
        comp_flows_.push_back(id);
        for (uint32_t s2 : paths_.route_segments(f.route))
          add_seg(s2);
      }
    }
  }
}

// Progressive filling over the component: raise all unfrozen rates together until a link
// saturates, freeze the flows crossing it (every flow of every segment on it), repeat.
void FlowNetwork::fill(uint32_t stamp) {
  for (uint32_t s : comp_segs_)
    seg_w_[s] = 0;
  for (uint32_t id : comp_flows_) {
    Flow& f = flows_[id];
    f.rate = -1.0;
    for (uint32_t s : paths_.route_segments(f.route))
      seg_w_[s] += f.count;
  }
  for (uint32_t l : comp_links_) {
    rem_cap_[l] = capacity_[l];
    double w = 0;
    for (const SegUse& u : link_segs_[l]) {
      if (seg_stamp_[u.seg] == stamp) w += u.weight * seg_w_[u.seg];
    }
    weight_sum_[l] = w;
  }
  size_t unfrozen = comp_flows_.size();
  while (unfrozen > 0) {
    double best = std::numeric_limits<double>::infinity();
    for (uint32_t l : comp_links_) {
      if (weight_sum_[l] <= 1e-12) continue;
      best = std::min(best, std::max(rem_cap_[l], 0.0) / weight_sum_[l]);
    }
    if (!std::isfinite(best)) break;
    bottlenecks_.clear();
    for (uint32_t l : comp_links_) {
      if (weight_sum_[l] <= 1e-12) continue;
      if (std::max(rem_cap_[l], 0.0) / weight_sum_[l] <= best * (1.0 + 1e-9))
        bottlenecks_.push_back(l);
    }
    for (uint32_t l : bottlenecks_) {
      for (const SegUse& u : link_segs_[l]) {
        if (seg_stamp_[u.seg] != stamp || seg_w_[u.seg] - seg_delta_[u.seg] < 0.5) continue;
        for (uint32_t id : seg_flows_[u.seg]) {
          Flow& f = flows_[id];
          if (!f.active || f.rate >= 0) continue;
          f.rate = best;
          --unfrozen;
          for (uint32_t s : paths_.route_segments(f.route)) {
            if (seg_delta_[s] == 0) touched_.push_back(s);
            seg_delta_[s] += f.count;
          }
        }
      }
    }
    for (uint32_t s : touched_) {
      const double d = seg_delta_[s];
      for (const PathHop& h : paths_.segment_hops(s)) {
        rem_cap_[h.link] -= h.weight * best * d;
        weight_sum_[h.link] -= h.weight * d;
      }
      seg_w_[s] -= d;
      seg_delta_[s] = 0;
    }
    touched_.clear();
    for (uint32_t l : bottlenecks_)
      weight_sum_[l] = 0;
  }
}

void FlowNetwork::solve() {
  ++solves_;
  const uint32_t stamp = ++stamp_;
  const int64_t now = sim_.now().ps();
  collect_component(stamp);
  for (uint32_t id : comp_flows_)
    settle(flows_[id], now);
  flush_moved();
  if (comp_flows_.empty()) {
    for (uint32_t l : comp_links_)
      set_saturated(l, false, now);
    return;
  }
  fill(stamp);
  for (uint32_t l : comp_links_)
    set_saturated(l, rem_cap_[l] <= capacity_[l] * 1e-6, now);
  for (uint32_t id : comp_flows_) {
    Flow& f = flows_[id];
    if (f.rate < 0) f.rate = 0;
    ++f.version;
    if (f.rate <= 0) continue;
    const double ps = std::ceil(f.remaining / f.rate * 1e12);
    const int64_t finish = ps >= 9.0e18 ? Time::infinite().ps() : now + static_cast<int64_t>(ps);
    push_completion(Completion{finish, id, f.version});
  }
  // Drop stale entries (superseded versions) once they outnumber the live ones.
  if (completions_.size() > 2 * active_count_ + 1024) {
    std::erase_if(completions_, [&](const Completion& c) {
      const Flow& f = flows_[c.flow];
      return !f.active || f.version != c.version;
    });
    std::make_heap(completions_.begin(), completions_.end(), std::greater<>());
  }
}

void FlowNetwork::push_completion(const Completion& c) {
  completions_.push_back(c);
  std::push_heap(completions_.begin(), completions_.end(), std::greater<>());
}

void FlowNetwork::finish(uint32_t id) {
  Flow& f = flows_[id];
  settle(f, sim_.now().ps());
  f.active = false;
  ++f.version;
  --active_count_;
  for (uint32_t s : paths_.route_segments(f.route)) {
    --seg_live_[s];
    mark_dirty(s);
  }
  deliver(f.observer, f.tag, sim_.now() + paths_.route_latency(f.route));
}

void FlowNetwork::schedule_next_completion() {
  while (!completions_.empty()) {
    const Completion& c = completions_.front();
    const Flow& f = flows_[c.flow];
    if (f.active && f.version == c.version) break;
    std::pop_heap(completions_.begin(), completions_.end(), std::greater<>());
    completions_.pop_back();
  }
  if (completions_.empty()) return;
  const Time next = Time::from_ps(completions_.front().time_ps);
  if (next.is_infinite()) return;
  if (sim_.is_pending(completion_event_)) {
    if (completion_at_ <= next) return;
    sim_.cancel(completion_event_);
  }
  completion_at_ = next;
  completion_event_ = sim_.schedule_at(next, this, kCompletionTag);
}

void FlowNetwork::on_event(Simulator& sim, uint64_t tag) {
  if (tag == kSolveTag) {
    solve_pending_ = false;
    solve();
    schedule_next_completion();
    return;
  }
  if (tag == kCompletionTag) {
    completion_at_ = Time::infinite();
    const int64_t now = sim.now().ps();
    while (!completions_.empty() && completions_.front().time_ps <= now) {
      const Completion c = completions_.front();
      std::pop_heap(completions_.begin(), completions_.end(), std::greater<>());
      completions_.pop_back();
      const Flow& f = flows_[c.flow];
      if (!f.active || f.version != c.version) continue;
      finish(c.flow);
    }
    flush_moved();
    if (!dirty_segs_.empty() && !solve_pending_) solve();
    schedule_next_completion();
    return;
  }
  const uint32_t d = static_cast<uint32_t>(tag - kDeliveryBase);
  const Delivery del = deliveries_[d];
  free_deliveries_.push_back(d);
  del.observer->on_flow_done(sim, del.tag);
}

size_t FlowNetwork::memory_bytes() const {
  size_t b = paths_.memory_bytes() + flows_.capacity() * sizeof(Flow) +
             completions_.capacity() * sizeof(Completion);
  for (const auto& v : seg_flows_)
    b += v.capacity() * sizeof(uint32_t) + sizeof(v);
  for (const auto& v : link_segs_)
    b += v.capacity() * sizeof(SegUse) + sizeof(v);
  b += seg_live_.size() * (4 + 4 + 1 + 8 + 8 + 8);
  return b;
}

}  // namespace fleetsim
