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

uint32_t FlowNetwork::deliver(FlowObserver* observer, uint64_t tag, Time at) {
  uint32_t d;
  if (!free_deliveries_.empty()) {
    d = free_deliveries_.back();
    free_deliveries_.pop_back();
  } else {
    d = static_cast<uint32_t>(deliveries_.size());
    deliveries_.emplace_back();
  }
  deliveries_[d].first = Delivery{observer, tag};
  sim_.schedule_at(at, this, kDeliveryBase + d);
  return d;
}

// Inside a completion batch no other handler runs, so the deliveries it makes at one instant
// would be consecutive events: one event runs them in the same order.
void FlowNetwork::deliver_batched(FlowObserver* observer, uint64_t tag, Time at) {
  const int64_t ps = at.ps();
  for (auto it = open_deliveries_.rbegin(); it != open_deliveries_.rend(); ++it) {
    if (it->first == ps) {
      DeliverySlot& slot = deliveries_[it->second];
      Delivery& last = slot.more.empty() ? slot.first : slot.more.back();
      if (last.observer == observer && last.tag + last.count == tag) {
        ++last.count;
      } else {
        slot.more.push_back(Delivery{observer, tag});
      }
      return;
    }
  }
  open_deliveries_.emplace_back(ps, deliver(observer, tag, at));
}

void FlowNetwork::run_deliveries(Simulator& sim, uint32_t d) {
  // Observers may start flows (and deliveries) here: take the slot's contents out first.
  const Delivery first = deliveries_[d].first;
  std::vector<Delivery> more = std::move(deliveries_[d].more);
  deliveries_[d].more = {};
  free_deliveries_.push_back(d);
  for (uint64_t i = 0; i < first.count; ++i)
    first.observer->on_flow_done(sim, first.tag + i);
  for (const Delivery& del : more) {
    for (uint64_t i = 0; i < del.count; ++i)
      del.observer->on_flow_done(sim, del.tag + i);
  }
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
  flow_mark_.push_back(kDone);
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
  flow_mark_[id] = 0;
  ++active_count_;
  for (uint32_t s : paths_.route_segments(route)) {
    seg_flows_[s].push_back(id);
    ++seg_live_[s];
    mark_dirty(s);
  }
  request_solve();
  return id;
}

