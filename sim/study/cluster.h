// What a study simulates on: the topology graph of a scenario's cluster, the calibration of its
// collectives and, for training workloads, the kernel-time model of its GPU (with the scenario's
// calibration set). One function builds it for every caller (run, sweep, plan, validate, the
// benchmarks), so they all simulate on the same thing.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "coll/collective.h"
#include "compute/compute_model.h"
#include "scenario/scenario.h"
#include "topo/topology.h"

namespace fleetsim {

struct StudyCluster {
  Topology topo;
  CollectiveParams collective;
  // Training workloads only (null for a collective scenario, which never needs kernel times).
  std::shared_ptr<const ComputeModel> compute;
};

// Compute models by GPU model and calibration set directory: loading one reads the kernel tables
// and fits curves, and the model depends only on that key (and the data directory, fixed per
// cache), so reusing it cannot change a result. Thread-safe.
class ComputeModelCache {
 public:
  std::shared_ptr<const ComputeModel> get(const GpuSpec& gpu, const std::string& data_dir,
                                          const std::string& calibration_set_dir);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const ComputeModel>> models_;
};

// The cluster of a loaded scenario: its topology (s.system, s.fabric, s.nodes), s.collective_params
// and, when s.training, the compute model of s.system.gpu with s.calibration_set_dir, from
// `cache` when one is given. data_dir: where calibration/ lives ("" = default_data_dir()).
// Throws InputError on malformed kernel tables or a calibration set without rows for the GPU.
StudyCluster load_study_cluster(const Scenario& s, const std::string& data_dir,
                                ComputeModelCache* cache = nullptr);

}  // namespace fleetsim
