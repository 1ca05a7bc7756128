// Collective operations as NCCL runs them, decomposed into flows on the topology.
//
// Each algorithm (ring, double-binary tree, NVLS, NVLS-tree, direct all-to-all, point-to-point)
// becomes a set of concurrent flows, one per pipelined stream: in steady state a pipelined ring
// keeps every ring edge busy, so the flow on edge i→i+1 carries that edge's whole volume
// (e.g. 2(n−1)/n·S/C for a ring all-reduce on C channels). The flow-level network gives the
// bandwidth time T_bw including contention; the pipeline's per-step latencies are added with
// the optimal-pipelining closed form
//     t = α0 + (√T_bw + √(D_nv·α_nv + D_net·α_net))²,
// where D_nv / D_net count the algorithm's pipeline steps inside / across NVLink domains (NCCL's
// own tuner counts steps the same way: src/graph/tuning.cc). NVLink copy kernels reach only a
// fraction η of the link rate; η per algorithm, α0, α_nv and α_net come from
// calibration/collectives.json, fitted on kernel-level collective timings (fit_collectives.py).
// busbw uses the nccl-tests formulas (doc/PERFORMANCE.md of nccl-tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/simulator.h"
#include "net/flow_network.h"
#include "net/path_table.h"
#include "topo/topology.h"

