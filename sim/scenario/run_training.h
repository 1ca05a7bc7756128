// A training scenario's run section end to end: the step times of every cluster state the run
// can reach (step simulator, memoized before the Monte Carlo), the job's shape, and the Monte
// Carlo. Used by `fleetsim run` and the run benchmark.
#pragma once

#include "compute/compute_model.h"
#include "run/run.h"
#include "scenario/scenario.h"
#include "scenario/training_run.h"
#include "topo/topology.h"

namespace fleetsim {

struct RunOutcome {
  JobShape job;
  StepTable steps;
  RunSummary summary;
};

// `step` is the scenario's healthy step (simulate_training). threads: 0 = every core.
RunOutcome simulate_run(const Scenario& s, const Topology& topo, const ComputeModel& compute,
                        const TrainingRun& step, int threads, bool want_events);

}  // namespace fleetsim
