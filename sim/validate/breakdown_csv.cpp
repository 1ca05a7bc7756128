// The per-row CSV of `fleetsim validate --csv` (breakdown_csv.h).
#include "validate/breakdown_csv.h"

#include <cstdio>

#include "validate/csv_writer.h"

namespace fleetsim {
namespace {

std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string validation_breakdown_csv(const ValidationReport& rep) {
  std::string out = csv_line(
      {"line",          "hardware",        "num_gpus",     "model",        "family",
       "system",        "metric",          "unit",         "status",       "reason",
       "configuration", "defaults",        "measured",     "predicted",    "error_pct",
       "step_time_s",   "compute_s",       "tp_exposed_s", "cp_exposed_s", "ep_exposed_s",
       "pp_exposed_s",  "dp_exposed_s",    "bubble_s",     "optimizer_s",  "host_exposed_s",
       "memory_gib",    "memory_need_gib", "hbm_gib",      "memory_fits",  "layout_source",
       "notes"});
  for (const auto& v : rep.rows) {
    const std::string status = v.error ? "error" : v.skipped ? "skipped" : "compared";
    std::vector<std::string> f = {std::to_string(v.line),
                                  v.hardware,
                                  std::to_string(v.num_gpus),
                                  v.model,
                                  v.family,
                                  v.system,
                                  v.metric,
                                  v.unit,
                                  status,
                                  v.reason,
                                  v.config,
                                  v.defaults};
    if (v.skipped) {
      f.insert(f.end(), 19, "");
      f.back() = v.notes;
      out += csv_line(f);
      continue;
    }
    f.push_back(g(v.measured));
    f.push_back(g(v.predicted));
    f.push_back(g(v.error_pct));
    const RowBreakdown& b = v.breakdown;
    if (v.training && b.memory_checked) {
      for (double x : {b.step_time_s, b.compute_s, b.tp_exposed_s, b.cp_exposed_s, b.ep_exposed_s,
                       b.pp_exposed_s, b.dp_exposed_s, b.bubble_s, b.optimizer_s, b.host_exposed_s,
                       b.memory_gib, b.memory_need_gib, b.hbm_gib})
        f.push_back(g(x));
      f.push_back(b.memory_fits ? "yes" : b.layout_infeasible ? "layout_infeasible" : "no");
      f.push_back(v.layout_source);
    } else {
      f.insert(f.end(), 15, "");
    }
    f.push_back(v.notes);
    out += csv_line(f);
  }
  return out;
}

}  // namespace fleetsim
