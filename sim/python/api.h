// What the Python module (module.cpp) calls: the study layer behind plain C++ functions that take
// a scenario, sweep or CSV and return the JSON text the CLI writes for it (report.json, memory
// --json, validate --json, sweep results rows). No pybind11 here, so this file compiles like the
// rest of sim/ and the binding stays one small translation unit. Errors: InputError for bad input
// (the CLI's exit-2 cases), InternalError for bugs; nothing prints, nothing exits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fleetsim::python {

// A scenario or sweep given either as a file path or as JSON text (a Python dict dumped);
// `name` is the file name messages use ("<dict>" for text), and relative paths inside the
// document (a sweep's base scenario, a routing histogram) resolve from its folder.
struct Source {
  bool is_path = true;
  std::string name;  // the path, or the name used in messages for text
  std::string text;  // the JSON text when !is_path
};

// The CLI's work limits (--max-gpus, --max-passes, --max-flows, --max-run-events,
// --max-sim-memory in bytes); the defaults are LoadOptions'.
struct Limits {
  int max_gpus = 131072;
  int64_t max_passes = 20'000'000;
  int64_t max_flows = 8'388'608;
  int64_t max_run_events = 200'000'000;
  int64_t max_sim_memory = int64_t{8} << 30;
  int64_t max_points = 1'000'000;  // sweep points before filters (sweep --max-points)
};

// `fleetsim run`'s report.json, byte for byte: the training step (and the run-level Monte Carlo
// on `threads` threads, 0 = every core, when the scenario has a "run" section) or the collective
// sizes. seed overrides the scenario's like --seed.
std::string run_report_json(const Source& scenario, std::optional<uint64_t> seed, int threads,
                            const Limits& limits);

// `fleetsim memory --json` (training scenarios; no simulation).
std::string memory_report_json(const Source& scenario, const Limits& limits);

// `fleetsim validate --reference CSV --json`; kernel_efficiency < 0 keeps
// calibration/framework.json's value.
std::string validate_report_json(const std::string& csv_path, double kernel_efficiency);

// A sweep's points simulated on `threads` threads (>= 1), nothing written to disk: a JSON object
// {"name", "combinations", "columns": [axis pointers], "skipped": [{"count", "reason"}],
// "rows": [...]} whose rows are the lines of the CLI's results.jsonl in point order (same
// numbers for the same sweep, whatever the thread count).
std::string sweep_results_json(const Source& sweep, int threads, const Limits& limits);

}  // namespace fleetsim::python
