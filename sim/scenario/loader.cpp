// Scenario files: the top level, the cluster and the collective workload; the training workload
// is read by training_loader.cpp, the run section by run_loader.cpp, topology and calibration
// files by system_loader.cpp. The strict reader (json_reader.h) checks every object's keys
// against the list the loader accepts, so unknown keys never pass silently; values are type- and
// range-checked; quantities with units go through core/units.
#include <nlohmann/json.hpp>

#include "compute/import.h"
#include "core/error.h"
#include "core/units.h"
#include "scenario/json_reader.h"
#include "scenario/limits.h"
#include "scenario/run_loader.h"
#include "scenario/scenario.h"
#include "scenario/system_loader.h"
#include "scenario/training_loader.h"

namespace fleetsim {
namespace {

using namespace jsonr;

// ---- key tables (shared with scenario_keys() and the schema test) ----
const std::vector<std::string> kScenarioKeys = {"name",    "description", "seed",
                                                "cluster", "workload",    "run"};
const std::vector<std::string> kClusterKeys = {"system", "count", "fabric", "calibration_set"};
const std::vector<std::string> kFabricOverrideKeys = {"tiers",
                                                      "rail_optimized",
                                                      "switch_radix",
                                                      "nodes_per_leaf_group",
                                                      "oversubscription",
                                                      "link_bandwidth",
                                                      "hop_latency",
                                                      "nic_latency",
                                                      "routing",
                                                      "srd_paths",
                                                      "protocol_efficiency"};
const std::vector<std::string> kCollectiveWorkloadKeys = {"type",  "operation", "sizes",
                                                          "group", "algorithm", "dtype"};
const std::vector<std::string> kSizeRangeKeys = {"min", "max", "factor"};
const std::vector<std::string> kGroupKeys = {"gpus"};

// ---- scenarios ----

std::vector<Bytes> read_sizes(const Obj& w) {
  const json& v = w.get("sizes");
  const std::string ptr = w.at("sizes");
  std::vector<Bytes> out;
  if (v.is_array()) {
    if (v.empty()) w.fail(ptr, "expected at least one size");
    if (v.size() > 4096) w.fail(ptr, "expected at most 4096 sizes");
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(w.bytes_value(v[i], ptr + "/" + std::to_string(i)));
  } else if (v.is_object()) {
    const Obj r(v, w.file(), ptr, kSizeRangeKeys);
    const Bytes lo = r.bytes("min"), hi = r.bytes("max");
    const int64_t factor = r.has("factor") ? r.integer("factor", 2, 1024) : 2;
    if (lo.count() < 1) r.fail(r.at("min"), "expected a size >= 1 B");
    if (hi < lo) r.fail(r.at("max"), "expected max >= min (" + format_bytes(lo) + ")");
    for (int64_t s = lo.count(); s <= hi.count(); s *= factor) {
      out.push_back(Bytes(s));
      if (s > hi.count() / factor) break;
    }
  } else {
    w.fail(ptr, std::string("expected an array of sizes or {\"min\", \"max\", \"factor\"}, got ") +
                    type_name(v));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].count() > (int64_t{1} << 40)) w.fail(ptr, "sizes above 1 TiB are not supported");
  }
  return out;
}

