// Memory of a training scenario (memory.h).
#include "study/memory.h"

#include "core/error.h"

namespace fleetsim {

namespace {

// The scenario's memory options with what the system's GPU decides (memory.h).
MemoryOptions options_on_gpu(const Scenario& s) {
  MemoryOptions o = s.training->fw.memory;
  o.non_tn_fp8_gemm = gpu_non_tn_fp8_gemm(s.system.gpu.model);
  return o;
}

}  // namespace

MemoryBreakdown estimate_scenario_memory(const Scenario& s) {
  FLEETSIM_ASSERT(s.training.has_value());
  return estimate_memory(s.training->model, s.training->par, s.system.gpu.hbm.count(),
                         options_on_gpu(s));
}

std::vector<MemoryFix> scenario_memory_fixes(const Scenario& s) {
  FLEETSIM_ASSERT(s.training.has_value());
  return memory_fixes(s.training->model, s.training->par, s.system.gpu.hbm.count(),
                      options_on_gpu(s));
}

}  // namespace fleetsim
