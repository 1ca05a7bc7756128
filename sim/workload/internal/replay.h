// The replay engine of the step simulator: runs every simulated TP unit's stage program
// (program.h) as events on one Simulator.
//
// A unit executes instructions until one takes time or waits: compute and the optimizer step
// take their time at the unit's speed (the slowest GPU of the TP group) and MoE load; a pipeline
// receive waits for the matching send of the neighbouring stage; an EP / CP synchronisation
// waits for every unit of its group (a "component": units connected through groups of that
// dimension), then lasts the collective's time; DP-stream collectives start once every member
// has launched them and run one after another on the component's stream, and a wait blocks
// until its collective ends. Time spent is charged to the unit's breakdown (compute, exposed
// TP / CP / EP / PP / DP, bubble, optimizer, host).
//
// Beside its GPU stream each unit has a host thread (a clock `host`): the host issues a
// segment's kernels at their host costs and runs ahead of the GPU, so a segment that starts
// with the stream free at g and the host free at h ends at max(g + T, h + D) (Segment::span)
// and frees the host at h + H. An op the GPU stream runs (synchronisation, receive, optimizer)
// starts once the host has issued it; asynchronous launches (pipeline sends, DP-stream
// collectives) start once issued and reached; a host sync (kHostSync) makes the host wait for
// the GPU. GPU time spent waiting for the host is host_exposed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/simulator.h"
#include "workload/internal/placement.h"
#include "workload/internal/program.h"
#include "workload/step.h"

namespace fleetsim::step_internal {

class Engine final : public EventHandler {
 public:
  // What a unit is blocked on (Unit::blocked).
  enum Blocked : int { kRunning = 0, kOnRecv = 1, kOnSync = 2, kOnWait = 3 };

  struct Unit {
    size_t pc = 0;
    double speed = 1.0;
    Time block_start;
    int blocked = kRunning;
    int64_t host = 0;          // when the unit's host thread is free (ps)
    size_t issued = SIZE_MAX;  // pc of the GPU-stream op the host has issued
    // accounting (ps)
    int64_t t_compute = 0, t_tp = 0, t_cp = 0, t_ep = 0, t_pp = 0, t_bubble = 0, t_dp = 0,
            t_opt = 0, t_host = 0, end = 0;
    std::vector<int64_t> arrivals;  // [dir][chunk][mb] arrival time, -1 unknown
    std::vector<int64_t> slot_done;
  };

  struct Barrier {
    int arrived = 0;
    int64_t max_time = 0;
    std::vector<int> waiting;
  };

  Engine(const Geometry& G, std::vector<Stage>& stages, std::vector<int> units, int vp, int M,
         const std::vector<double>& speed, Time p2p_fwd, Time p2p_bwd, bool trace,
         const MoeLoadTable* moe);

  // Runs every unit from time zero to the end of its program; returns the events processed.
  uint64_t run(Simulator& sim);

  void on_event(Simulator& sim, uint64_t tag) override { advance(sim, static_cast<int>(tag)); }

  const std::vector<Unit>& units() const { return units_; }
  const std::vector<int>& unit_ids() const { return unit_list_; }
  std::vector<TraceEvent>& trace() { return trace_; }

 private:
  size_t arr_index(int dir, int chunk, int mb) const {
    return (static_cast<size_t>(dir) * vp_ + chunk) * M_ + mb;
  }

  // Components: units that take part in the same group of a dimension synchronise together.
  void build_components();

  void record(int u, const char* stream, const char* name, int64_t start, int64_t dur);

  int neighbour(int unit_id, int dir, int chunk, int* peer_chunk) const;

  // Unit u (index into units_) runs again at `at`: wake only schedules, resume also unblocks.
  void wake(Simulator& sim, int u, int64_t at);
  void resume(Simulator& sim, int u, int64_t at);
  void block(Unit& U, int kind, int64_t now);

  // Executes unit u's instructions from its pc until one takes time or blocks.
  void advance(Simulator& sim, int u);
  // One instruction at `now`; true when the unit goes on to its next instruction at once.
  bool execute(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_compute(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_optimizer(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_send(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_recv(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_sync(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_launch(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_wait(Simulator& sim, int u, const Instr& in, int64_t now);
  bool exec_host_sync(int u, const Instr& in, int64_t now);
  // An op the GPU stream runs starts once the host has issued it: false (and a wake-up when
  // the host gets there) while the GPU waits for the host.
  bool issue(Simulator& sim, int u, const Instr& in, int64_t now);
  void complete_launch(Simulator& sim, int d, int c, const Instr& in, int64_t start, int64_t end);

  // Charges a receive's wait: up to `transfer` as exposed PP time, the rest as bubble.
  void finish_recv(Unit& U, int64_t arrive, int64_t transfer);

  const std::vector<int>& members(int d, int c);

  // The MoE load of unit u (its TP ranks run in lockstep: the most loaded of their EP ranks).
  double moe_factor(int u, int layer, int mb) const;

  const Geometry& G_;
  std::vector<Stage>& stages_;
  int vp_, M_;
  Time p2p_[2];
  bool trace_on_;
  std::vector<int> unit_list_;
  std::vector<int> index_;
  std::vector<Unit> units_;
  std::vector<int> comp_[6];
  std::vector<int> comp_size_[6];
  std::vector<Barrier> barriers_[6];
  std::vector<int64_t> stream_free_[6];
  std::unordered_map<int, std::unordered_map<int, Barrier>> launches_[6];
  std::map<std::pair<int, int>, std::vector<int>> members_;
  std::vector<TraceEvent> trace_;
  const MoeLoadTable* moe_;
};

}  // namespace fleetsim::step_internal
