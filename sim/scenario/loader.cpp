// JSON loading for scenarios, topologies and calibration. The strict reader (json_reader.h)
// checks every object's keys against the list the loader accepts, so unknown keys never pass
// silently; values are type- and range-checked; quantities with units go through core/units.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "compute/import.h"
#include "core/csv.h"
#include "core/error.h"
#include "core/units.h"
#include "scenario/json_reader.h"
#include "scenario/model_loader.h"
#include "scenario/run_loader.h"
#include "scenario/scenario.h"

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
const std::vector<std::string> kTrainingWorkloadKeys = {
    "type",      "model",     "gpus",     "parallelism", "batch",  "recompute",
    "precision", "framework", "symmetry", "placement",   "routing"};
const std::vector<std::string> kPlacementKeys = {"ranks_per_domain"};
const std::vector<std::string> kRoutingKeys = {
    "model",       "alpha", "s", "file", "capacity_factor", "placement", "redundant_experts",
    "bias_update", "drift"};
const std::vector<std::string> kBiasUpdateKeys = {"gamma", "steps"};
const std::vector<std::string> kParallelismKeys = {
    "tp",  "pp", "cp", "dp", "vp", "ep", "etp", "sequence_parallel", "distributed_optimizer",
    "fsdp"};
const std::vector<std::string> kBatchKeys = {"global", "micro", "seq_len"};
const std::vector<std::string> kRecomputeKeys = {"mode", "layers", "modules"};
const std::vector<std::string> kFrameworkKeys = {
    "tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather",
    "bucket_params",   "kernel_gap",          "kernel_efficiency",
    "pipeline_split",  "moe_dispatcher",      "ep_comm_overlap"};
const std::vector<std::string> kSizeRangeKeys = {"min", "max", "factor"};
const std::vector<std::string> kGroupKeys = {"gpus"};

// ---- topology files ----

std::vector<std::string> keys_of(const json& j) {
  std::vector<std::string> out;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      out.push_back(k);
  }
  return out;
}

FabricSpec read_fabric(const Obj& f, FabricSpec base, bool all_required) {
  auto want = [&](const char* k) { return all_required || f.has(k); };
  if (want("topology")) base.topology = f.choice("topology", {"clos"});
  if (want("tiers")) base.tiers = static_cast<int>(f.integer("tiers", 1, 3));
  if (want("rail_optimized")) base.rail_optimized = f.boolean("rail_optimized");
  if (want("switch_radix"))
    base.switch_radix = static_cast<int>(f.integer("switch_radix", 2, 1024));
  if (want("nodes_per_leaf_group")) {
    base.nodes_per_leaf_group = static_cast<int>(f.integer("nodes_per_leaf_group", 1, 100000));
  }
  if (want("oversubscription")) base.oversubscription = f.number("oversubscription", 1.0, 64.0);
  if (want("link_bandwidth")) base.link_bandwidth = f.bandwidth("link_bandwidth");
  if (want("hop_latency")) base.hop_latency = f.time("hop_latency");
  if (want("nic_latency")) base.nic_latency = f.time("nic_latency");
  if (want("routing")) {
    base.routing = f.choice("routing", {"srd", "ecmp"}) == "srd" ? Routing::kSrd : Routing::kEcmp;
  }
  if (want("srd_paths")) base.srd_paths = static_cast<int>(f.integer("srd_paths", 0, 1024));
  if (want("protocol_efficiency"))
    base.protocol_efficiency = f.number("protocol_efficiency", 0.01, 1.0);
  return base;
}

