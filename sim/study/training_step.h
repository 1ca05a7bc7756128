// One training step of a scenario: the step input built from its training workload, the MoE
// token routing (when the workload has a routing model and the model has experts) and, with
// imbalanced routing, the same step perfectly balanced for the slowdown. `fleetsim run`, sweeps,
// plans, validation and the benchmarks all simulate a step through simulate_training_step.
#pragma once

#include <cstdint>
#include <optional>

#include "moe/imbalance.h"
#include "scenario/scenario.h"
#include "study/cluster.h"
#include "workload/step.h"

namespace fleetsim {

// What the MoE routing did to the step.
struct MoeOutcome {
  RoutingSpec spec;
  MoeSummary summary;
  double balanced_step_s = 0;   // the same step with perfectly balanced routing
  double slowdown_pct = 0;      // (step − balanced) / balanced · 100
  double all_to_all_share = 0;  // EP exposed time / step time (critical rank)
  double eplb_extra_bytes = 0;  // per GPU: weights, gradients and sharded optimizer state of
                                // the redundant expert replicas
};

struct StepOutcome {
  // The step simulator's input (routed MoE loads included, want_trace as asked): the run level
  // varies only its GPU speeds from here.
  StepInput input;
  StepResult result;
  std::optional<MoeOutcome> moe;  // present when the tokens were routed
};

// The step input of a training workload (model, parallelism, framework options, symmetry,
// placement, seed); balanced MoE routing.
StepInput training_step_input(const TrainingWorkload& w, uint64_t seed, bool want_trace);

// Simulates one step of `w` on `cluster` (cluster.compute must be set). `seed` drives the
// routing and the step; collectives use cluster.collective.
StepOutcome simulate_training_step(const TrainingWorkload& w, uint64_t seed,
                                   const StudyCluster& cluster, bool want_trace);
// The scenario's training workload (s.training must be set) with s.seed.
StepOutcome simulate_training_step(const Scenario& s, const StudyCluster& cluster, bool want_trace);

}  // namespace fleetsim
