// `fleetsim calibrate import-trace TRACE.json`: a PyTorch profiler (Kineto) trace turned into a
// calibration file (sim/trace), checked like a fleetsim-calibrate file, optionally added to a set.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cli/commands.h"
#include "compute/import.h"
#include "core/error.h"
#include "report/report.h"
#include "scenario/scenario.h"
#include "trace/trace_import.h"

namespace fleetsim {
namespace {

// The trace file's modification time as ISO 8601 UTC: the measurement's date when the trace
// carries none (the same file gives the same calibration file).
std::string file_date(const std::string& path) {
  std::error_code ec;
  const auto ft = std::filesystem::last_write_time(path, ec);
  if (ec) return "1970-01-01T00:00:00Z";
  const auto sys = std::chrono::time_point_cast<std::chrono::seconds>(
      ft - std::filesystem::file_time_type::clock::now() + std::chrono::system_clock::now());
  const std::time_t t = std::chrono::system_clock::to_time_t(sys);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int cmd_calibrate_import_trace(const ImportTraceCli& o) {
  TraceImport t = import_kineto_trace(o.file, o.gpu);
  const std::string date = o.date.empty() ? file_date(o.file) : o.date;
  const std::string csv = trace_calibration_csv(t, date);
  const FrameworkOptions fw = load_framework_defaults(default_data_dir());
  const auto x86 = fw.host_by_cpu.find("x86");
  const HostCosts host = x86 != fw.host_by_cpu.end() ? x86->second : HostCosts{};
  std::fputs(trace_import_summary(t, host.op.us(), host.launch.us()).c_str(), stdout);
  const bool any = std::any_of(t.groups.begin(), t.groups.end(),
                               [](const TraceKernelGroup& g) { return g.written; });
  if (!any)
    throw InputError(o.file, "/traceEvents",
                     "no kernel of a class the calibration-set format holds (GEMM, RMSNorm / "
                     "SwiGLU forward, device copy, NCCL) was matched: see the summary above");
  std::string out = o.out;
  if (out.empty()) out = std::filesystem::path(o.file).stem().string() + ".calibration.csv";
  write_file_atomic(out, csv);
  try {
    read_calibration_file(out);
  } catch (const InputError& e) {
    throw InternalError(std::string("calibrate import-trace wrote a file that does not check: ") +
                        e.what());
  }
  std::printf("calibration file: %s\n", out.c_str());
  if (o.set.empty()) {
    std::printf("add it to a set: fleetsim calibrate import %s --set NAME\n", out.c_str());
    return 0;
  }
  CalibrateImportCli imp;
  imp.file = out;
  imp.set = o.set;
  imp.sets_dir = o.sets_dir;
  return cmd_calibrate_import(imp);
}

}  // namespace fleetsim
