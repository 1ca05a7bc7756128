// Flow-level network: every active flow gets a max-min fair share of each link on its route
// (progressive filling, Bertsekas & Gallager §6.5), where a flow sprayed over parallel links with
// weight w uses w × rate on each of them. Rates are re-solved incrementally, SimGrid-style: a
// change (flows starting or ending) re-solves only the connected component of flows that share
// links with the changed ones; flows elsewhere keep their rates and completion times, which wait
// in a heap.
//
// The solver works on classes, not hops. Routes are lists of interned segments (PathTable), and
// a started "flow" may be a bundle of `count` identical flows (same route, same size, same start:
// they get the same rate throughout and end together, so they are one class). Progressive
// filling keeps, per segment, the number of unfrozen flows through it; per link, the segments
// through it: when a link saturates every unfrozen flow of every segment on it freezes, and the
// capacity and weight updates are applied once per segment, not once per (flow, hop). Flows of
// unequal size stay separate and exact (an all-to-allv keeps every pair's bytes).
//
// Starts at the same simulated instant are coalesced into one solve. A flow's observer is told
// when its last byte arrives: transmission end plus the route's one-way latency; the flows a
// completion batch delivers at one instant share one event (in the order they finished, as
// separate events of consecutive sequence numbers would run). Completion times wait in sorted
// runs, one per solve (one per distinct time when a large solve gives few: a uniform
// all-to-all), merged by a heap of runs, so popping a million equal completions reads memory
// in order instead of sifting a million-entry heap.
// Complexity per solve: O(flows × segments per flow + segment hops + levels × links) over the
// component; a solve where every live segment is dirty (a collective's first) takes every
// active flow without walking, and a large component's flows are read in id order. Memory:
// ~60 bytes per flow bundle plus ~4 bytes per (flow, segment); segments are shared.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/simulator.h"
#include "net/path_table.h"
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

  // The network's route table: route ids passed to start_route() are ids in it.
  PathTable& paths() { return paths_; }

  // Starts a flow of `bytes` along `route` now; `observer->on_flow_done(sim, tag)` fires when
  // it has been delivered. Returns the flow id.
  uint32_t start(const Route& route, double bytes, FlowObserver* observer, uint64_t tag) {
    return start_route(paths_.add_route(route), bytes, 1, observer, tag);
  }
  // Starts `count` identical flows of `bytes` each along paths() route `route`; the observer is
  // told once, when all of them have been delivered (they progress in lockstep).
  uint32_t start_route(uint32_t route, double bytes, uint32_t count, FlowObserver* observer,
                       uint64_t tag);

  // Room for `flows` more flow bundles (a collective about to start them), without the
  // doubling's copies.
  void reserve(size_t flows);

  // Flow bundles still transmitting.
  size_t active_flows() const { return active_count_; }
  // Rate of each flow of bundle `flow`, bytes/s.
  double rate(uint32_t flow) const { return flows_[flow].rate; }
  // Bytes carried per link so far (weights applied), for utilisation reports.
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  double link_capacity(uint32_t link) const { return capacity_[link]; }
  // Time so far during which `link` had more demand than capacity: its capacity was fully
  // allocated (it is the bottleneck of at least one flow), the USE view's "saturation".
  Time saturated_time(uint32_t link) const;
  uint64_t solves() const { return solves_; }
  // Heap bytes held (flows, segment lists, route table, heap), for benchmarks.
  size_t memory_bytes() const;

  void on_event(Simulator& sim, uint64_t tag) override;

 private:
  struct Flow {
    double remaining = 0;  // bytes left per flow at last_update_ps
    double rate = 0;       // bytes/s per flow; −1 while unfrozen during a solve
    int64_t last_update_ps = 0;
    FlowObserver* observer = nullptr;
    uint64_t tag = 0;
    uint32_t route = 0;
    uint32_t count = 1;
    uint32_t version = 0;
    bool active = false;
  };
  struct Completion {
    int64_t time_ps;
    uint32_t flow;
    uint32_t version;
    bool operator<(const Completion& o) const {
      return time_ps < o.time_ps || (time_ps == o.time_ps && flow < o.flow);
    }
  };
  // Completions pushed by one solve, sorted by (time, flow) and read from `pos` on.
  struct CompletionRun {
    std::vector<Completion> items;
    size_t pos = 0;
  };
  // Deliveries to one observer of tags tag, tag + 1, …, tag + count − 1, in that order (a
  // collective's flows finishing in id order make one entry, not one each).
  struct Delivery {
    FlowObserver* observer;
    uint64_t tag;
    uint64_t count = 1;
  };
  // One delivery event: the flows of one completion batch delivered at the same instant.
  struct DeliverySlot {
    Delivery first;
    std::vector<Delivery> more;
  };
  struct SegUse {
    uint32_t seg;
    double weight;
  };

  void register_segments();
  void mark_dirty(uint32_t seg);
  void request_solve();
  void solve();
  void collect_component(uint32_t stamp);
  void fill(uint32_t stamp);
  void settle(Flow& f, int64_t now_ps);
  void flush_moved();
  void compact(uint32_t seg);
  void finish(uint32_t id);
  uint32_t deliver(FlowObserver* observer, uint64_t tag, Time at);
  void deliver_batched(FlowObserver* observer, uint64_t tag, Time at);
  void run_deliveries(Simulator& sim, uint32_t slot);
  bool stale(const Completion& c) const;
  void push_completions(int64_t now);
  void push_bucketed(uint32_t lo, uint32_t hi);
  uint32_t new_run();
  void push_run(uint32_t run);
  void recycle_run(uint32_t run);
  void reseat_top_run();
  bool run_after(uint32_t a, uint32_t b) const;
  const Completion* next_completion();
  void pop_completion();
  void compact_completions();
  void schedule_next_completion();
  void set_saturated(uint32_t link, bool saturated, int64_t now);

  Simulator& sim_;
  PathTable paths_;
  size_t registered_segs_ = 0;
  // Per link.
  std::vector<double> capacity_;
  std::vector<double> link_bytes_;
  std::vector<std::vector<SegUse>> link_segs_;
  std::vector<double> rem_cap_, weight_sum_;
  std::vector<uint32_t> link_stamp_;
  std::vector<int64_t> sat_since_;  // ps when the link became saturated, −1 if it is not
  std::vector<int64_t> sat_ps_;     // closed saturated intervals
  // Per segment.
  std::vector<std::vector<uint32_t>> seg_flows_;  // flow ids, finished ones removed lazily
  std::vector<uint32_t> seg_live_;                // entries of active flows
  std::vector<uint32_t> seg_stamp_;
  std::vector<uint8_t> seg_dirty_;
  std::vector<double> seg_w_;      // unfrozen flows through the segment during a solve
  std::vector<double> seg_delta_;  // flows frozen in the current filling level
  std::vector<double> seg_moved_;  // bytes moved since the last flush (× count)
  // Per flow.
  std::vector<Flow> flows_;
  // Per flow, apart from Flow so the component walk reads 4 bytes a flow: kDone when finished
  // (or never active), the stamp of the last solve whose component held it, 0 before any.
  std::vector<uint32_t> flow_mark_;
  static constexpr uint32_t kDone = 0xffffffffu;
  size_t active_count_ = 0;
  // Scratch, reused across solves.
  std::vector<uint32_t> dirty_segs_, comp_links_, comp_segs_, comp_flows_, bottlenecks_;
  std::vector<uint32_t> touched_, moved_segs_;
  bool solve_pending_ = false;
  EventId completion_event_;
  Time completion_at_ = Time::infinite();
  // Pending completions: sorted runs (one per solve, or one per finish time of a large solve),
  // merged through a min-heap of runs by their next entry; superseded entries are skipped.
  std::vector<CompletionRun> runs_;
  std::vector<uint32_t> free_runs_, run_heap_;
  size_t completion_entries_ = 0;  // entries in the runs not yet read, stale ones included
  std::vector<Completion> batch_;
  std::vector<int64_t> bucket_time_;
  std::vector<uint8_t> bucket_of_;
  uint32_t stamp_ = 0;
  uint64_t solves_ = 0;
  std::vector<DeliverySlot> deliveries_;
  std::vector<uint32_t> free_deliveries_;
  // While a completion batch finishes flows: delivery instant → slot of its delivery event.
  std::vector<std::pair<int64_t, uint32_t>> open_deliveries_;
};

}  // namespace fleetsim
