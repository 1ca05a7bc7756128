// Dispatch benchmark rows → the dispatch model (validate_dispatch.h).
#include "validate/validate_dispatch.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "coll/dispatch.h"
#include "core/error.h"
#include "scenario/scenario.h"
#include "topo/topology.h"
#include "validate/names.h"

namespace fleetsim {
namespace {

const std::vector<std::string>& dispatch_columns() {
  static const std::vector<std::string> k = {
      "source_url",  "hardware",      "library",         "mode",   "op",    "dtype",
      "ranks",       "gpus_per_node", "tokens_per_rank", "hidden", "top_k", "experts",
      "metric_name", "bw_def",        "metric_value",    "notes"};
  return k;
}

struct Cells {
  const CsvTable& t;
  size_t r;
  std::string get(const char* name) const {
    const int c = t.column(name);
    return c < 0 ? "" : t.rows[r][static_cast<size_t>(c)];
  }
  // A positive integer cell, or false with the reason.
  bool integer(const char* name, int* out, std::string* why) const {
    const std::string s = get(name);
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 1 || v > INT_MAX) {
      *why = std::string("column '") + name + "': expected a positive integer, got '" + s + "'";
      return false;
    }
    *out = static_cast<int>(v);
    return true;
  }
};

// KEY=value words of the notes cell.
std::map<std::string, std::string> knobs(const std::string& notes) {
  std::map<std::string, std::string> k;
  std::istringstream in(notes);
  std::string w;
  while (in >> w) {
    const auto eq = w.find('=');
    if (eq != std::string::npos && eq > 0) k[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return k;
}

// size-exception: one linear pass over the row's cells, each a malformed-cell error with the
// column and what was expected.
bool read_call(const Cells& c, DispatchCall* call, std::string* why) {
  const std::string lib = c.get("library"), mode = c.get("mode"), op = c.get("op"),
                    dtype = c.get("dtype");
  if (!parse_dispatch_library(lib, &call->library)) {
    *why =
        "column 'library': expected nccl, deepep, hybridep, uccl-ep, pplx or "
        "nvlink-one-sided, got '" +
        lib + "'";
    return false;
  }
  if (!parse_dispatch_mode(mode, &call->mode)) {
    *why = "column 'mode': expected normal or low_latency, got '" + mode + "'";
    return false;
  }
  if (op == "dispatch")
    call->op = DispatchOp::kDispatch;
  else if (op == "combine")
    call->op = DispatchOp::kCombine;
  else {
    *why = "column 'op': expected dispatch or combine, got '" + op + "'";
    return false;
  }
  if (dtype != "bf16" && dtype != "fp8") {
    *why = "column 'dtype': expected bf16 or fp8, got '" + dtype + "'";
    return false;
  }
  call->fp8 = dtype == "fp8";
  int tokens = 0;
  if (!c.integer("ranks", &call->ranks, why) || !c.integer("tokens_per_rank", &tokens, why) ||
      !c.integer("hidden", &call->hidden, why) || !c.integer("top_k", &call->top_k, why) ||
      !c.integer("experts", &call->experts, why))
    return false;
  call->tokens_per_rank = tokens;
  if (call->experts < call->top_k || call->experts % call->ranks != 0) {
    *why =
        "columns 'experts', 'top_k', 'ranks': expected top_k <= experts and experts a "
        "multiple of ranks";
    return false;
  }
  const auto k = knobs(c.get("notes"));
  auto it = k.find("api");
  if (it != k.end()) {
    if (it->second != "torch" && it->second != "kernel") {
      *why = "notes 'api': expected torch or kernel, got '" + it->second + "'";
      return false;
    }
    call->api = it->second == "torch" ? DispatchApi::kTorch : DispatchApi::kKernel;
  }
  if ((it = k.find("sms")) != k.end()) {
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > 1024) {
      *why = "notes 'sms': expected an SM count, got '" + it->second + "'";
      return false;
    }
    call->sms = static_cast<int>(v);
  }
  if ((it = k.find("routing")) != k.end()) {
    if (it->second != "uniform" && it->second != "perfect") {
      *why = "notes 'routing': expected uniform or perfect, got '" + it->second + "'";
      return false;
    }
    call->routing = it->second == "perfect" ? DispatchRouting::kPerfect : DispatchRouting::kUniform;
  }
  if ((it = k.find("nvlink")) != k.end()) call->nvlink = it->second != "false";
  return true;
}

// Bytes the row's bandwidth definition counts per rank.
bool bw_bytes(const std::string& def, const DispatchCall& call, const DispatchCounts& n,
              double* out) {
  if (def == "rank_copies")
    *out = n.recv_copies * n.copy_bytes;
  else if (def == "rdma_node_copies")
    *out = n.node_copies * n.copy_bytes;
  else if (def == "logical")
    *out = call.tokens_per_rank * std::min(call.ranks, call.top_k) * n.copy_bytes;
  else if (def == "pairs")
    *out = n.pairs * n.copy_bytes;
  else
    return false;
  return true;
}

struct Systems {
  std::map<std::string, SystemSpec> spec;
  std::map<std::string, CollectiveParams> params;
};

// size-exception: the row's placement checks (system, GPUs per node, NVLink domain), each a skip
// with its own reason, then one simulated call.
bool predict_row(const Cells& c, const DispatchCall& call, const std::string& data_dir,
                 Systems& sys, ValidationRow& v, std::string* why) {
  const SystemChoice sc = system_for_hardware(v.hardware, "");
  v.system = sc.system;
  if (v.system.empty()) {
    *why = sc.reason;
    return false;
  }
  if (!sys.spec.count(v.system)) {
    sys.spec[v.system] = load_system(v.system, data_dir);
    sys.params[v.system] = load_collective_params(sys.spec[v.system], data_dir);
  }
  const SystemSpec& s = sys.spec[v.system];
  int gpn = 0;
  if (!c.integer("gpus_per_node", &gpn, why)) return false;
  if (gpn != s.node.gpus) {
    *why = "gpus_per_node " + std::to_string(gpn) + " is not the " + std::to_string(s.node.gpus) +
           " GPUs per node of " + v.system;
    return false;
  }
  const int domain_nodes = std::max(1, s.scale_up.domain_nodes);
  const int nodes_needed = (call.ranks + gpn - 1) / gpn;
  const int nodes = (nodes_needed + domain_nodes - 1) / domain_nodes * domain_nodes;
  const Topology topo(s, s.fabric, nodes);
  std::vector<int> gpus(static_cast<size_t>(call.ranks));
  for (int i = 0; i < call.ranks; ++i)
    gpus[static_cast<size_t>(i)] = i;
  const DispatchResult r = simulate_dispatch(topo, sys.params[v.system], call, gpus, 1);
  const double t_us = r.time.us();
  if (!(t_us > 0)) {
    *why = "the call moves nothing";
    return false;
  }
  if (v.metric == "time_us") {
    v.predicted = t_us;
    v.unit = "us";
    return true;
  }
  double bytes = 0;
  if (!bw_bytes(v.algorithm, call, r.counts, &bytes)) {
    *why = "column 'bw_def': expected rank_copies, rdma_node_copies, logical or pairs, got '" +
           v.algorithm + "'";
    return false;
  }
  v.predicted = bytes / (t_us * 1e-6) * 1e-9;
  v.unit = "GB/s";
  return true;
}

}  // namespace

bool is_dispatch_table(const CsvTable& t) {
  return t.column("library") >= 0;
}

// size-exception: the row loop (cells, malformed cells, skips, the compared row) and the summary
// groups, read top to bottom like validate_reference's.
ValidationReport validate_dispatch_table(const CsvTable& t, const std::string& csv_path,
                                         const std::string& data_dir,
                                         const ValidateOptions& options) {
  for (const auto& need : dispatch_columns()) {
    if (t.column(need) < 0) throw InputError(csv_path, "line 1", "missing column '" + need + "'");
  }
  for (const auto& h : t.header) {
    const auto& k = dispatch_columns();
    if (std::find(k.begin(), k.end(), h) == k.end()) {
      const std::string near = closest_match(h, k);
      throw InputError(csv_path, "line 1",
                       "unknown column '" + h + "'" +
                           (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                           "; expected the dispatch rows of docs/validation.md");
    }
  }
  ValidationReport rep;
  rep.reference = csv_path;
  rep.dispatch = true;
  Systems systems;
  std::map<std::string, std::pair<double, int>> sums;
  double total = 0;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const Cells c{t, r};
    ValidationRow v;
    v.line = t.line_of_row[r];
    v.hardware = c.get("hardware");
    v.family = c.get("library");
    v.model = c.get("library") + " " + c.get("mode") + " " + c.get("op") + " " + c.get("dtype");
    v.metric = c.get("metric_name");
    v.algorithm = c.get("bw_def");
    v.notes = c.get("notes");
    std::string why;
    DispatchCall call;
    const std::string value = c.get("metric_value");
    char* end = nullptr;
    v.measured = std::strtod(value.c_str(), &end);
    bool bad = !read_call(c, &call, &why);
    if (!bad && (value.empty() || *end != '\0' || !std::isfinite(v.measured) || v.measured <= 0)) {
      why = "column 'metric_value': expected a positive number, got '" + value + "'";
      bad = true;
    }
    if (!bad && v.metric != "time_us" && v.metric != "bandwidth_gbps") {
      why = "column 'metric_name': expected time_us or bandwidth_gbps, got '" + v.metric + "'";
      bad = true;
    }
    double unused = 0;
    if (!bad && v.metric == "bandwidth_gbps" &&
        !bw_bytes(v.algorithm, call, DispatchCounts{}, &unused)) {
      why = "column 'bw_def': expected rank_copies, rdma_node_copies, logical or pairs, got '" +
            v.algorithm + "'";
      bad = true;
    }
    if (bad) {
      v.skipped = v.error = true;
      v.reason = why;
      ++rep.n_errors;
      rep.rows.push_back(v);
      continue;
    }
    v.num_gpus = call.ranks;
    v.config = "EP" + std::to_string(call.ranks) + " " +
               std::to_string(static_cast<long long>(call.tokens_per_rank)) + " tok";
    if (call.ranks > options.max_gpus || !predict_row(c, call, data_dir, systems, v, &why)) {
      v.skipped = true;
      v.reason = why.empty() ? "ranks above --max-gpus" : why;
      ++rep.n_skipped;
      rep.rows.push_back(v);
      continue;
    }
    v.error_pct = (v.predicted - v.measured) / v.measured * 100.0;
    const bool efa = systems.spec[v.system].nics.kind == NicKind::kEfa;
    auto& [sum, n] = sums[v.family + " " + v.metric + (efa ? " EFA" : "")];
    sum += std::fabs(v.error_pct);
    ++n;
    total += std::fabs(v.error_pct);
    ++rep.n_rows;
    rep.max_abs_error_pct = std::max(rep.max_abs_error_pct, std::fabs(v.error_pct));
    rep.rows.push_back(v);
  }
  for (auto& [k, e] : sums)
    rep.mape_by_group[k] = {e.first / e.second, e.second};
  rep.mape_pct = rep.n_rows ? total / rep.n_rows : 0.0;
  return rep;
}

std::string dispatch_report_text(const ValidationReport& rep) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-6s %-34s %-32s %-14s %-16s %10s %10s %8s\n", "line", "hardware",
                "call", "config", "metric", "measured", "predicted", "error%");
  out += buf;
  for (const auto& v : rep.rows) {
    if (v.skipped) continue;
    const std::string metric = v.metric == "time_us" ? "time_us" : "GB/s " + v.algorithm;
    std::snprintf(buf, sizeof buf,
                  "%-6d %-34.34s %-32.32s %-14.14s %-16.16s %10.4g %10.4g %+8.1f\n", v.line,
                  v.hardware.c_str(), v.model.c_str(), v.config.c_str(), metric.c_str(), v.measured,
                  v.predicted, v.error_pct);
    out += buf;
  }
  out += "\nskipped rows:\n";
  for (const auto& v : rep.rows) {
    if (v.skipped && !v.error) {
      std::snprintf(buf, sizeof buf, "  line %-5d %s\n", v.line, v.reason.c_str());
      out += buf;
    }
  }
  out += "\n";
  for (const auto& [k, e] : rep.mape_by_group) {
    std::snprintf(buf, sizeof buf, "MAPE %-36s %6.2f%% over %d rows\n", k.c_str(), e.first,
                  e.second);
    out += buf;
  }
  std::snprintf(buf, sizeof buf,
                "MAPE (all compared rows): %.2f%% over %d rows; worst row %.1f%%\n", rep.mape_pct,
                rep.n_rows, rep.max_abs_error_pct);
  out += buf;
  std::snprintf(buf, sizeof buf, "skipped: %d rows\n", rep.n_skipped);
  out += buf;
  if (rep.n_errors) {
    std::snprintf(buf, sizeof buf, "malformed: %d rows (see the errors)\n", rep.n_errors);
    out += buf;
  }
  return out;
}

}  // namespace fleetsim
