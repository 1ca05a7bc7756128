// What a scenario says about MoE routing and expert placement (the routing model's input; the
// model itself is routing.h). Parsed by sim/scenario, read by sim/moe.
#pragma once

#include <string>
#include <vector>

namespace fleetsim {

enum class RoutingKind { kBalanced, kDirichlet, kZipf, kHistogram };
enum class Placement { kContiguous, kRoundRobin, kEplb };

const char* to_string(RoutingKind k);
const char* to_string(Placement p);

struct RoutingSpec {
  RoutingKind kind = RoutingKind::kBalanced;
  double alpha = 1.0;  // Dirichlet concentration
  double s = 1.0;      // Zipf exponent
  // Measured token counts [moe layer][expert] (histogram kind), from a routing file.
  std::vector<std::vector<double>> histogram;
  std::string histogram_file;
  double capacity_factor = 0;  // 0 = dropless
  Placement placement = Placement::kContiguous;
  int redundant_experts = 0;  // EPLB: extra expert slots over the whole EP group
  double bias_gamma = 0;      // aux-loss-free bias update rate (DeepSeek-V3: 0.001)
  int bias_steps = 0;         // steps of bias updates before the simulated step
  double drift = 0;           // per-step standard deviation of log-popularity drift
};

}  // namespace fleetsim
