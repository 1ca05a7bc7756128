// Fuzz target: reference CSV for `fleetsim validate` (sim/validate/: CSV columns, collective rows
// with sizes in the notes, training rows built into scenarios and simulated). Inputs that ask for
// more than 256 GPUs or 64 rows are skipped here so every execution stays fast: sizes beyond that
// are covered by the limits in validate and by tests/robustness.
#include <cstdint>
#include <cstdlib>

#include "core/csv.h"
#include "core/error.h"
#include "fuzz_common.h"
#include "validate/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const fleetsim::CsvTable t = fleetsim::parse_csv(fleetsim::fuzz::as_text(data, size), "fuzz");
    const int col = t.column("num_gpus");
    if (t.rows.size() > 64) return 0;
    for (const auto& r : t.rows) {
      if (col >= 0 && std::strtoll(r[col].c_str(), nullptr, 10) > 256) return 0;
      for (const char* c : {"gbs", "seq_len"}) {
        const int k = t.column(c);
        if (k >= 0 && std::strtoll(r[k].c_str(), nullptr, 10) > (c[0] == 'g' ? 1024 : 16384))
          return 0;
      }
    }
  } catch (const fleetsim::InputError&) {
    return 0;
  }
  const std::string path = fleetsim::fuzz::write_temp(data, size, ".csv");
  try {
    const fleetsim::ValidationReport rep =
        fleetsim::validate_reference(path, fleetsim::fuzz::data_dir());
    for (const auto& v : rep.rows) {
      if (!v.skipped && !(v.predicted == v.predicted)) __builtin_trap();  // NaN prediction
    }
  } catch (const fleetsim::InputError&) {
  }
  return 0;
}