SystemSpec parse_system(const std::string& text, const std::string& file) {
  const json j = parse_strict(text, file);
  const Obj root(j, file, "",
                 {"name", "description", "vendor", "unit", "node", "gpu", "scale_up", "nics",
                  "fabric", "price_per_hour_usd", "sources"});
  SystemSpec s;
  s.file = file;
  s.name = root.str("name");
  s.description = root.str("description");
  s.vendor = root.choice("vendor", {"aws", "nvidia"});
  const Obj unit = root.object("unit", {"name", "nodes"});
  s.unit_name = unit.str("name");
  s.unit_nodes = static_cast<int>(unit.integer("nodes", 1, 1024));

  const Obj node = root.object(
      "node", {"name", "gpus", "host_cpu", "vcpus", "host_memory", "pcie", "local_nvme"});
  s.node.name = node.str("name");
  s.node.gpus = static_cast<int>(node.integer("gpus", 1, 64));
  s.node.host_cpu = node.str("host_cpu");
  s.node.vcpus = static_cast<int>(node.integer("vcpus", 1, 4096));
  s.node.host_memory = node.bytes("host_memory");
  s.node.local_nvme = node.bytes("local_nvme");
  const Obj pcie = node.object("pcie", {"generation", "lanes", "bandwidth", "link"});
  s.node.pcie_generation = static_cast<int>(pcie.integer("generation", 0, 7));
  s.node.pcie_lanes = static_cast<int>(pcie.integer("lanes", 0, 32));
  s.node.pcie_bandwidth = pcie.bandwidth("bandwidth");
  s.node.host_link = pcie.has("link") ? pcie.choice("link", {"pcie", "nvlink-c2c"}) : "pcie";

  const Obj gpu = root.object(
      "gpu", {"model", "hbm", "hbm_bandwidth", "sm_count", "power_watts", "peak_dense_tflops"});
  s.gpu.model = gpu.str("model");
  s.gpu.hbm = gpu.bytes("hbm");
  s.gpu.hbm_bandwidth = gpu.bandwidth("hbm_bandwidth");
  if (gpu.has("sm_count")) s.gpu.sm_count = static_cast<int>(gpu.integer("sm_count", 1, 10000));
  s.gpu.power_watts = gpu.number("power_watts", 1, 10000);
  const std::vector<std::string> precisions = {"fp64", "fp32", "tf32",  "bf16",
                                               "fp16", "fp8",  "mxfp8", "nvfp4"};
  const Obj peaks = gpu.object("peak_dense_tflops", precisions);
  for (const auto& p : precisions) {
    if (peaks.has(p)) s.gpu.peak_dense_tflops[p] = peaks.number(p, 0.001, 1e6);
  }

  const Obj su =
      root.object("scale_up", {"technology", "domain_nodes", "gpu_bandwidth", "links_per_gpu",
                               "nvswitch_chips", "nvls", "nvls_min_gpus", "hop_latency"});
  s.scale_up.technology = su.choice("technology", {"nvlink4", "nvlink5"});
  s.scale_up.domain_nodes = static_cast<int>(su.integer("domain_nodes", 1, 576));
  s.scale_up.gpu_bandwidth = su.bandwidth("gpu_bandwidth");
  s.scale_up.links_per_gpu = static_cast<int>(su.integer("links_per_gpu", 1, 64));
  s.scale_up.nvswitch_chips = static_cast<int>(su.integer("nvswitch_chips", 0, 1024));
  s.scale_up.nvls = su.boolean("nvls");
  s.scale_up.nvls_min_gpus = static_cast<int>(su.integer("nvls_min_gpus", 0, 1024));
  s.scale_up.hop_latency = su.time("hop_latency");
  if (s.unit_nodes % s.scale_up.domain_nodes != 0) {
    su.fail(su.at("domain_nodes"),
            "must divide /unit/nodes (" + std::to_string(s.unit_nodes) + ")");
  }

  const Obj nics = root.object(
      "nics", {"kind", "generation", "per_node", "bandwidth", "gpus_per_nic", "nics_per_gpu"});
  const std::string kind = nics.choice("kind", {"efa", "infiniband", "roce"});
  s.nics.kind = kind == "efa"          ? NicKind::kEfa
                : kind == "infiniband" ? NicKind::kInfiniband
                                       : NicKind::kRoce;
  s.nics.generation = nics.str("generation");
  s.nics.per_node = static_cast<int>(nics.integer("per_node", 1, 256));
  s.nics.bandwidth = nics.bandwidth("bandwidth");
  s.nics.gpus_per_nic = static_cast<int>(nics.integer("gpus_per_nic", 0, 64));
  s.nics.nics_per_gpu =
      nics.has("nics_per_gpu") ? static_cast<int>(nics.integer("nics_per_gpu", 0, 64)) : 0;
  if ((s.nics.gpus_per_nic >= 1) == (s.nics.nics_per_gpu >= 1)) {
    nics.fail(nics.at("gpus_per_nic"), "exactly one of gpus_per_nic and nics_per_gpu must be >= 1");
  }
  const int expected = s.nics.gpus_per_nic >= 1
                           ? (s.node.gpus + s.nics.gpus_per_nic - 1) / s.nics.gpus_per_nic
                           : s.node.gpus * s.nics.nics_per_gpu;
  if (expected != s.nics.per_node) {
    nics.fail(nics.at("per_node"), "expected " + std::to_string(expected) + " NICs for " +
                                       std::to_string(s.node.gpus) + " GPUs, got " +
                                       std::to_string(s.nics.per_node));
  }

  const Obj fabric = root.object(
      "fabric", {"topology", "tiers", "rail_optimized", "switch_radix", "nodes_per_leaf_group",
                 "oversubscription", "link_bandwidth", "hop_latency", "nic_latency", "routing",
                 "srd_paths", "protocol_efficiency"});
  s.fabric = read_fabric(fabric, FabricSpec{}, /*all_required=*/true);
  if (root.has("price_per_hour_usd"))
    s.price_per_hour_usd = root.number("price_per_hour_usd", 0, 1e6);
  const json& src = root.get("sources");
  if (!src.is_object())
    root.fail("/sources", "expected an object mapping JSON pointers to sources");
  for (const auto& [k, v] : src.items()) {
    if (!v.is_string()) root.fail("/sources/" + escape_pointer_token(k), "expected a string");
    s.sources[k] = v.get<std::string>();
  }
  return s;
}

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
  if (c.op == CollOp::kAllToAll && n > 2048) {
    w.fail(w.at("group"),
           "all_to_all is simulated with one flow per GPU pair; groups above 2048 GPUs are refused "
           "(got " +
               std::to_string(n) + ")");
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

std::string default_data_dir() {
  if (const char* env = std::getenv("FLEETSIM_DATA_DIR"); env != nullptr && *env != '\0')
    return env;
  return FLEETSIM_DATA_DIR;
}

std::vector<std::string> known_systems(const std::string& data_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(data_dir) / "topologies", ec)) {
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

SystemSpec load_system(const std::string& name_or_path, const std::string& data_dir) {
  std::string path = name_or_path;
  if (name_or_path.find('/') == std::string::npos &&
      name_or_path.find(".json") == std::string::npos) {
    path = (fs::path(data_dir) / "topologies" / (name_or_path + ".json")).string();
    std::error_code ec;  // e.g. a name longer than the file system allows: not a known system
    if (!fs::exists(path, ec)) {
      const auto names = known_systems(data_dir);
      std::string msg = "unknown system '" + name_or_path + "'";
      const std::string near = closest_match(name_or_path, names);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      std::string list;
      for (const auto& n : names)
        list += (list.empty() ? "" : ", ") + n;
      msg += " (known: " + list + ")";
      throw InputError("", "", msg);
    }
  }
  return parse_system(read_file(path), path);
}

CollectiveParams load_collective_params(const SystemSpec& system, const std::string& data_dir) {
  const std::string path = (fs::path(data_dir) / "calibration" / "collectives.json").string();
  const json j = parse_strict(read_file(path), path);
  auto time_of = [&](const json& v, const std::string& ptr) {
    std::string err;
    if (!v.is_string()) throw InputError(path, ptr, "expected a time string");
    auto t = parse_time(v.get<std::string>(), &err);
    if (!t) throw InputError(path, ptr, err);
    return *t;
  };
  auto num = [&](const json& o, const std::string& key, const std::string& ptr) {
    if (!o.contains(key) || !o.at(key).is_number())
      throw InputError(path, ptr + "/" + key, "expected a number");
    const double v = o.at(key).get<double>();
    if (!(v > 0 && v <= 1.5))
      throw InputError(path, ptr + "/" + key, "expected an efficiency in (0, 1.5]");
    return v;
  };
  const std::string tech = system.scale_up.technology;
  const std::string tptr = "/technologies/" + tech;
  if (!j.contains("technologies") || !j["technologies"].contains(tech)) {
    throw InputError(path, tptr, "no calibration for scale-up technology '" + tech + "'");
  }
  const json& t = j["technologies"][tech];
  CollectiveParams p;
  p.eta_ring = num(t, "eta_ring", tptr);
  p.eta_nvls = num(t, "eta_nvls", tptr);
  p.eta_a2a = num(t, "eta_a2a", tptr);
  if (!t.contains("base_latency") || !t.contains("nvlink_step_latency")) {
    throw InputError(path, tptr, "expected base_latency and nvlink_step_latency");
  }
  p.base_latency = time_of(t["base_latency"], tptr + "/base_latency");
  p.nvlink_step_latency = time_of(t["nvlink_step_latency"], tptr + "/nvlink_step_latency");
  const std::string net = to_string(system.nics.kind);
  const std::string nptr = "/networks/" + net;
  if (!j.contains("networks") || !j["networks"].contains(net) ||
      !j["networks"][net].contains("net_step_latency")) {
    throw InputError(path, nptr, "no net_step_latency for network kind '" + net + "'");
  }
  p.net_step_latency = time_of(j["networks"][net]["net_step_latency"], nptr + "/net_step_latency");
  p.source = path + " (" + tech + ", " + net + ")";
  return p;
}

FrameworkOptions load_framework_defaults(const std::string& data_dir) {
  FrameworkOptions fw;
  const std::string path = data_dir + "/calibration/framework.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return fw;
  const json j = parse_strict(read_file(path), path);
  const Obj o(j, path, "",
              {"kernel_gap", "kernel_efficiency", "fitted_by", "fitted_on", "mape_pct"});
  fw.kernel_gap = o.time("kernel_gap");
  fw.kernel_efficiency = o.number("kernel_efficiency", 0.05, 1.0);
  return fw;
}

namespace {

TrainingWorkload read_training(const Obj& w, int cluster_gpus, const SystemSpec& system,
                               const std::string& data_dir) {
  TrainingWorkload t;
  t.fw = load_framework_defaults(data_dir);
  const json& mj = w.get("model");
  if (mj.is_string()) {
    t.model_ref = mj.get<std::string>();
    try {
      t.model = load_model(t.model_ref, data_dir);
    } catch (const InputError& e) {
      throw InputError(w.file(), w.at("model"), e.message());
    }
  } else if (mj.is_object()) {
    t.model_ref = "inline";
    t.model = parse_model_text(mj.dump(), w.file(), w.at("model"));
  } else {
    w.fail(w.at("model"),
           std::string("expected a model name or a model object, got ") + type_name(mj));
  }
  t.gpus = w.has("gpus") ? static_cast<int>(w.integer("gpus", 1, cluster_gpus)) : cluster_gpus;
  ParallelConfig& p = t.par;
  const Obj par = w.object("parallelism", kParallelismKeys);
  auto deg = [&](const char* k, int dflt) {
    return par.has(k) ? static_cast<int>(par.integer(k, 1, 1 << 20)) : dflt;
  };
  p.tp = deg("tp", 1);
  p.pp = deg("pp", 1);
  p.cp = deg("cp", 1);
  p.vp = deg("vp", 1);
  p.ep = deg("ep", 1);
  p.etp = deg("etp", 1);
  const int64_t denom = int64_t{p.tp} * p.pp * p.cp;
  p.dp = static_cast<int>(t.gpus / denom);
  if (t.gpus % denom != 0) {
    par.fail(par.ptr(), "tp·pp·cp = " + std::to_string(denom) + " must divide the " +
                            std::to_string(t.gpus) + " GPUs used");
  }
  if (par.has("dp") && par.integer("dp", 1, 1 << 20) != p.dp) {
    par.fail(par.at("dp"), "dp must equal GPUs / (tp·pp·cp) = " + std::to_string(p.dp) + ", got " +
                               std::to_string(par.integer("dp", 1, 1 << 20)));
  }
  if (par.has("sequence_parallel")) p.sequence_parallel = par.boolean("sequence_parallel");
  if (par.has("distributed_optimizer"))
    p.distributed_optimizer = par.boolean("distributed_optimizer");
  if (par.has("fsdp")) p.fsdp = par.boolean("fsdp");
  const Obj batch = w.object("batch", kBatchKeys);
  p.global_batch = static_cast<int>(batch.integer("global", 1, 1 << 24));
  p.micro_batch = batch.has("micro") ? static_cast<int>(batch.integer("micro", 1, 1 << 16)) : 1;
  p.seq_len = static_cast<int>(batch.integer("seq_len", 1, 1 << 24));
  if (w.has("recompute")) {
    const Obj r = w.object("recompute", kRecomputeKeys);
    parse_recompute(r.choice("mode", {"none", "selective", "full"}), &p.recompute);
    if (r.has("layers")) p.recompute_layers = static_cast<int>(r.integer("layers", 0, 1 << 16));
    if (r.has("modules")) {
      const json& mods = r.get("modules");
      if (!mods.is_array() || mods.empty())
        r.fail(r.at("modules"), "expected a non-empty array of module names");
      if (p.recompute != Recompute::kSelective)
        r.fail(r.at("modules"), "modules apply to mode 'selective' only");
      p.recompute_modules = 0;
      for (size_t i = 0; i < mods.size(); ++i) {
        unsigned bit = 0;
        const std::string ptr = r.at("modules") + "/" + std::to_string(i);
        if (!mods[i].is_string() || !parse_recompute_module(mods[i].get<std::string>(), &bit)) {
          r.fail(ptr,
                 "expected one of 'core_attn', 'mlp', 'mla_up_proj', 'moe_act', "
                 "'layernorm', got " +
                     show(mods[i]));
        }
        p.recompute_modules |= bit;
      }
    }
  }
  if (w.has("precision")) {
    parse_precision(
        w.choice("precision", {"bf16", "fp8_ds", "fp8_cs", "fp8_blk", "mxfp8", "nvfp4"}),
        &p.precision);
  }
  if (w.has("framework")) {
    const Obj f = w.object("framework", kFrameworkKeys);
    if (f.has("tp_comm_overlap")) t.fw.tp_comm_overlap = f.boolean("tp_comm_overlap");
    if (f.has("overlap_grad_reduce")) t.fw.overlap_grad_reduce = f.boolean("overlap_grad_reduce");
    if (f.has("overlap_param_gather"))
      t.fw.overlap_param_gather = f.boolean("overlap_param_gather");
    if (f.has("bucket_params"))
      t.fw.bucket_params = f.integer("bucket_params", 1, int64_t{1} << 40);
    if (f.has("kernel_gap")) t.fw.kernel_gap = f.time("kernel_gap");
    if (f.has("pipeline_split")) {
      const std::string ps = f.choice("pipeline_split", {"auto", "even", "balanced"});
      t.fw.pipeline_split = ps == "even"       ? PipelineSplit::kEven
                            : ps == "balanced" ? PipelineSplit::kBalanced
                                               : PipelineSplit::kAuto;
    }
    if (f.has("moe_dispatcher")) {
      t.fw.moe_dispatcher = f.choice("moe_dispatcher", {"alltoall", "deepep"}) == "deepep"
                                ? MoeDispatcher::kDeepEp
                                : MoeDispatcher::kAllToAll;
    }
    if (f.has("ep_comm_overlap")) {
      t.fw.ep_comm_overlap = f.boolean("ep_comm_overlap");
      // Megatron-Core runs it only in the combined 1F1B schedules of no pipelining and of the
      // interleaved pipeline (TransformerConfig refuses pp > 1 without a virtual pipeline).
      if (t.fw.ep_comm_overlap && t.par.pp > 1 && t.par.vp == 1)
        f.fail(f.at("ep_comm_overlap"),
               "EP all-to-all overlap needs the interleaved schedule (vp > 1) when pp > 1, as in "
               "Megatron-Core");
    }
    if (f.has("kernel_efficiency"))
      t.fw.kernel_efficiency = f.number("kernel_efficiency", 0.05, 1.0);
  }
  if (w.has("symmetry")) t.symmetry = w.boolean("symmetry");
  if (w.has("routing")) {
    if (!is_moe(t.model))
      w.fail(w.at("routing"), "routing applies to mixture-of-experts models only");
    const Obj r = w.object("routing", kRoutingKeys);
    RoutingSpec spec;
    const std::string kind = r.choice("model", {"balanced", "dirichlet", "zipf", "histogram"});
    spec.kind = kind == "dirichlet"   ? RoutingKind::kDirichlet
                : kind == "zipf"      ? RoutingKind::kZipf
                : kind == "histogram" ? RoutingKind::kHistogram
                                      : RoutingKind::kBalanced;
    if (spec.kind == RoutingKind::kDirichlet) spec.alpha = r.number("alpha", 1e-3, 1e6);
    if (spec.kind == RoutingKind::kZipf) spec.s = r.number("s", 0.0, 10.0);
    if (spec.kind != RoutingKind::kDirichlet && r.has("alpha"))
      r.fail(r.at("alpha"), "alpha applies to model 'dirichlet' only");
    if (spec.kind != RoutingKind::kZipf && r.has("s"))
      r.fail(r.at("s"), "s applies to model 'zipf' only");
    if (spec.kind == RoutingKind::kHistogram) {
      std::string path = r.str("file");
      if (!path.empty() && path[0] != '/') {
        const auto dir = fs::path(w.file()).parent_path();
        if (!dir.empty()) path = (dir / path).string();
      }
      spec.histogram_file = path;
      spec.histogram = load_routing_histogram(path, moe_layer_count(t.model), t.model.moe.experts);
    } else if (r.has("file")) {
      r.fail(r.at("file"), "file applies to model 'histogram' only");
    }
    if (r.has("capacity_factor")) spec.capacity_factor = r.number("capacity_factor", 0.0, 1000.0);
    if (r.has("placement")) {
      const std::string pl = r.choice("placement", {"contiguous", "round_robin", "eplb"});
      spec.placement = pl == "eplb"          ? Placement::kEplb
                       : pl == "round_robin" ? Placement::kRoundRobin
                                             : Placement::kContiguous;
    }
    if (r.has("redundant_experts")) {
      if (spec.placement != Placement::kEplb)
        r.fail(r.at("redundant_experts"), "redundant_experts applies to placement 'eplb' only");
      spec.redundant_experts =
          static_cast<int>(r.integer("redundant_experts", 0, t.model.moe.experts));
      if (spec.redundant_experts > 0 && p.ep < 2)
        r.fail(r.at("redundant_experts"), "replicas need ep >= 2 (a replica goes to another rank)");
    }
    if (r.has("bias_update")) {
      const Obj b = r.object("bias_update", kBiasUpdateKeys);
      spec.bias_gamma = b.number("gamma", 0.0, 10.0);
      spec.bias_steps = static_cast<int>(b.integer("steps", 0, 1000000));
    }
    if (r.has("drift")) spec.drift = r.number("drift", 0.0, 10.0);
    t.routing = spec;
  }
  const int per_domain = system.node.gpus * system.scale_up.domain_nodes;
  if (w.has("placement")) {
    const Obj pl = w.object("placement", kPlacementKeys);
    if (pl.has("ranks_per_domain")) {
      t.ranks_per_domain = static_cast<int>(pl.integer("ranks_per_domain", 1, per_domain));
      const int64_t domains_needed = (t.gpus + t.ranks_per_domain - 1) / t.ranks_per_domain;
      const int64_t domains = cluster_gpus / per_domain;
      if (domains_needed > domains) {
        pl.fail(pl.at("ranks_per_domain"),
                std::to_string(t.gpus) + " ranks at " + std::to_string(t.ranks_per_domain) +
                    " per NVLink domain need " + std::to_string(domains_needed) +
                    " domains; the cluster has " + std::to_string(domains));
      }
      if (t.ranks_per_domain == per_domain) t.ranks_per_domain = 0;
    }
  }
  check_parallel_config(t.model, p, t.gpus, per_domain, w.file(), w.ptr());
  return t;
}

}  // namespace

std::vector<std::vector<double>> load_routing_histogram(const std::string& path, int moe_layers,
                                                        int experts) {
  std::vector<std::vector<double>> h(moe_layers, std::vector<double>(experts, -1.0));
  const std::string text = read_file(path);
  auto check_count = [&](double v, const std::string& where) {
    if (!std::isfinite(v) || v < 0)
      throw InputError(path, where, "expected a token count >= 0, got " + std::to_string(v));
  };
  const bool is_json = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
  if (is_json) {
    const json j = parse_strict(text, path);
    const Obj o(j, path, "", {"experts", "tokens"});
    if (o.integer("experts", 1, 1 << 20) != experts) {
      o.fail(o.at("experts"), "the model has " + std::to_string(experts) + " routed experts, got " +
                                  std::to_string(o.integer("experts", 1, 1 << 20)));
    }
    const json& tokens = o.get("tokens");
    if (!tokens.is_array() || static_cast<int>(tokens.size()) != moe_layers) {
      o.fail(o.at("tokens"), "expected an array of " + std::to_string(moe_layers) +
                                 " MoE layers, one array of counts each");
    }
    for (int l = 0; l < moe_layers; ++l) {
      const std::string lp = "/tokens/" + std::to_string(l);
      const json& row = tokens[l];
      if (!row.is_array() || static_cast<int>(row.size()) != experts)
        throw InputError(path, lp, "expected " + std::to_string(experts) + " counts");
      for (int e = 0; e < experts; ++e) {
        if (!row[e].is_number())
          throw InputError(path, lp + "/" + std::to_string(e), "expected a number");
        const double v = row[e].get<double>();
        check_count(v, lp + "/" + std::to_string(e));
        h[l][e] = v;
      }
    }
    return h;
  }
  const CsvTable t = parse_csv(text, path);
  const int cl = t.column("layer"), ce = t.column("expert"), ct = t.column("tokens");
  if (cl < 0 || ce < 0 || ct < 0)
    throw InputError(path, "line 1", "expected the columns layer,expert,tokens");
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const std::string where = "line " + std::to_string(t.line_of_row[i]);
    auto num = [&](int c, const char* what) {
      const std::string& f = t.rows[i][c];
      char* end = nullptr;
      const double v = std::strtod(f.c_str(), &end);
      if (f.empty() || end == nullptr || *end != '\0')
        throw InputError(path, where,
                         std::string("expected a number for ") + what + ", got '" + f + "'");
      return v;
    };
    const double l = num(cl, "layer"), e = num(ce, "expert"), v = num(ct, "tokens");
    if (l < 0 || l >= moe_layers || l != std::floor(l))
      throw InputError(path, where,
                       "layer must be an integer in [0, " + std::to_string(moe_layers - 1) + "]");
    if (e < 0 || e >= experts || e != std::floor(e))
      throw InputError(path, where,
                       "expert must be an integer in [0, " + std::to_string(experts - 1) + "]");
    check_count(v, where);
    double& cell = h[static_cast<int>(l)][static_cast<int>(e)];
    if (cell >= 0) throw InputError(path, where, "layer and expert given twice");
    cell = v;
  }
  for (int l = 0; l < moe_layers; ++l)
    for (int e = 0; e < experts; ++e)
      if (h[l][e] < 0)
        throw InputError(path, "",
                         "missing tokens for layer " + std::to_string(l) + ", expert " +
                             std::to_string(e) + " (every MoE layer and expert is needed)");
  return h;
}

