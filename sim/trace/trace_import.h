// Calibration from a PyTorch profiler trace (`fleetsim calibrate import-trace`): reads a Kineto
// Chrome-trace JSON (traceEvents with cat kernel / cpu_op / cuda_runtime / gpu_memcpy, args with
// "Input Dims", "Input type", "correlation", "External id"), links every GPU kernel to the CPU op
// that launched it (correlation id → the cudaLaunchKernel span → the CPU ops enclosing it on that
// thread), sorts kernels into fleetsim's kernel classes, and writes the ones the calibration-set
// format holds (GEMM grids per dtype, RMSNorm / SwiGLU forward, device copies, NCCL collectives)
// as a calibration file (calibration/KERNELS.md format, checked by read_calibration_file).
// Everything else is summarised with the reason it was not written.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fleetsim {

// One kernel shape of a class, aggregated over the trace's occurrences.
struct TraceKernelGroup {
  std::string cls;    // gemm, grouped_gemm, attention_fwd/bwd, rms_norm_fwd, swiglu_fwd, copy_d2d,
                      // elementwise, norm_other, nccl_all_reduce, ...
  std::string dtype;  // fleetsim dtype (bf16, fp8, fp32, ...) or the trace's type when unknown
  std::string op;     // the launching CPU op (aten::mm, ...)
  double batch = 1, m = 0, n = 0, k = 0;  // GEMM shape; for memory kernels m × n elements
  double bytes = 0;  // memory-bound and collective kernels: bytes moved (fleetsim's convention)
  double group = 0;  // collectives: GPUs in the group
  std::vector<double> times_us;  // every occurrence, in trace order
  std::string kernel_name;       // the first occurrence's kernel name
  double median_us() const;
  bool written = false;  // in the calibration file
  std::string why_not;   // when not written
};

struct TraceHostCost {
  int ops = 0;                    // top-level CPU ops that launched kernels
  int launches = 0;               // cudaLaunchKernel (and cuLaunchKernel...) spans
  double launch_median_us = 0;    // duration of one launch call
  double host_per_kernel_us = 0;  // top-level CPU-op time / kernels they launched
  double gpu_gap_median_us = 0;   // idle time between consecutive kernels on the busiest
                                  // stream, when the next kernel was launched after the
                                  // previous one ended (the GPU waited for the host)
  int gaps = 0;
};

struct TraceImport {
  std::string file;
  std::string device;  // deviceProperties[0].name, or "unknown"
  std::string gpu;     // fleetsim GPU model (H100, H200, B200, GB200, ...)
  int steps = 0;       // ProfilerStep#N spans
  int kernels = 0;     // GPU kernel and memcpy events
  std::vector<TraceKernelGroup> groups;
  std::map<std::string, int> unmatched;  // reason → kernels
  TraceHostCost host;
};

// Where the GPU time of a traced step goes, per stream (`run --compare-trace`): within the
// window of the profiler steps (or of all kernels when there are none), divided by the number of
// steps: kernel time other than NCCL (compute), NCCL kernels (communication), gaps before a
// kernel launched only after the previous one ended (host: the GPU waited for the CPU), other gaps
// (idle: waiting on another stream, a dependency or the end of the step).
struct TraceStreamTime {
  std::string stream;  // "pid/stream"
  int kernels = 0;
  double compute_us = 0, comm_us = 0, host_us = 0, idle_us = 0;
};
struct TraceBreakdown {
  std::string file, device;
  int steps = 0;                         // profiler steps in the window (1 when the trace has none)
  double step_us = 0;                    // window / steps
  std::vector<TraceStreamTime> streams;  // busiest first
};
TraceBreakdown trace_step_breakdown(const std::string& path);

// Reads and matches `path`. gpu_override: the GPU model to write (else from the device name).
// InputError (exit 2) for a file that is not complete JSON (a truncated trace), has no
// traceEvents or no kernels, or carries no input shapes at all (profile with record_shapes=True).
TraceImport import_kineto_trace(const std::string& path, const std::string& gpu_override);

// The calibration file for `t` (header + rows; the written flags in `t` set). `date` goes in the
// "# date:" line (ISO 8601). The text passes read_calibration_file.
std::string trace_calibration_csv(TraceImport& t, const std::string& date);

// The human summary: what was matched and written, matched but not written and why, unmatched
// kernels by reason, and the host costs beside fleetsim's (op_us per eager op, launch_us per
// launch inside a module: calibration/host/host-costs.csv).
std::string trace_import_summary(const TraceImport& t, double op_us, double launch_us);

}  // namespace fleetsim
