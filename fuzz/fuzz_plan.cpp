// Fuzz target: capacity-plan files (sim/scenario/plan_loader.cpp: strict JSON, keys, ranges, the
// price table, and every type × count × parallelism combination through the scenario loader).
// The search itself (step simulations and Monte Carlo) is not run.
#include <cstdint>

#include "core/error.h"
#include "fuzz_common.h"
#include "scenario/plan_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetsim::LoadOptions opt;
  opt.data_dir = fleetsim::fuzz::data_dir();
  try {
    const fleetsim::PlanSpec p =
        fleetsim::parse_plan(fleetsim::fuzz::as_text(data, size), "fuzz.json", opt);
    if (p.candidates.empty() || static_cast<int64_t>(p.candidates.size()) > opt.max_plan_candidates)
      __builtin_trap();
    for (const auto& c : p.candidates)
      if (!c.scenario && c.invalid.empty()) __builtin_trap();
  } catch (const fleetsim::InputError&) {
  }
  return 0;
}
