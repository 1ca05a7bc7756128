// Fuzz target: calibration kernel tables (sim/compute/tables.cpp, format calibration/KERNELS.md):
// comment lines, a CSV header with the required columns, numeric cells.
#include <cmath>
#include <cstdint>

#include "compute/tables.h"
#include "core/error.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::write_temp(data, size, ".csv");
  try {
    for (const auto& r : fleetsim::compute_internal::read_kernel_table(path)) {
      if (!(r.time_us > 0) || !std::isfinite(r.time_us)) __builtin_trap();
    }
  } catch (const fleetsim::InputError&) {
  }
  return 0;
}
