// fleetsim-calibrate: measures GEMM (cuBLASLt), memory-bound and NCCL collective timings on the
// local GPUs and writes them in the calibration table format (calibration/KERNELS.md). Timing
// method (every measurement): a spin kernel holds the stream while all runs are queued, then
// `warmup` untimed and `repeats` timed runs, each between its own pair of CUDA events, input
// buffers rotated over a set larger than L2; the median is reported. Every result is checked
// against a reference (relative error) before its time is kept.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace calib {

struct Options {
  int warmup = 5;
  int repeats = 30;
  bool quick = false;  // reduced grids (a few minutes on one GPU)
  bool collectives = true;
  std::string gpu_model;  // GpuSpec model written in the gpu column (H200, B200, ...)
  int device = 0;
};

// One output row (columns of calibration/KERNELS.md; 0 = empty cell).
struct Row {
  std::string kernel, dtype, impl;
  long long batch = 0, m = 0, n = 0, k = 0;
  double bytes = 0, flops = 0, time_us = 0;
  double gbps = -1;  // achieved_gbps; < 0: bytes / time_us
  std::string source_dtype, notes;
};

// Lines for the file header ("# skipped: ...", "# check: ...").
struct Log {
  std::vector<std::string> header;
};

[[noreturn]] void fail(const std::string& what);
inline void cuda_check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess)
    fail(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " +
         cudaGetErrorString(e));
}
#define CALIB_CUDA(x) ::calib::cuda_check((x), #x, __FILE__, __LINE__)

struct Timing {
  double median_us = 0, p10_us = 0, p90_us = 0;
};

// Holds `stream` busy for about `ms` milliseconds (so the runs queued after it start back to
// back, without host launch gaps).
void spin(cudaStream_t stream, double ms);

// Times launch(i) for i = 0..warmup+repeats-1 (i selects the rotated buffer set).
template <class Launch>
Timing time_runs(cudaStream_t stream, int warmup, int repeats, Launch&& launch) {
  std::vector<cudaEvent_t> ev(2 * static_cast<size_t>(repeats));
  for (auto& e : ev)
    CALIB_CUDA(cudaEventCreate(&e));
  spin(stream, 5.0);
  for (int i = 0; i < warmup; ++i)
    launch(i);
  for (int r = 0; r < repeats; ++r) {
    CALIB_CUDA(cudaEventRecord(ev[2 * r], stream));
    launch(warmup + r);
    CALIB_CUDA(cudaEventRecord(ev[2 * r + 1], stream));
  }
  CALIB_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    float ms = 0;
    CALIB_CUDA(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
    t.push_back(ms * 1e3);
  }
  for (auto& e : ev)
    CALIB_CUDA(cudaEventDestroy(e));
  std::sort(t.begin(), t.end());
  const size_t n = t.size();
  Timing out;
  out.median_us = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  out.p10_us = t[n / 10];
  out.p90_us = t[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
  return out;
}

// Number of rotated buffer sets so that together they exceed 3 x L2 (at least 2, at most 64).
inline int rotation_sets(double set_bytes, double l2_bytes) {
  const double n = 3.0 * l2_bytes / std::max(1.0, set_bytes) + 1.0;
  return static_cast<int>(std::clamp(n, 2.0, 64.0));
}

std::string fmt(const char* f, ...);

// Measurements. Each appends rows (and header lines: what was skipped and why).
void run_gemms(const Options& o, const cudaDeviceProp& p, std::vector<Row>* rows, Log* log);
void run_memory(const Options& o, const cudaDeviceProp& p, std::vector<Row>* rows, Log* log);
void run_collectives(const Options& o, std::vector<Row>* rows, Log* log);

}  // namespace calib
