// Fuzz target: calibration files from fleetsim-calibrate or `calibrate import-trace`
// (sim/compute/import.cpp read_calibration_file: header lines, known kernels and dtypes, the
// FLOP and rate cross-checks, the GEMM grid), as `fleetsim calibrate import FILE` reads them.
#include <cstdint>

#include "compute/import.h"
#include "core/error.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::write_temp(data, size, ".csv");
  try {
    (void)fleetsim::read_calibration_file(path);
  } catch (const fleetsim::InputError&) {
  }
  return 0;
}
