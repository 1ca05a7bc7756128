#include "report/report.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace fleetsim {
namespace {
using ojson = nlohmann::ordered_json;

// Rounds to `digits` significant decimals so output does not depend on the last ulp.
double fixed(double v, int decimals) {
  const double k = std::pow(10.0, decimals);
  return std::round(v * k) / k;
}
}  // namespace

std::string collective_report_json(const Scenario& s, const Topology& topo,
                                   const std::vector<CollectiveResult>& results) {
  ojson j;
  j["fleetsim_report_version"] = 1;
  j["scenario"] = {{"name", s.name}, {"file", s.file}, {"seed", s.seed}};
  j["cluster"] = {{"system", s.system.name},
                  {"count", s.count},
                  {"unit", s.system.unit_name},
                  {"nodes", topo.nodes()},
                  {"gpus", topo.gpus()},
                  {"nvlink_domains", topo.domains()},
                  {"gpus_per_domain", topo.gpus_per_domain()},
                  {"fabric",
                   {{"tiers", s.fabric.tiers},
                    {"rail_optimized", s.fabric.rail_optimized},
                    {"oversubscription", s.fabric.oversubscription},
                    {"routing", to_string(s.fabric.routing)},
                    {"leaves", topo.leaves()},
                    {"planes", topo.planes()}}}};
  const CollectiveWorkload& w = *s.collective;
  j["workload"] = {{"type", "collective"},
                   {"operation", to_string(w.op)},
                   {"group_gpus", results.empty() ? 0 : results.front().ranks},
                   {"algorithm", to_string(w.algorithm)},
                   {"dtype", w.dtype}};
  j["calibration"] = {
      {"source", s.collective_params.source},
      {"eta_ring", s.collective_params.eta_ring},
      {"eta_nvls", s.collective_params.eta_nvls},
      {"eta_a2a", s.collective_params.eta_a2a},
      {"base_latency_us", fixed(s.collective_params.base_latency.us(), 4)},
      {"nvlink_step_latency_us", fixed(s.collective_params.nvlink_step_latency.us(), 4)},
      {"net_step_latency_us", fixed(s.collective_params.net_step_latency.us(), 4)}};
  ojson rows = ojson::array();
  for (const auto& r : results) {
    rows.push_back({{"size_bytes", r.size.count()},
                    {"count", r.size.count() / w.dtype_bytes},
                    {"algorithm", to_string(r.algorithm)},
                    {"time_us", fixed(r.time.us(), 3)},
                    {"bandwidth_time_us", fixed(r.bandwidth_time.us(), 3)},
                    {"algbw_gbps", fixed(r.algbw_gbps, 3)},
                    {"busbw_gbps", fixed(r.busbw_gbps, 3)},
                    {"flows", r.flows}});
  }
  j["results"] = rows;
  return j.dump(2) + "\n";
}

std::string validation_json(const ValidationReport& rep) {
  ojson j;
  ojson rows = ojson::array();
  for (const auto& v : rep.rows) {
    ojson r = {{"line", v.line},
               {"hardware", v.hardware},
               {"num_gpus", v.num_gpus},
               {"operation", v.model},
               {"metric", v.metric}};
    if (v.size.count() > 0) r["size_bytes"] = v.size.count();
    if (v.skipped) {
      r["skipped"] = true;
      r["reason"] = v.reason;
    } else {
      r["system"] = v.system;
      r["algorithm"] = v.algorithm;
      r["small_message"] = v.small;
      r["measured"] = v.measured;
      r["predicted"] = fixed(v.predicted, 3);
      r["error_pct"] = fixed(v.error_pct, 2);
    }
    rows.push_back(r);
  }
  j["reference"] = rep.reference;
  j["rows"] = rows;
  j["mape_pct"] = fixed(rep.mape_pct, 2);
  j["n_rows"] = rep.n_rows;
  j["mape_small_pct"] = fixed(rep.mape_small_pct, 2);
  j["n_small"] = rep.n_small;
  j["n_skipped"] = rep.n_skipped;
  return j.dump(2) + "\n";
}

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "", "cannot write file");
    out << content;
    out.flush();
    if (!out) throw InputError(path, "", "write failed");
  }
  fs::rename(tmp, p, ec);
  if (ec) throw InputError(path, "", "cannot rename temporary file: " + ec.message());
}

}  // namespace fleetsim