CollectiveWorkload read_collective(const Obj& w, int gpus) {
  CollectiveWorkload c;
  const std::string op = w.choice("operation", {"all_reduce", "all_gather", "reduce_scatter",
                                                "all_to_all", "broadcast", "send_recv"});
  parse_coll_op(op, &c.op);
  c.sizes = read_sizes(w);
  if (w.has("group")) {
    const Obj g = w.object("group", kGroupKeys);
    c.group_gpus = static_cast<int>(g.integer("gpus", 2, gpus));
  }
  if (w.has("algorithm")) {
    parse_algorithm(w.choice("algorithm", {"auto", "ring", "tree", "nvls", "nvls_tree", "direct"}),
                    &c.algorithm);
  }
  if (w.has("dtype")) {
    c.dtype = w.choice("dtype", {"fp32", "bf16", "fp16", "fp8", "int8"});
    c.dtype_bytes = c.dtype == "fp32" ? 4 : (c.dtype == "fp8" || c.dtype == "int8") ? 1 : 2;
  }
  const int n = c.group_gpus > 0 ? c.group_gpus : gpus;
  if (c.op == CollOp::kSendRecv && c.group_gpus != 2 && n != 2) {
    w.fail(w.at("group"), "send_recv needs a group of exactly 2 GPUs ({\"gpus\": 2})");
  }
  for (size_t i = 0; i < c.sizes.size(); ++i) {
    if (c.sizes[i].count() % c.dtype_bytes != 0) {
      w.fail(w.at("sizes"), "size " + std::to_string(c.sizes[i].count()) +
                                " B is not a whole number of " + c.dtype + " elements (" +
                                std::to_string(c.dtype_bytes) + " B)");
    }
  }
  return c;
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& file,
                        const LoadOptions& options) {
  const std::string data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  const json j = parse_strict(text, file);
  const Obj root(j, file, "", kScenarioKeys);
  Scenario s;
  s.file = file;
  s.name = root.str("name");
  if (!is_folder_name(s.name)) {
    root.fail("/name",
              "expected 1-128 characters from [A-Za-z0-9._-] (it names the output folder), got '" +
                  s.name + "'");
  }
  s.description = root.str_or("description", "");
  if (root.has("seed")) s.seed = static_cast<uint64_t>(root.integer("seed", 0, INT64_MAX));

  const Obj cluster = root.object("cluster", kClusterKeys);
  s.system_name = cluster.str("system");
  try {
    s.system = load_system(s.system_name, data_dir);
  } catch (const InputError& e) {
    if (e.file().empty()) throw InputError(file, cluster.at("system"), e.message());
    throw;
  }
  s.count = static_cast<int>(cluster.integer("count", 1, 1 << 20));
  s.nodes = s.count * s.system.unit_nodes;
  const int64_t gpus = static_cast<int64_t>(s.nodes) * s.system.node.gpus;
  if (gpus > options.max_gpus) {
    cluster.fail(cluster.at("count"),
                 "cluster has " + std::to_string(gpus) + " GPUs; the limit is " +
                     std::to_string(options.max_gpus) + " (raise it with --max-gpus)");
  }
  s.fabric = s.system.fabric;
  if (cluster.has("fabric"))
    s.fabric = read_fabric(cluster.object("fabric", kFabricOverrideKeys), s.fabric, false);
  if (cluster.has("calibration_set")) {
    s.calibration_set = cluster.str("calibration_set");
    try {
      s.calibration_set_dir = resolve_calibration_set(s.calibration_set, data_dir);
    } catch (const InputError& e) {
      throw InputError(file, cluster.at("calibration_set"), e.message());
    }
  }

  const json& wj = root.get("workload");
  if (!wj.is_object())
    root.fail("/workload", std::string("expected an object, got ") + type_name(wj));
  if (!wj.contains("type")) root.fail("/workload/type", "missing required key 'type'");
  const bool training = wj["type"].is_string() && wj["type"].get<std::string>() == "training";
  const Obj workload =
      root.object("workload", training ? training_scenario_keys().at("/workload#training")
                                       : kCollectiveWorkloadKeys);
  const std::string type = workload.choice("type", {"collective", "training"});
  if (type == "collective") {
    s.collective = read_collective(workload, static_cast<int>(gpus));
    check_collective_limits(s, workload.has("group") ? workload.at("group") : cluster.at("count"),
                            options);
  }
  if (type == "training") {
    s.training = read_training(workload, static_cast<int>(gpus), s.system, data_dir);
    check_training_limits(s, workload.at("batch"), options);
  }
  s.max_run_events = options.max_run_events;
  s.max_passes = options.max_passes;
  if (root.has("run")) {
    if (!s.training) root.fail("/run", "the run section needs a training workload");
    s.run = read_run_section(root.object("run", run_scenario_keys().at("/run")), s.training->model,
                             s.training->par, s.system, data_dir);
  }
  s.collective_params = load_collective_params(s.system, data_dir);
  return s;
}

int64_t estimated_step_passes(const TrainingWorkload& t) {
  const ParallelConfig& p = t.par;
  const int64_t units = int64_t{t.gpus} / p.tp / (t.symmetry ? p.dp : 1);
  return units * p.micro_batches() * p.vp * 2;
}

Scenario load_scenario(const std::string& path, const LoadOptions& options) {
  return parse_scenario(read_file(path), path, options);
}

std::map<std::string, std::vector<std::string>> scenario_keys() {
  auto keys = run_scenario_keys();
  keys.merge(training_scenario_keys());
  keys.merge(
      std::map<std::string, std::vector<std::string>>{{"", kScenarioKeys},
                                                      {"/cluster", kClusterKeys},
                                                      {"/cluster/fabric", kFabricOverrideKeys},
                                                      {"/workload", kCollectiveWorkloadKeys},
                                                      {"/workload/sizes", kSizeRangeKeys},
                                                      {"/workload/group", kGroupKeys}});
  return keys;
}

}  // namespace fleetsim
