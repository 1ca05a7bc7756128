// The instruction program of one pipeline stage, which the replay engine runs for every TP unit
// of the stage (all TP units of a stage run the same program; only their speed and MoE loads
// differ).
//
// A program is the stage's 1F1B / interleaved order (schedule.h) unrolled into instructions:
// each layer's compute segments and blocking EP / CP synchronisations (layer_costs.h), pipeline
// sends and receives, and the data-parallel stream's collectives (gradient reduce-scatter /
// all-reduce per bucket overlapped with the last micro-batch's backward, the distributed
// optimizer's parameter all-gather overlapped with the first forward, FSDP's per-layer gathers
// and reductions), then the optimizer step.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/time.h"
#include "workload/internal/comm_model.h"
#include "workload/layer_costs.h"
#include "workload/step.h"

namespace fleetsim::step_internal {

enum class Op : uint8_t {
  kCompute,    // a: compute time at speed 1, b: exposed TP time
  kSync,       // blocking group collective (EP / CP): dim, dur
  kRecv,       // wait for a pipeline receive: dir, chunk, mb
  kSend,       // asynchronous pipeline send: dir, chunk, mb, dur
  kLaunch,     // asynchronous DP-stream collective: dim, slot, dur
  kWait,       // wait for DP-stream collective `slot`
  kOptimizer,  // optimizer step
  kHostSync    // the host waits until the GPU reaches this point, then a: D2H round trip
};

struct Instr {
  Op op;
  Dim dim = Dim::kTp;
  uint8_t dir = 0;  // 0 forward activations, 1 backward gradients
  int32_t chunk = 0;
  int32_t mb = 0;
  int32_t slot = 0;
  int32_t moe = -1;   // MoE layer index: expert compute / EP all-to-all scaled by its load
  int32_t span = -1;  // kCompute: Stage::spans index of its host span D(s)
  Time a{};           // compute / duration
  Time b{};           // exposed TP
  Time h{};           // host time: a segment's launches (H), or the host call issuing the op
  Time d{};           // kCompute: host span D at scale 1 (Segment::span)
  const char* name = "";
};

struct Stage {
  std::vector<Instr> prog;
  std::vector<std::vector<HostLine>> spans;  // host spans of the segments the program runs
  int dp_slots = 0;                          // DP-stream collectives (slots) the program launches
};

// Collectives one TP unit of a stage issues per step: call → how many times.
using CollCounts = std::map<CollCall, double>;

// What every stage's program is built from.
struct ProgramInput {
  const ModelSpec& model;
  const ParallelConfig& par;
  const FrameworkOptions& fw;
  LayerCostModel& costs;
  CommModel& comm;
  const std::vector<int>& layers_per_vstage;
  const std::vector<int>& first_layer;  // first decoder layer of each virtual stage
  const std::vector<int>& moe_index;    // per layer: index among the MoE layers, −1 if dense
  int micro_batches;
};

// Index of each decoder layer among the MoE layers (−1 for dense layers); asserts that a
// non-empty load table `moe` matches the model, the micro-batches and ep.
std::vector<int> moe_layer_index(const ModelSpec& m, const MoeLoadTable& moe, int micro_batches,
                                 int ep);

// The program of pipeline stage `stage`; adds the collectives it issues to `counts`.
Stage build_stage_program(const ProgramInput& in, int stage, CollCounts* counts);

}  // namespace fleetsim::step_internal