Scenario parse_scenario(const std::string& text, const std::string& file,
                        const LoadOptions& options) {
  const std::string data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  const json j = parse_strict(text, file);
  const Obj root(j, file, "", kScenarioKeys);
  Scenario s;
  s.file = file;
  s.name = root.str("name");
  if (s.name.empty() || s.name.size() > 128 ||
      s.name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos) {
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
      root.object("workload", training ? kTrainingWorkloadKeys : kCollectiveWorkloadKeys);
  const std::string type = workload.choice("type", {"collective", "training"});
  if (type == "collective") s.collective = read_collective(workload, static_cast<int>(gpus));
  if (type == "training") {
    s.training = read_training(workload, static_cast<int>(gpus), s.system, data_dir);
    const int64_t passes = estimated_step_passes(*s.training);
    if (passes > options.max_passes) {
      workload.fail(workload.at("batch"),
                    "the step has " + std::to_string(passes) +
                        " forward/backward passes to simulate (TP units × micro-batches per "
                        "pipeline × model chunks × 2); the limit is " +
                        std::to_string(options.max_passes) + " (raise it with --max-passes)");
    }
  }
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
  keys.merge(std::map<std::string, std::vector<std::string>>{
      {"", kScenarioKeys},
      {"/cluster", kClusterKeys},
      {"/cluster/fabric", kFabricOverrideKeys},
      {"/workload", kCollectiveWorkloadKeys},
      {"/workload#training", kTrainingWorkloadKeys},
      {"/workload#training/parallelism", kParallelismKeys},
      {"/workload#training/batch", kBatchKeys},
      {"/workload#training/recompute", kRecomputeKeys},
      {"/workload#training/framework", kFrameworkKeys},
      {"/workload#training/placement", kPlacementKeys},
      {"/workload#training/routing", kRoutingKeys},
      {"/workload#training/routing/bias_update", kBiasUpdateKeys},
      {"/workload/sizes", kSizeRangeKeys},
      {"/workload/group", kGroupKeys}});
  return keys;
}

}  // namespace fleetsim
