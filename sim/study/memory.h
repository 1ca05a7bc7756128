// Per-GPU memory of a training scenario without simulating a step (`fleetsim memory`): the
// memory estimator of sim/workload for its model, parallelism and GPU's HBM.
#pragma once

#include "scenario/scenario.h"
#include "workload/memory.h"

namespace fleetsim {

// s.training must be set.
MemoryBreakdown estimate_scenario_memory(const Scenario& s);

}  // namespace fleetsim
