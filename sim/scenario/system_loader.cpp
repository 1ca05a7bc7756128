// Topology files (topologies/NAME.json: a system's node, GPU, scale-up domain, NICs and fabric)
// and the calibration files every scenario of a system uses (calibration/collectives.json,
// calibration/framework.json), read with the strict reader (json_reader.h).
#include "scenario/system_loader.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/units.h"
#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace fleetsim {

using namespace jsonr;

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

namespace {

void read_node(const Obj& root, SystemSpec* out) {
  SystemSpec& s = *out;
  const Obj node = root.object("node", {"name", "gpus", "host_cpu", "host_cpu_class", "vcpus",
                                        "host_memory", "pcie", "local_nvme"});
  s.node.name = node.str("name");
  s.node.gpus = static_cast<int>(node.integer("gpus", 1, 64));
  s.node.host_cpu = node.str("host_cpu");
  if (node.has("host_cpu_class"))
    s.node.host_cpu_class = node.choice("host_cpu_class", {"x86", "grace"});
  s.node.vcpus = static_cast<int>(node.integer("vcpus", 1, 4096));
  s.node.host_memory = node.bytes("host_memory");
  s.node.local_nvme = node.bytes("local_nvme");
  const Obj pcie = node.object("pcie", {"generation", "lanes", "bandwidth", "link"});
  s.node.pcie_generation = static_cast<int>(pcie.integer("generation", 0, 7));
  s.node.pcie_lanes = static_cast<int>(pcie.integer("lanes", 0, 32));
  s.node.pcie_bandwidth = pcie.bandwidth("bandwidth");
  s.node.host_link = pcie.has("link") ? pcie.choice("link", {"pcie", "nvlink-c2c"}) : "pcie";
}

void read_gpu(const Obj& root, SystemSpec* out) {
  SystemSpec& s = *out;
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
}

// The NVLink domain (s.unit_nodes already read: the domain must divide the unit).
void read_scale_up(const Obj& root, SystemSpec* out) {
  SystemSpec& s = *out;
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
}

// The NICs (s.node.gpus already read: the NIC count must match it).
void read_nics(const Obj& root, SystemSpec* out) {
  SystemSpec& s = *out;
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

  read_node(root, &s);
  read_gpu(root, &s);
  read_scale_up(root, &s);
  read_nics(root, &s);

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

}  // namespace

std::string default_data_dir() {
  if (const char* env = std::getenv("FLEETSIM_DATA_DIR"); env != nullptr && *env != '\0')
    return env;
  return FLEETSIM_DATA_DIR;
}

std::vector<std::string> known_systems(const std::string& data_dir) {
  return json_stems(fs::path(data_dir) / "topologies");
}

SystemSpec load_system(const std::string& name_or_path, const std::string& data_dir) {
  const std::string path = resolve_named_file(name_or_path, data_dir, "topologies", "system");
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
  const Obj o(j, path, "", {"kernel_efficiency", "fitted_by", "fitted_on", "mape_pct"});
  fw.kernel_efficiency = o.number("kernel_efficiency", 0.05, 1.0);
  const std::string host = data_dir + "/calibration/host/host-costs.csv";
  if (fs::exists(host, ec)) fw.host_by_cpu = load_host_costs(host);
  return fw;
}

}  // namespace fleetsim
