// Fuzz target: model definitions (sim/scenario/model_loader.cpp). An accepted model must give
// finite, non-negative parameter counts and FLOPs (the closed forms of sim/workload/model.cpp).
#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "fuzz_common.h"
#include "scenario/model_loader.h"
#include "workload/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const fleetsim::ModelSpec m =
        fleetsim::parse_model_text(fleetsim::fuzz::as_text(data, size), "fuzz.json", "");
    if (fleetsim::total_params(m) <= 0 || fleetsim::active_params(m) <= 0) __builtin_trap();
    const double f = fleetsim::model_flops_per_token(m, 4096);
    if (!std::isfinite(f) || f <= 0) __builtin_trap();
  } catch (const fleetsim::InputError&) {
  }
  return 0;
}
