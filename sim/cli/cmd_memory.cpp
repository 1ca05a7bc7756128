// `fleetsim memory SCENARIO`: the per-GPU memory breakdown of a training scenario.
#include <cstdio>

#include "cli/commands.h"
#include "core/error.h"
#include "report/report.h"
#include "study/memory.h"

namespace fleetsim {

int cmd_memory(const std::string& path, int max_gpus, bool as_json) {
  LoadOptions opt;
  opt.max_gpus = max_gpus;
  opt.max_passes = work_limits.max_passes;
  const Scenario s = load_scenario(path, opt);
  if (!s.training) throw InputError(path, "/workload/type", "memory needs a training workload");
  const MemoryBreakdown m = estimate_scenario_memory(s);
  if (as_json) {
    std::fputs(memory_json(m).c_str(), stdout);
  } else {
    print_memory(m);
  }
  return 0;
}

}  // namespace fleetsim
