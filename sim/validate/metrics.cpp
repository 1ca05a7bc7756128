// Metric names and units of measurement rows (metrics.h).
#include "validate/metrics.h"

#include <algorithm>
#include <cctype>

namespace fleetsim {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

}  // namespace

bool classify_metric(const std::string& name_in, const std::string& unit_in, double value,
                     MetricSpec* spec, std::string* why) {
  const std::string name = lower(name_in), unit = lower(unit_in);
  MetricSpec s;
  if (one_of(name, {"tokens_per_sec_per_gpu", "tokens_per_second_per_gpu",
                    "throughput_tokens_per_sec_per_gpu"})) {
    s.kind = MetricKind::kTokensPerGpu;
    s.unit = "tokens/s/GPU";
  } else if (one_of(name, {"throughput_tokens_per_sec_total", "tokens_per_sec_total",
                           "tokens_per_sec", "throughput_tokens_per_sec"})) {
    s.kind = MetricKind::kTokensTotal;
    s.unit = "tokens/s";
  } else if (one_of(name, {"step_time", "step_time_s", "train_step_time", "train_step_time_median",
                           "train_step_time_median_logged", "iteration_time", "time_per_step"})) {
    s.kind = MetricKind::kStepTime;
    if (unit.empty() || one_of(unit, {"s", "sec", "secs", "second", "seconds", "s/step"})) {
      s.unit = "s";
    } else if (one_of(unit, {"ms", "milliseconds", "ms/step"})) {
      s.unit = "ms";
      s.scale = 1e-3;
    } else {
      *why = "metric_unit '" + unit_in + "' of a step time: expected s or ms";
      return false;
    }
  } else if (name.rfind("model_tflops_per_sec_per_gpu", 0) == 0 ||
             one_of(name, {"model_tflops_per_gpu", "tflops_per_gpu", "tflops_per_gpu_bf16"})) {
    s.kind = MetricKind::kModelTflops;
    s.unit = "TFLOP/s/GPU";
  } else if (one_of(name, {"mfu", "mfu_claimed", "bf16_mfu", "mfu_pct"})) {
    s.kind = MetricKind::kMfu;
    // A percentage when the unit says so or the value cannot be a fraction.
    if (unit == "%" || unit == "percent" || name == "mfu_pct" || value > 1.0) {
      s.unit = "%";
      s.scale = 0.01;
    } else {
      s.unit = "fraction";
    }
  }
  *spec = s;
  return true;
}

int metric_priority(MetricKind kind) {
  switch (kind) {
    case MetricKind::kTokensPerGpu:
      return 0;
    case MetricKind::kTokensTotal:
      return 1;
    case MetricKind::kStepTime:
      return 2;
    case MetricKind::kModelTflops:
      return 3;
    case MetricKind::kMfu:
      return 4;
    case MetricKind::kNone:
      break;
  }
  return 5;
}

double predicted_metric(MetricKind kind, const PredictedStep& p) {
  const double tflops = p.tokens_per_s_per_gpu * p.flops_per_token / 1e12;
  switch (kind) {
    case MetricKind::kTokensPerGpu:
      return p.tokens_per_s_per_gpu;
    case MetricKind::kTokensTotal:
      return p.tokens_per_s_per_gpu * p.num_gpus;
    case MetricKind::kStepTime:
      return p.step_time_s;
    case MetricKind::kModelTflops:
      return tflops;
    case MetricKind::kMfu:
      return p.peak_tflops > 0 ? tflops / p.peak_tflops : 0;
    case MetricKind::kNone:
      break;
  }
  return 0;
}

const char* to_string(MetricKind kind) {
  switch (kind) {
    case MetricKind::kTokensPerGpu:
      return "tokens/s/GPU";
    case MetricKind::kTokensTotal:
      return "tokens/s total";
    case MetricKind::kStepTime:
      return "step time";
    case MetricKind::kModelTflops:
      return "model TFLOP/s/GPU";
    case MetricKind::kMfu:
      return "MFU";
    case MetricKind::kNone:
      break;
  }
  return "none";
}

}  // namespace fleetsim
