// Fuzz target: sweep files (sim/scenario/sweep_loader.cpp: axes by JSON pointer, grid / zip /
// random, filters, the base scenario by path or inline). The input is read as a file in
// scenarios/sweeps/, so relative bases resolve as the seeds' do. The point limit is lowered to
// 4,096 to keep each execution short (the limit itself is what refuses larger sweeps). An
// accepted sweep must have as many keys as points, each point's scenario must load again as
// `fleetsim sweep` runs it (an InputError there is the point's "invalid" row, not a finding),
// and the combinations must be at least the points.
#include <cstdint>
#include <string>

#include "core/error.h"
#include "fuzz_common.h"
#include "scenario/scenario.h"
#include "scenario/sweep_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetsim::LoadOptions opt;
  opt.data_dir = fleetsim::fuzz::data_dir();
  opt.max_sweep_points = 4096;
  const std::string file = fleetsim::fuzz::data_dir() + "/scenarios/sweeps/fuzz.json";
  fleetsim::SweepPlan plan;
  try {
    plan = fleetsim::parse_sweep(fleetsim::fuzz::as_text(data, size), file, opt);
  } catch (const fleetsim::InputError&) {
    return 0;
  }
  if (plan.combinations < static_cast<long long>(plan.points.size())) __builtin_trap();
  for (size_t i = 0; i < plan.points.size() && i < 4; ++i) {
    const fleetsim::SweepPoint& p = plan.points[i];
    if (p.key.size() != 16 || p.values_json.size() != plan.columns.size()) __builtin_trap();
    try {
      (void)fleetsim::parse_scenario(p.scenario_json,
                                     fleetsim::sweep_point_file(plan, static_cast<int>(i)), opt);
    } catch (const fleetsim::InputError&) {
    }
  }
  return 0;
}
