// Kineto trace → fleetsim kernel classes → calibration file (trace_import.h). Matching rules:
// a kernel's launching op is found through its correlation id (kernel.args.correlation ==
// cuda_runtime.args.correlation), then the CPU ops whose span encloses the launch on the same
// (pid, tid), innermost first; shapes come from that op's "Input Dims" and dtypes from "Input
// type" (PyTorch's record_shapes=True). Kernels of one op instance are summed (split-K reductions
// and epilogues are part of the GEMM).
#include "trace/trace_import.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/csv.h"
#include "core/error.h"
#include "trace/trace_internal.h"

namespace fleetsim {

using json = nlohmann::json;
using namespace trace_internal;

double TraceKernelGroup::median_us() const {
  return median(times_us);
}

namespace {

// Traces larger than this are refused before they are read: nlohmann::json holds a parsed
// Kineto trace in about 10x its size, so 1 GiB of trace is about 10 GiB of memory.
constexpr size_t kMaxTraceBytes = size_t{1} << 30;

json parse_trace(const std::string& path) {
  const std::string text = read_text_file(path, kMaxTraceBytes);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    throw InputError(path, "byte " + std::to_string(e.byte),
                     truncated ? "the trace ends before its JSON is complete (a truncated file: "
                                 "was the profiler stopped before it finished writing?)"
                               : std::string("not valid JSON: ") + e.what());
  }
}

double num(const json& e, const char* key, double fallback = 0) {
  const auto it = e.find(key);
  if (it == e.end()) return fallback;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    try {
      return std::stod(it->get<std::string>());
    } catch (...) {
      return fallback;
    }
  }
  return fallback;
}

std::string str(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Dims read_dims(const json& args) {
  Dims d;
  for (const char* key : {"Input Dims", "Input dims"}) {
    const auto it = args.find(key);
    if (it == args.end() || !it->is_array()) continue;
    for (const auto& t : *it) {
      std::vector<double> shape;
      if (t.is_array())
        for (const auto& x : t)
          if (x.is_number()) shape.push_back(x.get<double>());
      d.push_back(shape);
    }
    break;
  }
  return d;
}

std::vector<std::string> read_types(const json& args) {
  std::vector<std::string> t;
  const auto it = args.find("Input type");
  if (it != args.end() && it->is_array())
    for (const auto& x : *it)
      t.push_back(x.is_string() ? x.get<std::string>() : "");
  return t;
}

CommArgs read_comm(const json& args) {
  CommArgs c;
  c.name = str(args, "Collective name");
  c.in_nelems = num(args, "In msg nelems");
  c.out_nelems = num(args, "Out msg nelems");
  c.group = num(args, "Group size");
  c.dtype = str(args, "dtype");
  return c;
}

// Events of the trace, split by category.
Events read_events(const json& doc, const std::string& path) {
  const json* list = &doc;
  if (doc.is_object()) {
    const auto it = doc.find("traceEvents");
    if (it == doc.end() || !it->is_array())
      throw InputError(path, "/traceEvents", "expected the array of trace events (Kineto JSON)");
    list = &*it;
  } else if (!doc.is_array()) {
    throw InputError(path, "", "expected a Chrome-trace object with traceEvents");
  }
  Events ev;
  static const json kEmpty = json::object();
  for (size_t i = 0; i < list->size(); ++i) {
    const json& e = (*list)[i];
    if (!e.is_object() || str(e, "ph") != "X") continue;
    const std::string cat = lower(str(e, "cat"));
    const auto ait = e.find("args");
    const json& args = ait != e.end() && ait->is_object() ? *ait : kEmpty;
    Span s;
    s.name = str(e, "name");
    s.ts = num(e, "ts");
    s.dur = num(e, "dur");
    s.pid = e.contains("pid") ? e["pid"].dump() : "";
    s.tid = e.contains("tid") ? e["tid"].dump() : "";
    s.corr = static_cast<int64_t>(num(args, "correlation", -1));
    if (s.dur < 0)
      throw InputError(path, "/traceEvents/" + std::to_string(i) + "/dur",
                       "expected a duration >= 0");
    if (s.name.rfind("ProfilerStep#", 0) == 0) {
      ++ev.steps;
      ev.step_spans.push_back(s);
    } else if (cat == "cpu_op" || cat == "operator" || cat == "user_annotation") {
      s.dims = read_dims(args);
      s.types = read_types(args);
      s.comm = read_comm(args);
      ev.has_shapes |= !s.dims.empty() && std::any_of(s.dims.begin(), s.dims.end(),
                                                      [](const auto& d) { return !d.empty(); });
      ev.ops.push_back(std::move(s));
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      ev.launches.push_back(std::move(s));
    } else if (cat == "kernel") {
      s.stream =
          str(args, "stream").empty() ? args.value("stream", json()).dump() : str(args, "stream");
      s.comm = read_comm(args);
      ev.kernels.push_back(std::move(s));
    } else if (cat == "gpu_memcpy") {
      s.bytes = num(args, "bytes");
      s.is_memcpy = true;
      ev.kernels.push_back(std::move(s));
    }
  }
  if (doc.is_object()) {
    const auto dp = doc.find("deviceProperties");
    if (dp != doc.end() && dp->is_array() && !dp->empty() && (*dp)[0].is_object())
      ev.device = str((*dp)[0], "name");
  }
  return ev;
}

std::string gpu_from_device(const std::string& device) {
  // Longest names first: "GB200" contains "B200", "GH200" contains "H200".
  for (const char* g : {"GB300", "GB200", "B300", "B200", "GH200", "H200", "H800", "H100", "A100"})
    if (device.find(g) != std::string::npos) return std::string(g) == "GH200" ? "H200" : g;
  return "";
}

}  // namespace

