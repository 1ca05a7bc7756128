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

// Optional outputs of `run` beyond report.json.
struct RunOutputs {
  std::string trace_path;     // --trace: Chrome trace of the step
  std::string events_path;    // --events: run-level events of replica 0, JSON lines
  std::string timeline_path;  // --timeline: the same events as a Chrome trace
  bool html = false;          // --html: OUT/report.html
  int threads = 0;
};

// Work limits of run and memory (--max-passes, --max-trace-events); --max-gpus is passed along.
struct WorkLimits {
  int64_t max_passes = LoadOptions{}.max_passes;
  int64_t max_trace_events = 5'000'000;  // about 450 MB of Chrome-trace JSON
};
extern WorkLimits work_limits;

int cmd_run(const std::string& path, std::string out_dir, std::optional<uint64_t> seed,
            int max_gpus, const RunOutputs& outputs);
int cmd_memory(const std::string& path, int max_gpus, bool as_json);
int cmd_validate(const std::string& reference, bool as_json, const ValidateOptions& vo);
int cmd_topo(const std::string& system, int count, bool dot);
int cmd_calibrate_import(const std::string& file, std::string set, const std::string& sets_dir);

struct SweepCli {
  std::string file, out, shard = "0/1", progress = "auto", emit_slurm, partition, time_limit;
  int jobs = 1, shards = 4, max_gpus = 131072;
};
int cmd_sweep(const SweepCli& o, const char* argv0);
int cmd_merge(const std::string& out, const std::vector<std::string>& inputs);

int cmd_plan(const std::string& path, std::string out_dir, int threads);

}  // namespace fleetsim
