// The instruction program of one pipeline stage, which the replay engine runs for every TP unit
// of the stage.
#pragma once

#include <cstdint>
#include <vector>

#include "core/time.h"
#include "workload/layer_costs.h"

namespace fleetsim::step_internal {

// ---------------------------------------------------------------------------------------------
// Programs: the instruction stream of one pipeline stage (identical for every TP unit of it).

enum class Op : uint8_t {
  kCompute,   // a: compute time at speed 1, b: exposed TP time
  kSync,      // blocking group collective (EP / CP): dim, dur
  kRecv,      // wait for a pipeline receive: dir, chunk, mb
  kSend,      // asynchronous pipeline send: dir, chunk, mb, dur
  kLaunch,    // asynchronous DP-stream collective: dim, slot, dur
  kWait,      // wait for DP-stream collective `slot`
  kOptimizer  // optimizer step
};

struct Instr {
  Op op;
  Dim dim = Dim::kTp;
  uint8_t dir = 0;  // 0 forward activations, 1 backward gradients
  int32_t chunk = 0;
  int32_t mb = 0;
  int32_t slot = 0;
  int32_t moe = -1;  // MoE layer index: expert compute / EP all-to-all scaled by its load
  Time a;            // compute / duration
  Time b;            // exposed TP
  const char* name = "";
};

struct Stage {
  std::vector<Instr> prog;
  int dp_slots = 0;
};

}  // namespace fleetsim::step_internal
