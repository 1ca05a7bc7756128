// Flow-level network: every active flow gets a max-min fair share of each link on its route
// (progressive filling, Bertsekas & Gallager §6.5), where a flow sprayed over parallel links with
// weight w uses w × rate on each of them. Rates are re-solved incrementally, SimGrid-style: a
// change (flows starting or ending) re-solves only the connected component of flows that share
// links with the changed ones; flows elsewhere keep their rates and completion times.
//
// Starts at the same simulated instant are coalesced into one solve. A flow's observer is told
// when its last byte arrives: transmission end plus the route's one-way latency.
// Complexity per solve: O(levels × links in component + incidences in component).
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "core/simulator.h"
#include "topo/topology.h"

namespace fleetsim {

class FlowObserver {
 public:
  virtual void on_flow_done(Simulator& sim, uint64_t tag) = 0;

 protected:
  ~FlowObserver() = default;
};

class FlowNetwork final : public EventHandler {
 public:
  FlowNetwork(Simulator& sim, const std::vector<Link>& links);

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

}  // namespace fleetsim