TraceImport import_kineto_trace(const std::string& path, const std::string& gpu_override) {
  const json doc = parse_trace(path);
  Events ev = read_events(doc, path);
  if (ev.kernels.empty())
    throw InputError(path, "/traceEvents",
                     "no GPU kernels (cat \"kernel\"): profile with "
                     "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]");
  if (!ev.has_shapes)
    throw InputError(path, "/traceEvents",
                     "no CPU op carries \"Input Dims\": kernels cannot be matched to shapes; "
                     "record the trace with torch.profiler.profile(record_shapes=True)");
  TraceImport t;
  t.file = path;
  t.device = ev.device.empty() ? "unknown" : ev.device;
  t.gpu = gpu_override.empty() ? gpu_from_device(ev.device) : gpu_override;
  if (t.gpu.empty())
    throw InputError(path, "/deviceProperties/0/name",
                     "cannot tell the GPU model from '" + t.device +
                         "': pass --gpu (H100, H200, B200, GB200, ...)");
  t.steps = ev.steps;
  t.kernels = static_cast<int>(ev.kernels.size());
  link_launches(ev);
  classify_kernels(ev, &t);
  t.host = host_costs(ev);
  return t;
}

TraceBreakdown trace_step_breakdown(const std::string& path) {
  const json doc = parse_trace(path);
  Events ev = read_events(doc, path);
  if (ev.kernels.empty())
    throw InputError(path, "/traceEvents", "no GPU kernels (cat \"kernel\") to compare with");
  link_launches(ev);
  TraceBreakdown b;
  b.file = path;
  b.device = ev.device.empty() ? "unknown" : ev.device;
  double begin = 0, end = 0;
  if (!ev.step_spans.empty()) {
    begin = ev.step_spans.front().ts;
    end = ev.step_spans.front().end();
    for (const Span& s : ev.step_spans) {
      begin = std::min(begin, s.ts);
      end = std::max(end, s.end());
    }
    b.steps = static_cast<int>(ev.step_spans.size());
  } else {
    begin = ev.kernels.front().ts;
    end = ev.kernels.front().end();
    for (const Span& k : ev.kernels) {
      begin = std::min(begin, k.ts);
      end = std::max(end, k.end());
    }
    b.steps = 1;
  }
  b.step_us = (end - begin) / b.steps;
  b.streams = stream_times(ev, begin, end);
  for (TraceStreamTime& st : b.streams) {
    st.compute_us /= b.steps;
    st.comm_us /= b.steps;
    st.host_us /= b.steps;
    st.idle_us /= b.steps;
  }
  return b;
}

}  // namespace fleetsim
