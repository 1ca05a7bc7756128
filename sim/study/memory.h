// Per-GPU memory of a training scenario without simulating a step (`fleetsim memory`): the
// memory estimator of sim/workload for its model, parallelism and GPU's HBM.
#pragma once

#include "scenario/scenario.h"
#include "workload/memory.h"
#include "workload/memory_advice.h"

namespace fleetsim {

// s.training must be set.
MemoryBreakdown estimate_scenario_memory(const Scenario& s);
// The single changes that make it fit (workload/memory_advice.h), cheapest first.
std::vector<MemoryFix> scenario_memory_fixes(const Scenario& s);

}  // namespace fleetsim