namespace fleetsim {

enum class CollOp { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kSendRecv };
enum class Algorithm { kAuto, kRing, kTree, kNvls, kNvlsTree, kDirect };

const char* to_string(CollOp op);
const char* to_string(Algorithm a);
bool parse_coll_op(const std::string& s, CollOp* out);
bool parse_algorithm(const std::string& s, Algorithm* out);

// nccl-tests: busbw = algbw × factor(op, n).
double busbw_factor(CollOp op, int n);

// Calibrated parameters for one system (NVLink technology + NIC kind).
struct CollectiveParams {
  double eta_ring = 1.0;
  double eta_nvls = 1.0;
  double eta_a2a = 1.0;
  Time base_latency;
  Time nvlink_step_latency;
  Time net_step_latency;
  std::string source;  // where these numbers came from
};

// `count` identical flows of `bytes` each along route `route` of the plan's path table (flows
// with the same route and size are one class: the network moves them as one).
struct PlanFlow {
  uint32_t route = 0;
  uint32_t count = 1;
  double bytes = 0;
};

// The flows and pipeline depth of one collective under one algorithm.
struct CollectivePlan {
  CollOp op = CollOp::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  PathTable paths;
  std::vector<PlanFlow> flows;
  size_t flow_count = 0;  // individual flows, Σ count (what NCCL would run)
  int steps_nvlink = 0;
  int steps_net = 0;
  // Bytes over all flows.
  double total_bytes() const;
};

struct CollectiveResult {
  CollOp op = CollOp::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  Bytes size;
  int ranks = 0;
  Time time;            // total, latency included
  Time bandwidth_time;  // T_bw from the flow simulation
  size_t flows = 0;
  double algbw_gbps = 0;  // GB/s (1e9 bytes/s), as nccl-tests prints
  double busbw_gbps = 0;
};

// Algorithms that can run `op` on `ranks` in `topo`, in NCCL's preference order.
std::vector<Algorithm> candidate_algorithms(const Topology& topo, CollOp op,
                                            const std::vector<int>& ranks);

// Work of a collective for the limits, without a topology: the individual flows (what
// CollectivePlan::flow_count will be) plan_collective builds for `op` with `algorithm` over GPUs
// 0 … n−1 of a cluster of `system` (NVLink domains filled in GPU order), and, for kAuto, the
// sum over the candidates (every one is simulated, one after the other). Arithmetic only (a
// test checks it against plan_collective); 0 when no algorithm applies.
struct FlowEstimate {
  int64_t flows = 0;         // over every algorithm simulated
  int64_t largest_plan = 0;  // flows of the largest single plan (what is held at once)
};
FlowEstimate estimate_collective_flows(const SystemSpec& system, CollOp op, Algorithm algorithm,
                                       int n);
// Peak memory a plan of `flows` individual flows takes in the flow network (routes, classes,
// per-flow state), measured: about 270 bytes per flow of an all-to-all, where every flow is its
// own class (1,047,552 flows of the 1,024-GPU all-to-all: 263 MiB peak RSS, release build).
// Merged plans (rings, trees) take less; this bounds them.
constexpr int64_t kBytesPerPlanFlow = 270;

// Builds the flows of `op` over `ranks` (global GPU ids) with `algorithm` (not kAuto).
CollectivePlan plan_collective(const Topology& topo, const CollectiveParams& params, CollOp op,
                               Algorithm algorithm, Bytes size, const std::vector<int>& ranks,
                               uint64_t seed);

// Total time from the flow-simulated bandwidth time and the plan's pipeline depth.
Time pipelined_time(const CollectiveParams& params, const CollectivePlan& plan,
                    Time bandwidth_time);

// Runs one collective alone on an idle network. With Algorithm::kAuto every candidate is
// simulated and the fastest is kept, the way NCCL's tuner picks the algorithm with the lowest
// modelled time.
CollectiveResult simulate_collective(const Topology& topo, const CollectiveParams& params,
                                     CollOp op, Algorithm algorithm, Bytes size,
                                     const std::vector<int>& ranks, uint64_t seed);

// All-to-allv (NCCL's alltoallv / MoE token dispatch): `bytes[i][j]` is what ranks[i] sends to
// ranks[j] (bytes ≥ 0, ranks × ranks; the diagonal is a local copy and makes no flow). As
// NCCL's alltoall does with grouped ncclSend/ncclRecv pairs, every pair with data becomes one
// direct flow on the topology's route: through the NVSwitch inside an NVLink domain (inflated by
// 1/eta_a2a like the equal-block all-to-all), through the NICs and the fabric across domains.
// The flows run concurrently, so a rank's time is set by its busiest link (a hot receiver by
// its ingress); latency is the all-to-all's: one NVLink step, plus one network step when any
// flow crosses domains. With bytes[i][j] = S/n for all i, j this is exactly the all-to-all of
// S. The plan runs on a shared network through CollectiveRun like any other collective.
CollectivePlan plan_alltoallv(const Topology& topo, const CollectiveParams& params,
                              const std::vector<int>& ranks,
                              const std::vector<std::vector<double>>& bytes, uint64_t seed);

// Per-rank traffic of an all-to-allv matrix, self-blocks excluded. Imbalance = max / mean
// (1 when balanced, 0 when nothing moves).
struct AllToAllvStats {
  std::vector<double> send_bytes, recv_bytes;  // per position in `ranks`
  double total_bytes = 0;                      // sum over all off-diagonal entries
  double max_send = 0, mean_send = 0, max_recv = 0, mean_recv = 0;
  double send_imbalance = 0, recv_imbalance = 0;
};
AllToAllvStats alltoallv_stats(const std::vector<std::vector<double>>& bytes);

struct AllToAllvResult {
  // size = mean bytes per rank's send buffer, self-blocks included (S for the equal matrix),
  // so algbw and busbw read as nccl-tests' all-to-all.
  CollectiveResult result;
  AllToAllvStats stats;
};

// Runs one all-to-allv alone on an idle network.
AllToAllvResult simulate_alltoallv(const Topology& topo, const CollectiveParams& params,
                                   const std::vector<int>& ranks,
                                   const std::vector<std::vector<double>>& bytes, uint64_t seed);

// A collective started inside a larger simulation: launches its flows on a shared network and
// calls `done->on_event(sim, tag)` when the collective completes.
class CollectiveRun final : public FlowObserver, public EventHandler {
 public:
  CollectiveRun(const CollectiveParams& params, CollectivePlan plan);
  void start(Simulator& sim, FlowNetwork& net, EventHandler* done, uint64_t tag);
  Time started() const { return start_; }
  Time bandwidth_time() const { return bw_time_; }
  // The plan; its flows and routes are released once started (they live in the network then),
  // its counts and pipeline depth stay.
  const CollectivePlan& plan() const { return plan_; }
  void on_flow_done(Simulator& sim, uint64_t tag) override;
  void on_event(Simulator& sim, uint64_t tag) override;

 private:
  const CollectiveParams& params_;
  CollectivePlan plan_;
  EventHandler* done_ = nullptr;
  uint64_t done_tag_ = 0;
  size_t outstanding_ = 0;
  Time start_;
  Time bw_time_;
};

}  // namespace fleetsim