void FlowNetwork::reserve(size_t flows) {
  const size_t need = flows_.size() + flows;
  if (need > flows_.capacity()) flows_.reserve(std::max(need, 2 * flows_.capacity()));
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
  v.erase(std::remove_if(v.begin(), v.end(), [&](uint32_t id) { return flow_mark_[id] == kDone; }),
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
  // Every live segment dirty (a large collective's first solve): the component is every
  // active flow, found by a scan instead of a walk.
  size_t dirty_live = 0;
  for (uint32_t s : dirty_segs_) {
    seg_dirty_[s] = 0;
    dirty_live += seg_live_[s] > 0 ? 1 : 0;
    for (const PathHop& h : paths_.segment_hops(s))
      add_link(h.link);
  }
  const bool everything =
      dirty_live >= 4096 && 2 * dirty_live >= seg_live_.size() &&
      dirty_live == static_cast<size_t>(std::count_if(seg_live_.begin(), seg_live_.end(),
                                                      [](uint32_t n) { return n > 0; }));
  if (everything) {
    for (uint32_t s : dirty_segs_) {
      add_seg(s);
      compact(s);
    }
    dirty_segs_.clear();
    for (uint32_t id = 0; id < flow_mark_.size(); ++id) {
      if (flow_mark_[id] == kDone) continue;
      flow_mark_[id] = stamp;
      comp_flows_.push_back(id);
    }
    return;
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
        uint32_t& mark = flow_mark_[id];
        if (mark == kDone || mark == stamp) continue;
        mark = stamp;
        comp_flows_.push_back(id);
        for (uint32_t s2 : paths_.route_segments(flows_[id].route))
          add_seg(s2);
      }
    }
  }
  // In id order, so the passes over the component's flows read memory in order (their results
  // do not depend on the order: sums of counts, per-flow updates, completions sorted later).
  if (comp_flows_.size() < 4096) return;
  if (comp_flows_.size() * 16 < flows_.size()) {
    std::sort(comp_flows_.begin(), comp_flows_.end());
    return;
  }
  comp_flows_.clear();
  for (uint32_t id = 0; id < flow_mark_.size(); ++id) {
    if (flow_mark_[id] == stamp) comp_flows_.push_back(id);
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
    // Link order, so the frozen flows' updates (floating-point sums) do not depend on the
    // order in which the component was found.
    std::sort(bottlenecks_.begin(), bottlenecks_.end());
    for (uint32_t l : bottlenecks_) {
      for (const SegUse& u : link_segs_[l]) {
        if (seg_stamp_[u.seg] != stamp || seg_w_[u.seg] - seg_delta_[u.seg] < 0.5) continue;
        for (uint32_t id : seg_flows_[u.seg]) {
          if (flow_mark_[id] != stamp) continue;  // finished, or frozen already
          flow_mark_[id] = 0;
          Flow& f = flows_[id];
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
  FLEETSIM_ASSERT(stamp_ + 1 < kDone);
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
  push_completions(now);
  // Drop stale entries (superseded versions) once they outnumber the live ones.
  if (completion_entries_ > 2 * active_count_ + 1024) compact_completions();
}

bool FlowNetwork::stale(const Completion& c) const {
  const Flow& f = flows_[c.flow];
  return !f.active || f.version != c.version;
}

// New rates of the component's flows: their completion times as sorted runs.
void FlowNetwork::push_completions(int64_t now) {
  constexpr size_t kMaxBuckets = 16;
  batch_.clear();
  bucket_time_.clear();
  uint32_t lo = std::numeric_limits<uint32_t>::max(), hi = 0;
  bool few = true;
  for (uint32_t id : comp_flows_) {
    Flow& f = flows_[id];
    if (f.rate < 0) f.rate = 0;
    ++f.version;
    if (f.rate <= 0) continue;
    const double ps = std::ceil(f.remaining / f.rate * 1e12);
    const int64_t finish = ps >= 9.0e18 ? Time::infinite().ps() : now + static_cast<int64_t>(ps);
    batch_.push_back(Completion{finish, id, f.version});
    lo = std::min(lo, id);
    hi = std::max(hi, id);
    if (few && (bucket_time_.empty() || bucket_time_.back() != finish)) {
      auto it = std::find(bucket_time_.begin(), bucket_time_.end(), finish);
      if (it != bucket_time_.end()) {
        std::swap(*it, bucket_time_.back());  // the last one found is checked first
      } else if (bucket_time_.size() < kMaxBuckets) {
        bucket_time_.push_back(finish);
      } else {
        few = false;
      }
    }
  }
  if (batch_.empty()) return;
  if (few && batch_.size() >= 1024 && hi - lo < 4 * batch_.size()) {
    push_bucketed(lo, hi);
    return;
  }
  std::sort(batch_.begin(), batch_.end());
  const uint32_t r = new_run();
  runs_[r].items.swap(batch_);
  push_run(r);
}

// Few distinct times over a dense id range: one run per time, filled in id order by a scan of
// the range (linear, where sorting would be n log n).
void FlowNetwork::push_bucketed(uint32_t lo, uint32_t hi) {
  std::sort(bucket_time_.begin(), bucket_time_.end());
  bucket_of_.assign(static_cast<size_t>(hi - lo) + 1, 0xff);
  for (const Completion& c : batch_) {
    const auto b = std::lower_bound(bucket_time_.begin(), bucket_time_.end(), c.time_ps);
    bucket_of_[c.flow - lo] = static_cast<uint8_t>(b - bucket_time_.begin());
  }
  if (batch_.capacity() > 65536) batch_ = {};  // before the runs take as much again
  uint32_t run_of[16];
  for (size_t b = 0; b < bucket_time_.size(); ++b)
    run_of[b] = new_run();
  for (uint32_t id = lo;; ++id) {
    const uint8_t b = bucket_of_[id - lo];
    if (b != 0xff)
      runs_[run_of[b]].items.push_back(Completion{bucket_time_[b], id, flows_[id].version});
    if (id == hi) break;
  }
  for (size_t b = 0; b < bucket_time_.size(); ++b)
    push_run(run_of[b]);
}

uint32_t FlowNetwork::new_run() {
  if (free_runs_.empty()) {
    runs_.emplace_back();
    return static_cast<uint32_t>(runs_.size() - 1);
  }
  const uint32_t r = free_runs_.back();
  free_runs_.pop_back();
  return r;
}

bool FlowNetwork::run_after(uint32_t a, uint32_t b) const {
  const CompletionRun& x = runs_[a];
  const CompletionRun& y = runs_[b];
  return y.items[y.pos] < x.items[x.pos];
}

void FlowNetwork::push_run(uint32_t r) {
  completion_entries_ += runs_[r].items.size() - runs_[r].pos;
  run_heap_.push_back(r);
  std::push_heap(run_heap_.begin(), run_heap_.end(),
                 [this](uint32_t a, uint32_t b) { return run_after(a, b); });
}

void FlowNetwork::recycle_run(uint32_t r) {
  CompletionRun& run = runs_[r];
  if (run.items.capacity() > 4096) {
    run.items = {};  // a large solve's run: give the memory back
  } else {
    run.items.clear();
  }
  run.pos = 0;
  free_runs_.push_back(r);
}

// The earliest live completion (nullptr when none), dropping stale entries on the way.
const FlowNetwork::Completion* FlowNetwork::next_completion() {
  while (!run_heap_.empty()) {
    const uint32_t top = run_heap_.front();
    CompletionRun& run = runs_[top];
    const size_t start = run.pos;
    while (run.pos < run.items.size() && stale(run.items[run.pos]))
      ++run.pos;
    if (run.pos == start) return &run.items[run.pos];
    completion_entries_ -= run.pos - start;
    reseat_top_run();
  }
  return nullptr;
}

// Consumes the entry next_completion() returned.
void FlowNetwork::pop_completion() {
  ++runs_[run_heap_.front()].pos;
  --completion_entries_;
  reseat_top_run();
}

// The heap's top run has moved past entries: it goes back to its place in the heap, or is
// recycled when none are left.
void FlowNetwork::reseat_top_run() {
  const auto after = [this](uint32_t a, uint32_t b) { return run_after(a, b); };
  const uint32_t top = run_heap_.front();
  std::pop_heap(run_heap_.begin(), run_heap_.end(), after);
  if (runs_[top].pos < runs_[top].items.size()) {
    std::push_heap(run_heap_.begin(), run_heap_.end(), after);
  } else {
    run_heap_.pop_back();
    recycle_run(top);
  }
}

// Merges the live entries of every run into one.
void FlowNetwork::compact_completions() {
  batch_.clear();
  for (uint32_t r : run_heap_) {
    CompletionRun& run = runs_[r];
    for (size_t i = run.pos; i < run.items.size(); ++i) {
      if (!stale(run.items[i])) batch_.push_back(run.items[i]);
    }
    recycle_run(r);
  }
  run_heap_.clear();
  completion_entries_ = 0;
  if (batch_.empty()) return;
  std::sort(batch_.begin(), batch_.end());
  const uint32_t r = new_run();
  runs_[r].items.swap(batch_);
  push_run(r);
}

void FlowNetwork::finish(uint32_t id) {
  Flow& f = flows_[id];
  settle(f, sim_.now().ps());
  f.active = false;
  flow_mark_[id] = kDone;
  ++f.version;
  --active_count_;
  for (uint32_t s : paths_.route_segments(f.route)) {
    --seg_live_[s];
    mark_dirty(s);
  }
  deliver_batched(f.observer, f.tag, sim_.now() + paths_.route_latency(f.route));
}

void FlowNetwork::schedule_next_completion() {
  const Completion* c = next_completion();
  if (c == nullptr) return;
  const Time next = Time::from_ps(c->time_ps);
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
    for (const Completion* c = next_completion(); c != nullptr && c->time_ps <= now;
         c = next_completion()) {
      const uint32_t id = c->flow;
      pop_completion();
      finish(id);
    }
    open_deliveries_.clear();
    flush_moved();
    if (!dirty_segs_.empty() && !solve_pending_) solve();
    schedule_next_completion();
    return;
  }
  run_deliveries(sim, static_cast<uint32_t>(tag - kDeliveryBase));
}

size_t FlowNetwork::memory_bytes() const {
  size_t b = paths_.memory_bytes() + flows_.capacity() * sizeof(Flow) + flow_mark_.capacity() * 4 +
             deliveries_.capacity() * sizeof(DeliverySlot) + batch_.capacity() * sizeof(Completion);
  for (const CompletionRun& r : runs_)
    b += r.items.capacity() * sizeof(Completion) + sizeof(r);
  for (const DeliverySlot& d : deliveries_)
    b += d.more.capacity() * sizeof(Delivery);
  for (const auto& v : seg_flows_)
    b += v.capacity() * sizeof(uint32_t) + sizeof(v);
  for (const auto& v : link_segs_)
    b += v.capacity() * sizeof(SegUse) + sizeof(v);
  b += seg_live_.size() * (4 + 4 + 1 + 8 + 8 + 8);
  return b;
}

}  // namespace fleetsim
