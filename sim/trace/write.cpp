// The calibration file and the summary of a trace import (trace_import.h). The file holds the
// classes the calibration-set format has rows for (calibration/KERNELS.md, checked by
// read_calibration_file): per dtype the largest full grid of GEMM shapes over batch × m × n × k
// the trace measured (the format needs a full grid: the model interpolates on it), RMSNorm and
// SwiGLU forward, device-to-device copies and NCCL collectives. Times are medians over the
// trace's occurrences of a shape.
#include <array>
#include <cstdio>
#include <map>
#include <set>

#include "trace/trace_internal.h"

namespace fleetsim {

using namespace trace_internal;

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string g(double v) {
  return fmt("%.15g", v);
}

// RFC 4180: in double quotes, inner quotes doubled.
std::string quote(const std::string& v) {
  std::string out = "\"";
  for (const char c : v) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

bool writable_gemm_dtype(const std::string& d) {
  return d == "bf16" || d == "fp8" || d == "fp32";
}

// Indices into `gs` of the largest full grid over (batch, m, n, k): axis values are dropped, the
// one covering the fewest shapes first (ties: the smaller value), until every combination of the
// values left is a measured shape.
std::vector<size_t> largest_grid(const std::vector<TraceKernelGroup>& groups,
                                 const std::vector<size_t>& gs) {
  auto key = [&](size_t i) {
    const auto& x = groups[i];
    return std::array<double, 4>{x.batch, x.m, x.n, x.k};
  };
  std::array<std::set<double>, 4> axes;
  for (size_t i : gs)
    for (int a = 0; a < 4; ++a)
      axes[a].insert(key(i)[a]);
  for (;;) {
    std::vector<size_t> in;
    for (size_t i : gs) {
      bool ok = true;
      for (int a = 0; a < 4; ++a)
        ok = ok && axes[a].count(key(i)[a]);
      if (ok) in.push_back(i);
    }
    const size_t full = axes[0].size() * axes[1].size() * axes[2].size() * axes[3].size();
    if (in.size() == full) return in;
    int best_axis = -1;
    double best_value = 0;
    size_t best_count = SIZE_MAX;
    for (int a = 0; a < 4; ++a) {
      if (axes[a].size() < 2) continue;
      for (double v : axes[a]) {
        size_t c = 0;
        for (size_t i : in)
          c += key(i)[a] == v;
        if (c < best_count) {
          best_count = c;
          best_axis = a;
          best_value = v;
        }
      }
    }
    if (best_axis < 0) return {};  // unreachable: one value per axis is a full grid of one
    axes[best_axis].erase(best_value);
  }
}

std::string row(const TraceImport& t, const TraceKernelGroup& x) {
  const double us = std::stod(fmt("%.3f", x.median_us()));
  const std::string times = std::to_string(x.times_us.size());
  std::string r = t.gpu + "," + x.cls + "," + x.dtype + ",";
  const bool gemm = x.cls == "gemm";
  const bool nccl = x.cls.rfind("nccl_", 0) == 0;
  r += std::string(gemm ? "torch" : nccl ? "nccl" : x.cls == "copy_d2d" ? "cuda" : "pytorch") + ",";
  r += (nccl ? g(x.group) : g(x.batch)) + ",";
  r += (x.m > 0 ? g(x.m) : "") + "," + (x.n > 0 ? g(x.n) : "") + "," + (gemm ? g(x.k) : "") +
       ",,,,,,,,,";
  const double e = x.dtype == "fp32" ? 4 : x.dtype == "fp8" ? 1 : 2;
  double bytes = x.bytes, flops = 0, tflops = 0, gbps = 0;
  if (gemm) {
    bytes = x.batch * (x.m * x.k + x.k * x.n + x.m * x.n) * e;
    flops = 2 * x.batch * x.m * x.n * x.k;
    tflops = flops / (us * 1e-6) * 1e-12;
  } else if (nccl) {
    const double n = x.group;
    const double factor = x.cls == "nccl_all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
    gbps = bytes / (us * 1e-6) * 1e-9 * factor;  // busbw, nccl-tests conventions
  } else {
    gbps = bytes / (us * 1e-6) * 1e-9;
  }
  r += g(bytes) + "," + (gemm ? g(flops) : "") + "," + fmt("%.3f", us) + "," +
       (gemm ? fmt("%.6g", tflops) : "") + "," + (gemm ? "" : fmt("%.6g", gbps)) + ",measured,";
  r += quote(t.device) + "," + x.dtype + "," + quote(t.file) + ",";
  r += quote("median of " + times + " in the trace; launched by " + x.op) + "\n";
  return r;
}

}  // namespace

std::string trace_calibration_csv(TraceImport& t, const std::string& date) {
  std::map<std::string, std::vector<size_t>> gemm_by_dtype;
  for (size_t i = 0; i < t.groups.size(); ++i) {
    TraceKernelGroup& x = t.groups[i];
    x.written = false;
    if (x.cls == "gemm") {
      if (!writable_gemm_dtype(x.dtype))
        x.why_not = "dtype " + x.dtype + " has no calibration rows";
      else if (x.batch > 1)
        x.why_not = "batched GEMM (the set's grids are batch 1)";
      else
        gemm_by_dtype[x.dtype].push_back(i);
    } else if (x.cls == "rms_norm_fwd" || x.cls == "swiglu_fwd" || x.cls == "copy_d2d" ||
               x.cls.rfind("nccl_", 0) == 0) {
      if (x.bytes > 0)
        x.written = true;
      else
        x.why_not = "no byte count";
    } else if (x.cls.rfind("attention", 0) == 0) {
      x.why_not =
          "attention: the calibration-set format has no attention rows (published cuDNN "
          "tables stay in use)";
    } else if (x.cls == "grouped_gemm") {
      x.why_not = "grouped GEMM: no calibration-set rows (published tables stay in use)";
    } else {
      x.why_not = x.cls + ": no calibration-set rows for this memory-bound class";
    }
  }
  for (auto& [dtype, gs] : gemm_by_dtype) {
    const std::vector<size_t> grid = largest_grid(t.groups, gs);
    for (size_t i : gs)
      t.groups[i].why_not = "outside the largest full " + dtype + " grid";
    for (size_t i : grid) {
      t.groups[i].written = true;
      t.groups[i].why_not.clear();
    }
  }
  std::string out = "# fleetsim kernel calibration table; format: calibration/KERNELS.md\n";
  out += "# generator: fleetsim calibrate import-trace (sim/trace)\n";
  out += "# device: " + t.device + "\n# gpu_model: " + t.gpu + "\n# date: " + date + "\n";
  out += "# source: " + t.file + " (PyTorch profiler / Kineto trace, " + std::to_string(t.steps) +
         " profiler steps, " + std::to_string(t.kernels) + " GPU events)\n";
  out +=
      "# method: kernel durations from the trace, summed per launching CPU op, median per "
      "shape; GEMM shapes and dtypes from the op's Input Dims / Input type\n";
  out +=
      "gpu,kernel,dtype,impl,batch,m,n,k,seq_q,seq_kv,heads,kv_heads,head_dim_qk,head_dim_v,"
      "causal,window,bytes,flops,time_us,achieved_tflops,achieved_gbps,time_from,source_gpu,"
      "source_dtype,source_url,notes\n";
  for (const auto& x : t.groups)
    if (x.written) out += row(t, x);
  return out;
}

std::string trace_import_summary(const TraceImport& t, double op_us, double launch_us) {
  std::string s = "trace " + t.file + ": " + t.device + " (" + t.gpu + "), " +
                  std::to_string(t.steps) + " profiler steps, " + std::to_string(t.kernels) +
                  " GPU events\n";
  int written = 0, kept = 0, unmatched = 0;
  for (const auto& x : t.groups)
    (x.written ? written : kept) += static_cast<int>(x.times_us.size());
  for (const auto& [why, n] : t.unmatched)
    unmatched += n;
  s += "matched and written: " + std::to_string(written) + " op instances\n";
  for (const auto& x : t.groups) {
    if (!x.written) continue;
    s += "  " + x.cls + " " + x.dtype + (x.m > 0 ? " m=" + g(x.m) : "") +
         (x.n > 0 ? " n=" + g(x.n) : "") + (x.cls == "gemm" ? " k=" + g(x.k) : "") +
         (x.bytes > 0 && x.cls != "gemm" ? " bytes=" + g(x.bytes) : "") + ": " +
         fmt("%.3f", x.median_us()) + " us median of " + std::to_string(x.times_us.size()) + "\n";
  }
  s += "matched, not written: " + std::to_string(kept) + " op instances\n";
  std::map<std::string, int> why;
  for (const auto& x : t.groups)
    if (!x.written) why[x.cls + ": " + x.why_not] += static_cast<int>(x.times_us.size());
  for (const auto& [w, n] : why)
    s += "  " + std::to_string(n) + " x " + w + "\n";
  s += "not matched: " + std::to_string(unmatched) + " kernels\n";
  for (const auto& [w, n] : t.unmatched)
    s += "  " + std::to_string(n) + " x " + w + "\n";
  const TraceHostCost& h = t.host;
  s += "host: " + std::to_string(h.ops) + " top-level CPU ops launched kernels, " +
       fmt("%.3f", h.host_per_kernel_us) + " us of CPU op time per kernel; " +
       std::to_string(h.launches) + " launch calls, median " + fmt("%.3f", h.launch_median_us) +
       " us\n";
  s += "host-bound GPU gaps on the busiest stream: " + std::to_string(h.gaps) + ", median " +
       fmt("%.3f", h.gpu_gap_median_us) +
       " us; fleetsim's x86 host costs (calibration/host/host-costs.csv) are " +
       fmt("%.3f", op_us) + " us per eager op and " + fmt("%.3f", launch_us) +
       " us per launch inside a module (a set has no host-cost field: compare them with the "
       "trace's)\n";
  return s;
}

}  // namespace fleetsim
