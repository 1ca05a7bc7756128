// Fuzz target: PyTorch profiler (Kineto) traces (sim/trace/: `fleetsim calibrate import-trace`
// and `run --compare-trace`). An accepted trace must give finite, non-negative stream times, and
// the calibration file written for it (when a kernel group was written, as cmd_import_trace.cpp
// does) must pass read_calibration_file (sim/compute/import.cpp), as trace_import.h promises: an
// InputError there is a finding (the CLI's internal error, exit 1).
#include <cmath>
#include <cstdint>
#include <string>

#include "compute/import.h"
#include "core/error.h"
#include "fuzz_common.h"
#include "trace/trace_import.h"

namespace {

void check_breakdown(const std::string& path) {
  const fleetsim::TraceBreakdown b = fleetsim::trace_step_breakdown(path);
  if (!std::isfinite(b.step_us) || b.step_us < 0) __builtin_trap();
  for (const fleetsim::TraceStreamTime& s : b.streams)
    for (double v : {s.compute_us, s.comm_us, s.host_us, s.idle_us})
      if (!std::isfinite(v) || v < 0) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fleetsim::fuzz::write_temp(data, size, ".json");
  try {
    check_breakdown(path);
  } catch (const fleetsim::InputError&) {
  }
  fleetsim::TraceImport t;
  try {
    t = fleetsim::import_kineto_trace(path, "");
  } catch (const fleetsim::InputError&) {
    return 0;
  }
  const std::string csv = fleetsim::trace_calibration_csv(t, "2026-01-01");
  (void)fleetsim::trace_import_summary(t, 13.48, 2.5);
  // As cmd_import_trace.cpp: a file is written (and must check) only when a group was written.
  bool any = false;
  for (const fleetsim::TraceKernelGroup& g : t.groups)
    any = any || g.written;
  if (!any) return 0;
  const std::string out = fleetsim::fuzz::write_temp(csv.data(), csv.size(), "-calibration.csv");
  (void)fleetsim::read_calibration_file(out);  // throws (a finding) if the written file is bad
  return 0;
}
