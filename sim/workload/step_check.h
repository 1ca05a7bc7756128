// Checks of a parallel configuration against the model and the cluster (step_check.cpp), used by
// the scenario loader, validate and the step simulator.
#pragma once

#include <string>

#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim {

// Validates the parallel configuration against the model and cluster; throws InputError with
// `file` and pointers under `ptr` ("/workload") on bad combinations.
void check_parallel_config(const ModelSpec& model, const ParallelConfig& par, int world_gpus,
                           int gpus_per_domain, const std::string& file, const std::string& ptr);
// The training task's settings (workload/task.h); called by check_parallel_config.
void check_task(const ParallelConfig& par, const std::string& file, const std::string& ptr);

}  // namespace fleetsim
