// Building a scenario's StudyCluster (cluster.h).
#include "study/cluster.h"

namespace fleetsim {

std::shared_ptr<const ComputeModel> ComputeModelCache::get(const GpuSpec& gpu,
                                                           const std::string& data_dir,
                                                           const std::string& calibration_set_dir) {
  const std::string key = gpu.model + "|" + calibration_set_dir;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(key);
    if (it != models_.end()) return it->second;
  }
  // Loaded outside the lock (it takes a while); a second thread loading the same key at the
  // same time builds an identical model, and the first one stored wins.
  auto model =
      std::make_shared<const ComputeModel>(ComputeModel::load(gpu, data_dir, calibration_set_dir));
  const std::lock_guard<std::mutex> lock(mu_);
  return models_.emplace(key, std::move(model)).first->second;
}

StudyCluster load_study_cluster(const Scenario& s, const std::string& data_dir_in,
                                ComputeModelCache* cache) {
  const std::string data_dir = data_dir_in.empty() ? default_data_dir() : data_dir_in;
  StudyCluster c{Topology(s.system, s.fabric, s.nodes), s.collective_params, nullptr};
  if (s.training) {
    c.compute = cache != nullptr ? cache->get(s.system.gpu, data_dir, s.calibration_set_dir)
                                 : std::make_shared<const ComputeModel>(ComputeModel::load(
                                       s.system.gpu, data_dir, s.calibration_set_dir));
  }
  return c;
}

}  // namespace fleetsim
