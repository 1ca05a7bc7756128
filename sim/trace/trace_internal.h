// Internal to sim/trace: the trace's events as plain structs (no JSON), shared by the reader
// (trace_import.cpp), the matcher (match.cpp) and the writers (write.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_import.h"

namespace fleetsim::trace_internal {

using Dims = std::vector<std::vector<double>>;

// NCCL arguments PyTorch records on record_param_comms ops and on NCCL kernels.
struct CommArgs {
  std::string name, dtype;
  double in_nelems = 0, out_nelems = 0, group = 0;
};

struct Span {
  std::string name, pid, tid, stream;
  double ts = 0, dur = 0;  // microseconds
  int64_t corr = -1;       // correlation id (launches, kernels)
  Dims dims;               // cpu ops: Input Dims
  std::vector<std::string> types;
  CommArgs comm;
  double bytes = 0;  // memcpy: bytes copied
  bool is_memcpy = false;
  std::vector<int> stack;  // launches: enclosing CPU ops (indices into ops), outermost first
  int launch = -1;         // kernels: index into launches
  double end() const { return ts + dur; }
};

struct Events {
  std::vector<Span> ops, launches, kernels;
  std::vector<Span> step_spans;  // ProfilerStep#N
  std::string device;
  int steps = 0;
  bool has_shapes = false;
};

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  });
  return s;
}
inline bool contains(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Sets each launch's enclosing op stack and each kernel's launch (by correlation id).
void link_launches(Events& ev);
// Groups the kernels into t->groups and t->unmatched.
void classify_kernels(const Events& ev, TraceImport* t);
TraceHostCost host_costs(const Events& ev);
// Per-stream times over [begin, end) (trace_import.h, TraceBreakdown), not yet divided by steps.
std::vector<TraceStreamTime> stream_times(const Events& ev, double begin, double end);

}  // namespace fleetsim::trace_internal
