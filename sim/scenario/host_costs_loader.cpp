// The host-cost table (calibration/host/host-costs.csv): kernel-level host times of the
// framework per host CPU class, with their sources (scenario.h load_host_costs).
#include <cerrno>
#include <cstdlib>
#include <set>

#include "core/csv.h"
#include "core/error.h"
#include "scenario/scenario.h"

namespace fleetsim {

std::map<std::string, HostCosts> load_host_costs(const std::string& path) {
  const CsvTable t = parse_csv(read_text_file(path), path);
  const char* cols[] = {"host_cpu_class", "framework", "cost", "value_us", "basis", "source_url"};
  int idx[6];
  for (int i = 0; i < 6; ++i) {
    idx[i] = t.column(cols[i]);
    if (idx[i] < 0)
      throw InputError(path, "line 1", std::string("expected a column '") + cols[i] + "'");
  }
  const std::set<std::string> costs = {"op", "module", "launch", "nccl", "d2h", "graph", "expert"};
  std::map<std::string, HostCosts> out;
  std::map<std::string, std::set<std::string>> seen;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    const std::string where = "line " + std::to_string(t.line_of_row[r]);
    auto field = [&](int i) { return static_cast<size_t>(idx[i]) < row.size() ? row[idx[i]] : ""; };
    const std::string cls = field(0), fw = field(1), cost = field(2), basis = field(4);
    if (cls != "x86" && cls != "grace")
      throw InputError(path, where, "host_cpu_class: expected x86 or grace, got '" + cls + "'");
    if (fw != "megatron-te")
      throw InputError(path, where, "framework: expected megatron-te, got '" + fw + "'");
    if (costs.count(cost) == 0)
      throw InputError(
          path, where,
          "cost: expected op, module, launch, nccl, d2h, graph or expert, got '" + cost + "'");
    if (basis != "measured" && basis != "derived" && basis != "assumed")
      throw InputError(path, where, "basis: expected measured, derived or assumed");
    if (field(5).rfind("http", 0) != 0) throw InputError(path, where, "source_url: expected a URL");
    const std::string v = field(3);
    char* end = nullptr;
    errno = 0;
    const double us = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || errno != 0 || !(us >= 0 && us <= 100000))
      throw InputError(path, where, "value_us: expected microseconds in [0, 100000]");
    if (!seen[cls].insert(cost).second)
      throw InputError(path, where, "cost '" + cost + "' given twice for " + cls);
    HostCosts& h = out[cls];
    h.cpu = cls;
    h.source = path;
    const Time t_us = Time::from_ps(static_cast<int64_t>(us * 1e6 + 0.5));
    if (cost == "op") h.op = t_us;
    if (cost == "module") h.module = t_us;
    if (cost == "launch") h.launch = t_us;
    if (cost == "nccl") h.nccl = t_us;
    if (cost == "d2h") h.d2h = t_us;
    if (cost == "graph") h.graph = t_us;
    if (cost == "expert") h.expert = t_us;
  }
  for (const auto& [cls, s] : seen)
    if (s.size() != costs.size())
      throw InputError(path, "",
                       "host CPU class " + cls +
                           " lacks some of op, module, launch, "
                           "nccl, d2h, graph, expert");
  return out;
}

}  // namespace fleetsim
