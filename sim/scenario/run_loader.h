// The "run" section of a scenario (failures, gray failures, health checks, checkpoints,
// recovery, spares, maintenance, reservation segments, Monte Carlo replicas) and the failure
// profiles under failures/ (JSON with a source per class).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fault/fault.h"
#include "run/run_spec.h"
#include "topo/system.h"
#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim {

namespace jsonr {
class Obj;
}

// A profile by name (failures/NAME.json under the data dir) or by path.
FailureProfile load_failure_profile(const std::string& name_or_path, const std::string& data_dir);
std::vector<std::string> known_failure_profiles(const std::string& data_dir);

// Parses root["run"] for a training job (model, parallelism and system give the checkpoint
// size, the per-GPU / per-node shares and the default copy bandwidths).
RunSpec read_run_section(const jsonr::Obj& run, const ModelSpec& model, const ParallelConfig& par,
                         const SystemSpec& system, const std::string& data_dir);

// Keys of the run section by JSON pointer (merged into scenario_keys()).
std::map<std::string, std::vector<std::string>> run_scenario_keys();

}  // namespace fleetsim
