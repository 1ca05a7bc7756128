// Fuzz target: the RFC 4180 CSV reader (sim/core/csv.cpp) shared by reference measurements and
// calibration tables. Every row of a parsed table must have the header's width.
#include <cstdint>

#include "core/csv.h"
#include "core/error.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const fleetsim::CsvTable t =
        fleetsim::parse_csv(fleetsim::fuzz::as_text(data, size), "fuzz.csv");
    if (t.rows.size() != t.line_of_row.size()) __builtin_trap();
    for (const auto& r : t.rows)
      if (r.size() != t.header.size()) __builtin_trap();
  } catch (const fleetsim::InputError&) {
  }
  return 0;
}
