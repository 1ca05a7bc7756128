// The subcommands of the fleetsim command, one file each (cmd_*.cpp); main.cpp holds their
// command-line options (CLI11) and calls them. Each returns the exit code (0); bad input throws
// InputError (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.h"
#include "study/run_level.h"
#include "study/training_step.h"
#include "validate/validate.h"
#include "workload/memory.h"

namespace fleetsim {

void print_memory(const MemoryBreakdown& m);
void print_moe(const MoeOutcome& m, int ep);
void print_run(const Scenario& s, const RunOutcome& o);
// `run --compare-trace`: the step breakdown beside a PyTorch profiler trace's
// (cmd_compare_trace.cpp).
void print_trace_comparison(const StepResult& r, const std::string& trace_path);

// Optional outputs of `run` beyond report.json.
struct RunOutputs {
  std::string trace_path;     // --trace: Chrome trace of the step
  std::string events_path;    // --events: run-level events of replica 0, JSON lines
  std::string timeline_path;  // --timeline: the same events as a Chrome trace
  bool html = false;          // --html: OUT/report.html
  std::string compare_trace;  // --compare-trace: a PyTorch profiler trace to print beside
  int threads = 0;
  std::string progress = "auto";  // --progress: auto (a bar on a terminal), bar, lines, none
};

// The work-limit flags' names: main.cpp defines the options under them, and
// WorkLimits::arguments writes them back for the commands fleetsim emits (Slurm array tasks).
inline constexpr const char* kMaxPassesFlag = "--max-passes";
inline constexpr const char* kMaxFlowsFlag = "--max-flows";
inline constexpr const char* kMaxRunEventsFlag = "--max-run-events";
inline constexpr const char* kMaxSimMemoryFlag = "--max-sim-memory";

// Work limits (--max-passes, --max-flows, --max-run-events, --max-sim-memory) of run, sweep and
// plan: refused up front with exit 2, the estimate and the flag (scenario.h LoadOptions).
struct WorkLimits {
  int64_t max_passes = LoadOptions{}.max_passes;
  int64_t max_flows = LoadOptions{}.max_flows;
  int64_t max_run_events = LoadOptions{}.max_run_events;
  std::string max_sim_memory;            // a size ("16GiB"); "" = LoadOptions' default
  int64_t max_trace_events = 5'000'000;  // run --trace: about 450 MB of Chrome-trace JSON
  // Copies the limits into `opt`; InputError when --max-sim-memory is not a size.
  void apply(LoadOptions* opt) const;
  // The limits as command-line arguments ("--max-passes", "20000000", ...), every one given
  // (--max-sim-memory only when set), so that a command run elsewhere refuses what this one did.
  std::vector<std::string> arguments() const;
};
// What main prints (exit 2) when std::bad_alloc reaches it: the limit flags to lower.
const char* out_of_memory_message();
// Progress on stderr for run, plan and validate (--progress; main.cpp checked the value): by
// default only on a terminal, and only once the work has taken 2 s.
Progress command_progress(const std::string& mode, const std::string& label,
                          const std::string& unit);

struct RunCli {
  std::string scenario;
  std::string out_dir;  // "" = out/<scenario name>
  std::optional<uint64_t> seed;
  int max_gpus = LoadOptions{}.max_gpus;
  WorkLimits limits;
  RunOutputs outputs;
};
int cmd_run(const RunCli& o);

struct MemoryCli {
  std::string scenario;
  int max_gpus = LoadOptions{}.max_gpus;
  int64_t max_passes = LoadOptions{}.max_passes;
  bool json = false;
};
int cmd_memory(const MemoryCli& o);

struct ValidateCli {
  std::string reference;
  bool json = false;
  std::string html, csv;              // --html FILE, --csv FILE
  std::string system;                 // --system NAME
  std::string model_map;              // --model-map FILE (CSV name,model)
  std::vector<std::string> defaults;  // --default KEY=VALUE
  std::string progress = "auto";      // --progress
  ValidateOptions options;
};
// Exit 2 when a row is malformed (after validating the others), else 0.
int cmd_validate(const ValidateCli& o);

struct ImportMlperfCli {
  std::string dir;
  std::string out;  // "" = stdout
};
int cmd_import_mlperf(const ImportMlperfCli& o);

struct TopoCli {
  std::string system;
  int count = 1;
  bool dot = false;
};
int cmd_topo(const TopoCli& o);

struct CalibrateImportCli {
  std::string file;
  std::string set;  // "" = <gpu>-<date of the measurement>
  std::string sets_dir;
};
int cmd_calibrate_import(const CalibrateImportCli& o);

struct ImportTraceCli {
  std::string file;           // Kineto trace JSON
  std::string out;            // "" = <trace stem>.calibration.csv
  std::string gpu;            // "" = from the trace's device name
  std::string date;           // "" = the trace file's modification time
  std::string set, sets_dir;  // --set: also import the file into that set
};
int cmd_calibrate_import_trace(const ImportTraceCli& o);

struct ModelImportCli {
  std::string config;  // a Hugging Face config.json
  std::string name;    // "" = from the file name
  std::string out;     // "" = stdout
};
int cmd_model_import(const ModelImportCli& o);

struct SweepCli {
  std::string file, out, shard = "0/1", progress = "auto", emit_slurm, partition, time_limit;
  int jobs = 1, shards = 4, max_gpus = LoadOptions{}.max_gpus;
  int64_t max_points = LoadOptions{}.max_sweep_points;
  WorkLimits limits;
};
// argv0: the command's own path, for the Slurm scripts when /proc/self/exe cannot be read.
int cmd_sweep(const SweepCli& o, const char* argv0);

struct MergeCli {
  std::string out;
  std::vector<std::string> inputs;
};
int cmd_merge(const MergeCli& o);

struct PlanCli {
  std::string file;
  std::string out_dir;  // "" = out/plan-<name>
  int threads = 0;      // 0 = every core
  int max_gpus = LoadOptions{}.max_gpus;
  int64_t max_candidates = LoadOptions{}.max_plan_candidates;
  std::string progress = "auto";  // --progress
  WorkLimits limits;
};
int cmd_plan(const PlanCli& o);

}  // namespace fleetsim
