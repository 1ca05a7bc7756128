// Training rows of a reference CSV: builds the training scenario a row describes (system from the
// hardware name, zoo model from the model name, parallel columns, precision, --default values)
// and predicts the row's metric with the study layer's training step.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "compute/compute_model.h"
#include "validate/metrics.h"
#include "validate/names.h"
#include "validate/validate.h"

namespace fleetsim {

struct TrainingContext {
  TrainingContext(const std::string& data_dir, const ValidateOptions& options);
  std::string data_dir;
  const ValidateOptions& options;
  ModelResolver models;
  std::map<std::string, std::shared_ptr<ComputeModel>> compute;  // by system
};

// What became of a row: modelled (v->predicted, v->system, v->config, v->breakdown filled),
// skipped (cannot be modelled; *why says why) or malformed (a cell is not what the column
// expects; *why says which cell and what was expected).
enum class RowOutcome { kModelled, kSkipped, kMalformed };

// `fields` maps column name to value; `metric` is the row's classified metric.
RowOutcome predict_training_row(const std::map<std::string, std::string>& fields,
                                const MetricSpec& metric, TrainingContext& ctx, ValidationRow* v,
                                std::string* why);

}  // namespace fleetsim
