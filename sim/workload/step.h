// One training step, replayed through the event engine.
//
// Ranks are placed in Megatron-LM's default order (tp fastest, then cp, dp, pp): rank =
// tp_rank + tp·(cp_rank + cp·(dp_rank + dp·pp_rank)), and rank r runs on GPU r, so a TP group
// occupies consecutive GPUs of one node / NVLink domain while DP and PP cross the fabric.
// Expert groups use Megatron's expert order (etp fastest, then ep) inside a pipeline stage.
//
// The ranks of a TP group synchronise at every TP collective of every layer, so they advance in
// lockstep: the simulator runs one "TP unit" per TP group (every group of the cluster, so every
// rank is simulated), whose compute time is that of its slowest member (per-rank speed factors),
// and whose TP collectives take the time the flow-level network gives for all TP groups of a
// node running them at once. Between units, everything that couples ranks is an event: pipeline
// sends and receives (1F1B or interleaved schedule), EP all-to-all dispatch / combine and CP ring
// exchanges (blocking group synchronisations), DP gradient reduce-scatter / all-reduce per bucket
// overlapped with the backward pass, the parameter all-gather overlapped with the forward pass,
// FSDP gathers per layer, and the optimizer step.
//
// The collective durations come from sim/coll on the cluster topology: all groups of one parallel
// dimension that share nodes run the collective together on one flow network, so they contend
// for the same NICs and links as they do on the real machine (memoized per dimension, operation
// and size).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "compute/compute_model.h"
#include "topo/topology.h"
#include "workload/framework.h"
#include "workload/memory.h"
#include "workload/model.h"
#include "workload/parallel.h"
#include "workload/step_check.h"

namespace fleetsim {

// Per-rank MoE loads of one step (computed by sim/moe from a routing model), applied to each
// EP rank's expert GEMMs and to the EP all-to-alls. Empty = perfectly balanced routing.
struct MoeLoadTable {
  int moe_layers = 0;
  int micro_batches = 0;
  int ep = 0;
  // [layer][mb][ep rank]: token copies the rank's experts process / the balanced count.
  std::vector<float> rank_factor;
  // [layer][mb]: all-to-all time / balanced time (the busiest rank's copies / balanced).
  std::vector<float> a2a_factor;
  bool empty() const { return moe_layers == 0; }
  float rank(int layer, int mb, int q) const {
    return rank_factor[(static_cast<size_t>(layer) * micro_batches + mb) * ep + q];
  }
  float a2a(int layer, int mb) const {
    return a2a_factor[static_cast<size_t>(layer) * micro_batches + mb];
  }
};

struct StepInput {
  ModelSpec model;
  ParallelConfig par;
  FrameworkOptions fw;
  // Use one representative pipeline (DP replica 0) for the step time; only valid while nothing
  // breaks the symmetry between DP replicas. false = every TP unit simulated.
  bool symmetry = false;
  // Per-GPU compute speed factor (1 = nominal; 0.7 = a GPU at 70% clock). Empty = all 1.
  std::vector<double> gpu_speed;
  bool want_trace = false;
  uint64_t seed = 1;
  // Ranks placed per NVLink domain (0 = fill every domain). Rank r runs on GPU
  // (r / ranks_per_domain) · gpus_per_domain + r % ranks_per_domain, e.g. 64 of the 72 GPUs
  // of an NVL72 rack so that power-of-two groups stay inside one domain.
  int ranks_per_domain = 0;
  MoeLoadTable moe;  // imbalanced routing (sim/moe); empty = balanced
};

struct TimeBreakdown {  // per step, seconds, for the critical rank (see README "Metrics")
  double compute = 0;
  double tp_exposed = 0;
  double cp_exposed = 0;
  double ep_exposed = 0;
  double pp_exposed = 0;  // waiting for pipeline receives beyond the schedule's bubble
  double dp_exposed = 0;
  double bubble = 0;
  double optimizer = 0;
  double host_exposed = 0;  // GPU idle waiting for the host to launch work (or to sync)
};

struct LinkUse {
  std::string name;
  double utilization = 0;  // bytes carried / (capacity · step time)
  double saturation = 0;   // fraction of the step with more demand than capacity
  double bytes = 0;
};

struct TraceEvent {
  int rank = 0;        // first GPU of the TP unit
  int tp = 1;          // the unit's ranks: rank .. rank + tp − 1
  const char* stream;  // "compute", "dp", "pp", "host"
  std::string name;
  double start_us = 0;
  double dur_us = 0;
};

struct StepResult {
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;  // model FLOPs (README formula) / step time / GPUs
  double mfu = 0;                   // model TFLOP/s per GPU / peak dense TFLOP/s of the dtype
  double peak_tflops = 0;
  TimeBreakdown breakdown;
  MemoryBreakdown memory;
  std::string mode;  // "every rank" or "symmetry (one pipeline)"
  int units_simulated = 0;
  uint64_t events = 0;
  int micro_batches = 0;
  double bubble_fraction_closed_form = 0;
  // USE view
  double gpu_busy_fraction = 0;  // busy time / step time on the critical rank
  double gpu_busy_min = 0, gpu_busy_mean = 0, gpu_busy_max = 0;  // over every simulated GPU
  double gpu_useful_tflops = 0;                                  // model FLOPs / busy time
  double launch_bound_fraction = 0;                 // host_exposed / step time on the critical rank
  std::vector<LinkUse> top_links;                   // highest utilisation first
  std::map<std::string, double> collective_time_s;  // per dimension: total time per step
  std::vector<std::string> warnings;
  std::vector<std::string> compute_sources;
  std::vector<TraceEvent> trace;
};

// Closed-form pipeline bubble fraction of the schedule: (pp − 1) / (vp · m) relative to the
// ideal time (Narayanan et al. 2021, eq. for interleaved 1F1B).
double bubble_fraction(int pp, int vp, int micro_batches);

StepResult simulate_step(const StepInput& in, const Topology& topo, const CollectiveParams& cp,
                         const ComputeModel& compute);

}  // namespace fleetsim
