// Training-throughput rows of a reference CSV (NVIDIA's performance summary columns): builds the
// training scenario a row describes and predicts tokens/s/GPU with the step simulator.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "compute/compute_model.h"
#include "validate/validate.h"

namespace fleetsim {

struct TrainingCache {
  std::map<std::string, std::shared_ptr<ComputeModel>> compute;
};

// Fills v->predicted, v->system and v->config, or returns false with the reason it cannot model
// the row in *why. `fields` maps column name to value.
bool predict_training_row(const std::map<std::string, std::string>& fields,
                          const std::string& data_dir, const ValidateOptions& options,
                          TrainingCache& cache, ValidationRow* v, std::string* why);

}  // namespace fleetsim
