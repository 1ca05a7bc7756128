// Result rows of a sweep: one per point, with the point's axis values and the main metrics of
// its report. The columns are stable and documented in README.md ("Sweeps"): point, key,
// status, one column per axis pointer, kSweepMetricColumns, error. Rows are written by the codec
// in report/sweep_results.h (the only JSON / CSV code); this header only holds the values.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

struct MetricValue {
  enum class Kind { kNone, kNumber, kInteger, kBool, kString };
  Kind kind = Kind::kNone;  // kNone: not applicable to this point (null in JSON, empty in CSV)
  double number = 0;
  int64_t integer = 0;
  bool boolean = false;
  std::string text;

  static MetricValue num(double v) {
    MetricValue m;
    m.kind = Kind::kNumber;
    m.number = v;
    return m;
  }
  static MetricValue integral(int64_t v) {
    MetricValue m;
    m.kind = Kind::kInteger;
    m.integer = v;
    return m;
  }
  static MetricValue flag(bool v) {
    MetricValue m;
    m.kind = Kind::kBool;
    m.boolean = v;
    return m;
  }
  static MetricValue str(std::string v) {
    MetricValue m;
    m.kind = Kind::kString;
    m.text = std::move(v);
    return m;
  }
  bool operator==(const MetricValue&) const = default;
};

// Metric columns in output order. Training points fill workload..events (and moe_slowdown_pct
// with MoE routing; ettr_mean..interruptions_mean when the scenario has a "run" section: the
// run summary of report.json), collective points workload, gpus and size_bytes..busbw_gbps
// (their largest message size).
inline constexpr std::string_view kSweepMetricColumns[] = {"workload",
                                                           "gpus",
                                                           "tp",
                                                           "pp",
                                                           "cp",
                                                           "dp",
                                                           "vp",
                                                           "ep",
                                                           "micro_batches",
                                                           "step_time_s",
                                                           "tokens_per_s_per_gpu",
                                                           "model_tflops_per_gpu",
                                                           "mfu",
                                                           "memory_total_gib",
                                                           "memory_fits",
                                                           "compute_s",
                                                           "tp_exposed_s",
                                                           "cp_exposed_s",
                                                           "ep_exposed_s",
                                                           "pp_exposed_s",
                                                           "dp_exposed_s",
                                                           "bubble_s",
                                                           "optimizer_s",
                                                           "host_exposed_s",
                                                           "events",
                                                           "size_bytes",
                                                           "algorithm",
                                                           "time_us",
                                                           "algbw_gbps",
                                                           "busbw_gbps",
                                                           "moe_slowdown_pct",
                                                           "ettr_mean",
                                                           "ettr_p10",
                                                           "ettr_p50",
                                                           "ettr_p90",
                                                           "goodput_tokens_per_s",
                                                           "time_to_budget_p50_s",
                                                           "time_to_budget_p90_s",
                                                           "interruptions_mean"};
inline constexpr size_t kNumSweepMetrics = std::size(kSweepMetricColumns);

struct SweepRow {
  int point = -1;
  std::string key;
  std::string status;  // "ok", "invalid" (the scenario loader refused it), "error" (internal)
  std::vector<std::string> values_json;  // axis values, one per column, JSON text
  std::array<MetricValue, kNumSweepMetrics> metrics;
  std::string error;  // the message for "invalid" and "error"; empty for "ok"
};

}  // namespace fleetsim
