// `fleetsim memory SCENARIO`: the per-GPU memory breakdown of a training scenario.
#include <cstdio>

#include "cli/commands.h"
#include "core/error.h"
#include "report/report.h"
#include "study/memory.h"

namespace fleetsim {

int cmd_memory(const MemoryCli& o) {
  LoadOptions opt;
  opt.max_gpus = o.max_gpus;
  opt.max_passes = o.max_passes;
  const Scenario s = load_scenario(o.scenario, opt);
  if (!s.training)
    throw InputError(o.scenario, "/workload/type", "memory needs a training workload");
  const MemoryBreakdown m = estimate_scenario_memory(s);
  if (o.json) {
    std::fputs(memory_json(m).c_str(), stdout);
  } else {
    print_memory(m);
    if (!m.fits) {
      const std::vector<MemoryFix> fixes = scenario_memory_fixes(s);
      std::printf(fixes.empty() ? "no single change makes it fit\n"
                                : "fits with one of (cheapest first):\n");
      std::fputs(format_memory_fixes(fixes).c_str(), stdout);
    }
  }
  return 0;
}

}  // namespace fleetsim
