// The study layer behind plain functions for the Python module (api.h): the same loader, cluster,
// simulation and report writers as `fleetsim run / memory / validate / sweep`, so the JSON is the
// CLI's byte for byte (tests/python/test_fleetsim.py compares them).
#include "python/api.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "report/report.h"
#include "report/sweep_results.h"
#include "scenario/scenario.h"
#include "scenario/sweep_loader.h"
#include "study/cluster.h"
#include "study/collective.h"
#include "study/memory.h"
#include "study/run_level.h"
#include "study/training_step.h"
#include "sweep/sweep.h"
#include "validate/validate.h"

namespace fleetsim::python {
namespace {

LoadOptions load_options(const Limits& limits) {
  LoadOptions opt;
  opt.max_gpus = limits.max_gpus;
  opt.max_passes = limits.max_passes;
  opt.max_flows = limits.max_flows;
  opt.max_run_events = limits.max_run_events;
  opt.max_sim_memory = limits.max_sim_memory;
  opt.max_sweep_points = limits.max_points;
  return opt;
}

Scenario load(const Source& src, const LoadOptions& opt) {
  return src.is_path ? load_scenario(src.name, opt) : parse_scenario(src.text, src.name, opt);
}

// Minimal JSON string quoting for the few strings this file writes itself (sweep name, skip
// reasons, column pointers): quotes, backslashes and control characters escaped.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string run_report_json(const Source& scenario, std::optional<uint64_t> seed, int threads,
                            const Limits& limits) {
  const LoadOptions opt = load_options(limits);
  Scenario s = load(scenario, opt);
  if (seed) s.seed = *seed;
  const StudyCluster cluster = load_study_cluster(s, opt.data_dir);
  if (s.training) {
    const StepOutcome step = simulate_training_step(s, cluster, /*want_trace=*/false);
    std::optional<RunOutcome> run;
    if (s.run) run = simulate_run_level(s, cluster, step, threads, /*want_events=*/false);
    return training_report_json(s, cluster.topo, step.result, step.moe ? &*step.moe : nullptr,
                                run ? &*run : nullptr);
  }
  std::vector<CollectiveResult> results;
  for (const Bytes& size : s.collective->sizes)
    results.push_back(simulate_scenario_collective(s, cluster, size));
  return collective_report_json(s, cluster.topo, results);
}

std::string memory_report_json(const Source& scenario, const Limits& limits) {
  const Scenario s = load(scenario, load_options(limits));
  if (!s.training)
    throw InputError(scenario.name, "/workload/type", "memory needs a training workload");
  return memory_json(estimate_scenario_memory(s));
}

std::string validate_report_json(const std::string& csv_path, double kernel_efficiency) {
  ValidateOptions vo;
  vo.kernel_efficiency = kernel_efficiency;
  return validation_json(validate_reference(csv_path, default_data_dir(), vo));
}

std::string sweep_results_json(const Source& sweep, int threads, const Limits& limits) {
  const LoadOptions opt = load_options(limits);
  const SweepPlan plan =
      sweep.is_path ? load_sweep(sweep.name, opt) : parse_sweep(sweep.text, sweep.name, opt);
  const SweepManifest manifest = make_manifest(plan, ShardSpec{});
  const size_t n = plan.points.size();
  std::vector<SweepRow> rows(n);
  // Points are handed out one at a time; each thread has its own runner (and compute-model
  // cache); a row depends only on its point, so the order of completion changes nothing.
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;  // the first exception of any thread (a bug or out of memory)
  auto work = [&] {
    try {
      PointRunner runner(opt);
      for (size_t i = next++; i < n; i = next++)
        rows[i] = runner.run(plan, plan.points[i]);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mu);
      if (!failure) failure = std::current_exception();
      next = n;
    }
  };
  const int t = std::max(1, std::min<int>(threads, static_cast<int>(std::max<size_t>(n, 1))));
  std::vector<std::thread> pool;
  for (int i = 1; i < t; ++i)
    pool.emplace_back(work);
  work();
  for (auto& th : pool)
    th.join();
  if (failure) std::rethrow_exception(failure);

  const SweepResultsCodec codec;
  std::string out = "{\"name\":" + quote(plan.name) +
                    ",\"combinations\":" + std::to_string(plan.combinations) + ",\"columns\":[";
  for (size_t i = 0; i < manifest.columns.size(); ++i)
    out += (i ? "," : "") + quote(manifest.columns[i]);
  out += "],\"skipped\":[";
  for (size_t i = 0; i < plan.skipped.size(); ++i)
    out += std::string(i ? "," : "") + "{\"count\":" + std::to_string(plan.skipped[i].count) +
           ",\"reason\":" + quote(plan.skipped[i].reason) + "}";
  out += "],\"rows\":[";
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ",\n";
    out += codec.jsonl_row(rows[i], manifest.columns);
  }
  return out + "]}";
}

}  // namespace fleetsim::python
