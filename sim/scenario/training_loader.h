// The training workload section of a scenario (training_loader.cpp). Internal to sim/scenario.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace fleetsim {

namespace jsonr {
class Obj;
}

// Parses root["workload"] of type "training" on a cluster of cluster_gpus GPUs of `system`
// (framework defaults, model files and routing histograms from data_dir).
TrainingWorkload read_training(const jsonr::Obj& w, int cluster_gpus, const SystemSpec& system,
                               const std::string& data_dir);

// Keys of the training workload by JSON pointer (merged into scenario_keys()).
std::map<std::string, std::vector<std::string>> training_scenario_keys();

// "task" and "fine_tuning" of a training workload (task_loader.cpp), after the batch is read.
void read_task(const jsonr::Obj& w, ParallelConfig* par);
const std::vector<std::string>& fine_tuning_keys();

}  // namespace fleetsim
