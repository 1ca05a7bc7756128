// Memory of a training scenario (memory.h).
#include "study/memory.h"

#include "core/error.h"

namespace fleetsim {

MemoryBreakdown estimate_scenario_memory(const Scenario& s) {
  FLEETSIM_ASSERT(s.training.has_value());
  return estimate_memory(s.training->model, s.training->par, s.system.gpu.hbm.count(),
                         s.training->fw.memory);
}

std::vector<MemoryFix> scenario_memory_fixes(const Scenario& s) {
  FLEETSIM_ASSERT(s.training.has_value());
  return memory_fixes(s.training->model, s.training->par, s.system.gpu.hbm.count(),
                      s.training->fw.memory);
}

}  // namespace fleetsim
