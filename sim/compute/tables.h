// Reader for the calibration/kernels/*.csv tables (format: calibration/KERNELS.md).
// Internal to sim/compute.
#pragma once

#include <string>
#include <vector>

namespace fleetsim::compute_internal {

// One row of a kernel table; absent numeric cells read as 0.
struct KernelRow {
  std::string gpu, kernel, dtype, impl;
  double batch = 0, m = 0, n = 0, k = 0;
  double seq_q = 0, seq_kv = 0, heads = 0, kv_heads = 0, head_dim_qk = 0, head_dim_v = 0;
  bool causal = false;
  double window = 0, bytes = 0, flops = 0, time_us = 0, tflops = 0, gbps = 0;
  std::string source_url;
  int line = 0;
};

// Reads `path`: leading '#' comment lines, then a CSV header with at least the columns above.
// InputError names the file, the line and column, and what was expected.
std::vector<KernelRow> read_kernel_table(const std::string& path);

}  // namespace fleetsim::compute_internal
