// Fuzz target: scenario files (sim/scenario/loader.cpp with json_reader.h: strict JSON, keys,
// types, ranges, topology and model references, parallel layout). An accepted training scenario
// also goes through the memory estimator, as `fleetsim memory` does.
#include <cstdint>

#include "core/error.h"
#include "fuzz_common.h"
#include "scenario/scenario.h"
#include "workload/memory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetsim::LoadOptions opt;
  opt.data_dir = fleetsim::fuzz::data_dir();
  try {
    const fleetsim::Scenario s =
        fleetsim::parse_scenario(fleetsim::fuzz::as_text(data, size), "fuzz.json", opt);
    if (s.training) {
      const auto m =
          fleetsim::estimate_memory(s.training->model, s.training->par, s.system.gpu.hbm.count());
      if (m.total < 0) __builtin_trap();
    }
  } catch (const fleetsim::InputError&) {
  }
  return 0;
}
