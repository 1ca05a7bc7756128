// One training scenario end to end: the step input from the scenario, the MoE routing (when the
// workload has one) and, with imbalanced routing, the same step perfectly balanced for the
// slowdown. Used by `fleetsim run` and sweeps, so both simulate the same thing.
#pragma once

#include <optional>

#include "compute/compute_model.h"
#include "moe/imbalance.h"
#include "scenario/scenario.h"
#include "topo/topology.h"
#include "workload/step.h"

namespace fleetsim {

struct MoeRun {
  RoutingSpec spec;
  MoeSummary summary;
  double balanced_step_s = 0;   // the same step with perfectly balanced routing
  double slowdown_pct = 0;      // (step − balanced) / balanced · 100
  double all_to_all_share = 0;  // EP exposed time / step time (critical rank)
  double eplb_extra_bytes = 0;  // per GPU: weights, gradients and sharded optimizer state of
                                // the redundant expert replicas
};

struct TrainingRun {
  StepResult result;
  std::optional<MoeRun> moe;
};

TrainingRun simulate_training(const Scenario& s, const Topology& topo, const ComputeModel& compute,
                              bool want_trace);

}  // namespace fleetsim
