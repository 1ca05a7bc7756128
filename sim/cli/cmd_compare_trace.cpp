// `fleetsim run --compare-trace TRACE.json`: fleetsim's step breakdown beside a PyTorch profiler
// trace's (sim/trace, trace_step_breakdown): compute, communication, host and idle time per
// stream of the trace, per profiler step, next to the critical rank's compute, exposed
// communication, bubble and optimizer time. fleetsim's host_exposed and the trace's host time
// are both the GPU waiting for launches.
#include <cstdio>

#include "cli/commands.h"
#include "trace/trace_import.h"

namespace fleetsim {

void print_trace_comparison(const StepResult& r, const std::string& trace_path) {
  const TraceBreakdown t = trace_step_breakdown(trace_path);
  const TimeBreakdown& b = r.breakdown;
  const double comm = b.tp_exposed + b.cp_exposed + b.ep_exposed + b.pp_exposed + b.dp_exposed;
  std::printf("\ncompared with %s (%s, %d profiler step%s, %.3f s per step):\n", t.file.c_str(),
              t.device.c_str(), t.steps, t.steps == 1 ? "" : "s", t.step_us * 1e-6);
  const size_t n = std::min<size_t>(t.streams.size(), 4);
  std::printf("  %-26s %12s", "seconds per step", "fleetsim");
  for (size_t i = 0; i < n; ++i)
    std::printf(" %14s", ("stream " + t.streams[i].stream).c_str());
  std::printf("\n");
  auto line = [&](const char* name, double fs, double TraceStreamTime::*field) {
    std::printf("  %-26s %12.4f", name, fs);
    for (size_t i = 0; i < n; ++i)
      std::printf(" %14.4f", t.streams[i].*field * 1e-6);
    std::printf("\n");
  };
  std::printf("  %-26s %12.4f", "step time", r.step_time_s);
  for (size_t i = 0; i < n; ++i)
    std::printf(" %14.4f", t.step_us * 1e-6);
  std::printf("\n");
  line("compute (+ optimizer)", b.compute + b.optimizer, &TraceStreamTime::compute_us);
  line("communication (exposed)", comm, &TraceStreamTime::comm_us);
  line("host (GPU waits launches)", b.host_exposed, &TraceStreamTime::host_us);
  line("idle (bubble, waits)", b.bubble, &TraceStreamTime::idle_us);
  std::printf(
      "  (fleetsim: critical rank, communication only where exposed, host = GPU idle waiting "
      "for launches; trace: kernel time per stream, NCCL kernels as communication)\n");
  if (t.streams.size() > n)
    std::printf("  (%zu more streams in the trace)\n", t.streams.size() - n);
}

}  // namespace fleetsim
