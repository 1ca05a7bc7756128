// Typed description of one system type (an instance, a DGX system, an UltraServer / NVL72 rack)
// as read from topologies/*.json by scenario/. Facts and their sources live in those files; this
// struct only carries the values. All bandwidths are per direction.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/time.h"

namespace fleetsim {

struct GpuSpec {
  std::string model;  // H100, H200, B200, GB200, B300, GB300
  Bytes hbm;
  Bandwidth hbm_bandwidth;
  int sm_count = 0;  // 0 = unknown
  double power_watts = 0;
  std::map<std::string, double> peak_dense_tflops;  // by precision: bf16, fp8, ...
};

struct NodeSpec {
  std::string name;
  int gpus = 0;
  std::string host_cpu;
  // Host CPU class of the host-cost table (calibration/host/host-costs.csv): "x86" or "grace";
  // empty = not given (the step simulator assumes x86 and says so in compute_sources).
  std::string host_cpu_class;
  int vcpus = 0;
  Bytes host_memory;
  int pcie_generation = 0;
  int pcie_lanes = 0;
  Bandwidth pcie_bandwidth;        // GPU ↔ host / NIC, per direction per GPU
  std::string host_link = "pcie";  // "pcie" or "nvlink-c2c"
  Bytes local_nvme;
};

struct ScaleUpSpec {
  std::string technology;   // nvlink4 | nvlink5
  int domain_nodes = 1;     // nodes sharing one NVLink / NVSwitch domain
  Bandwidth gpu_bandwidth;  // per GPU into the switch fabric
  int links_per_gpu = 0;
  int nvswitch_chips = 0;
  bool nvls = false;
  int nvls_min_gpus = 0;
  Time hop_latency;
};

enum class NicKind { kEfa, kInfiniband, kRoce };

struct NicSpec {
  NicKind kind = NicKind::kEfa;
  std::string generation;
  int per_node = 0;
  Bandwidth bandwidth;   // per NIC
  int gpus_per_nic = 0;  // exactly one of gpus_per_nic / nics_per_gpu is >= 1
  int nics_per_gpu = 0;
};

enum class Routing { kSrd, kEcmp };

struct FabricSpec {
  std::string topology = "clos";
  int tiers = 2;
  bool rail_optimized = true;
  int switch_radix = 64;
  int nodes_per_leaf_group = 32;
  double oversubscription = 1.0;
  Bandwidth link_bandwidth;
  Time hop_latency;
  Time nic_latency;
  Routing routing = Routing::kSrd;
  int srd_paths = 0;
  double protocol_efficiency = 1.0;
};

struct SystemSpec {
  std::string name;
  std::string description;
  std::string vendor;
  std::string unit_name;  // what a user orders: instance, UltraServer, DGX system, NVL72 rack
  int unit_nodes = 1;
  NodeSpec node;
  GpuSpec gpu;
  ScaleUpSpec scale_up;
  NicSpec nics;
  FabricSpec fabric;
  std::optional<double> price_per_hour_usd;
  std::map<std::string, std::string> sources;  // JSON pointer → citation
  std::string file;                            // where it was read from
};

const char* to_string(NicKind k);
const char* to_string(Routing r);

}  // namespace fleetsim
