// Checkpoint costs from size and bandwidths, job failure rates, Young / Daly intervals.
#include "fault/fault.h"

#include <cmath>

namespace fleetsim {

const char* to_string(FaultUnit u) {
  switch (u) {
    case FaultUnit::kGpu:
      return "gpu";
    case FaultUnit::kNode:
      return "node";
    case FaultUnit::kDomain:
      return "domain";
    case FaultUnit::kJob:
      return "job";
  }
  return "?";
}

const char* to_string(GrayKind k) {
  return k == GrayKind::kGpuClock ? "gpu_clock" : "storage";
}

const char* to_string(CheckpointMode m) {
  switch (m) {
    case CheckpointMode::kSync:
      return "sync";
    case CheckpointMode::kAsync:
      return "async";
    case CheckpointMode::kInMemory:
      return "in_memory";
    case CheckpointMode::kTiered:
      return "tiered";
  }
  return "?";
}

const std::vector<std::string>& known_components() {
  // Llama 3 Table 5 rows, the NVLink / NVSwitch and power components of GB200 racks, and
  // "unattributed" for fleet-wide rates without a breakdown (Meta RSC).
  static const std::vector<std::string> k = {
      "gpu",           "hbm",           "gpu_sram", "gpu_system_processor",
      "gpu_thermal",   "sdc",           "nic",      "nvlink",
      "nvswitch_tray", "network",       "host",     "host_maintenance",
      "ssd",           "power",         "chassis",  "io_board",
      "cpu",           "system_memory", "software", "dependency",
      "nccl_hang",     "unattributed"};
  return k;
}

CheckpointCosts checkpoint_costs(const CheckpointSpec& c, double storage_speed) {
  CheckpointCosts k;
  const double per_gpu = c.size_bytes / std::max(1, c.gpus);
  const double per_node = c.size_bytes / std::max(1, c.nodes);
  auto div = [](double bytes, double bw) { return bw > 0 ? bytes / bw : 0.0; };
  const double storage_write = div(c.size_bytes, c.write_bytes_per_s) / storage_speed;
  const double storage_read = div(c.size_bytes, c.read_bytes_per_s) / storage_speed;
  const double host_copy = div(per_gpu, c.host_copy_bytes_per_s);
  const double peer_copy = div(per_node, c.peer_bytes_per_s);
  switch (c.mode) {
    case CheckpointMode::kSync:
      k.blocking_s = storage_write;
      break;
    case CheckpointMode::kAsync:
      k.blocking_s = host_copy;
      k.upload_s = storage_write;
      break;
    case CheckpointMode::kInMemory:
      k.blocking_s = host_copy + peer_copy;
      break;
    case CheckpointMode::kTiered:
      k.blocking_s = host_copy + peer_copy;
      k.upload_s = storage_write;
      break;
  }
  k.load_s = storage_read;
  k.peer_load_s = peer_copy + host_copy;
  if (c.blocking_s >= 0) k.blocking_s = c.blocking_s;
  if (c.upload_s >= 0) k.upload_s = c.upload_s / storage_speed;
  if (c.load_s >= 0) {
    k.load_s = c.load_s / storage_speed;
    k.peer_load_s = std::min(k.peer_load_s, c.load_s);
  }
  return k;
}

double job_failure_rate_per_hour(const FailureProfile& p, int gpus, int nodes, int domains) {
  double r = 0;
  for (const auto& f : p.classes) {
    const double units = f.per == FaultUnit::kGpu      ? gpus
                         : f.per == FaultUnit::kNode   ? nodes
                         : f.per == FaultUnit::kDomain ? domains
                                                       : 1;
    r += f.rate_per_hour * units;
  }
  return r;
}

double young_interval_s(double delta_s, double mtbf_s) {
  return std::sqrt(2 * delta_s * mtbf_s);
}

double daly_interval_s(double delta_s, double mtbf_s) {
  if (delta_s >= 2 * mtbf_s) return mtbf_s;
  const double x = delta_s / (2 * mtbf_s);
  return std::sqrt(2 * delta_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - delta_s;
}

}  // namespace fleetsim
