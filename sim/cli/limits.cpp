// The work-limit options shared by run, sweep and plan (commands.h WorkLimits), what the
// command says when memory runs out anyway, and the progress run and plan draw on stderr.
#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"

namespace fleetsim {

void WorkLimits::apply(LoadOptions* opt) const {
  opt->max_passes = max_passes;
  opt->max_flows = max_flows;
  opt->max_run_events = max_run_events;
  if (max_sim_memory.empty()) return;
  std::string error;
  const auto b = parse_bytes(max_sim_memory, &error);  // main.cpp's check accepted it
  if (!b || b->count() < 1) throw InputError("--max-sim-memory", "", error);
  opt->max_sim_memory = b->count();
}

std::vector<std::string> WorkLimits::arguments() const {
  std::vector<std::string> args = {kMaxPassesFlag,    std::to_string(max_passes),
                                   kMaxFlowsFlag,     std::to_string(max_flows),
                                   kMaxRunEventsFlag, std::to_string(max_run_events)};
  if (!max_sim_memory.empty()) {
    args.push_back(kMaxSimMemoryFlag);
    args.push_back(max_sim_memory);
  }
  return args;
}

Progress command_progress(const std::string& mode, const std::string& label,
                          const std::string& unit) {
  ProgressMode m = ProgressMode::kAuto;
  parse_progress_mode(mode, &m);
  ProgressStyle style;
  style.label = label;
  style.unit = unit;
  style.otherwise = ProgressMode::kNone;
  style.delay_s = 2;
  return Progress(m, stderr, style);
}

const char* out_of_memory_message() {
  return "out of memory: the simulation needed more memory than the machine gave it. Its size "
         "is bounded by --max-gpus, --max-passes, --max-flows, --max-run-events and "
         "--max-sim-memory (the last is an estimate, so a raised limit or a smaller machine "
         "can still run out): lower the one you raised, or run with more memory";
}

}  // namespace fleetsim
