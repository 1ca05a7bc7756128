// The metrics a measurement row can give, and fleetsim's prediction in the row's own unit:
// tokens/s per GPU, tokens/s in total (= per GPU × GPUs), seconds per step, model TFLOP/s per
// GPU (tokens/s/GPU × model FLOPs per token, NVIDIA's counting: tests/workload checks it on
// NVIDIA's published pairs) and MFU (model TFLOP/s per GPU / peak dense TFLOP/s: the peak the
// row states, else the GPU's datasheet peak for the row's precision from topologies/).
#pragma once

#include <string>

namespace fleetsim {

enum class MetricKind { kNone, kTokensPerGpu, kTokensTotal, kStepTime, kModelTflops, kMfu };

struct MetricSpec {
  MetricKind kind = MetricKind::kNone;
  double scale = 1;  // measured value × scale = the canonical unit (s, fraction, tokens/s, TFLOP/s)
  std::string unit;  // the unit the row is compared in, as printed
};

// Classifies metric_name / metric_unit. kNone: not a training metric validate compares.
// Returns false with *why when the unit contradicts the metric (e.g. a step time in "GB").
bool classify_metric(const std::string& name, const std::string& unit, double value,
                     MetricSpec* spec, std::string* why);

// Priority when one run is published in several units (the lowest is compared, the others are
// counted once with it): tokens/s/GPU, total tokens/s, step time, TFLOP/s, MFU.
int metric_priority(MetricKind kind);

struct PredictedStep {
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double flops_per_token = 0;  // model FLOPs per token (NVIDIA's counting)
  double peak_tflops = 0;      // the peak MFU divides by
  int num_gpus = 0;
};

// The prediction in the row's canonical unit (see MetricSpec::scale).
double predicted_metric(MetricKind kind, const PredictedStep& p);

const char* to_string(MetricKind kind);

}  // namespace fleetsim
