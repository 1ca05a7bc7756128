// MoE routing and expert placement: how many token copies each expert and each EP rank receives,
// per MoE layer and per micro-batch.
//
// A routing model gives every MoE layer an expert popularity p (a distribution over the E routed
// experts): balanced (exactly T·k/E copies per expert, NeMo's --moe-router-force-load-balancing),
// Dirichlet(α) (popularity drawn from a symmetric Dirichlet), Zipf(s) (p ∝ 1/rank^s over a random
// ranking) or a measured histogram (token counts per expert and layer). The T·k token copies of a
// micro-batch are then drawn from Multinomial(T·k, p) (seeded per layer and micro-batch).
// DeepSeek-V3's auxiliary-loss-free balancing adds a bias b_e to each expert's routing score; the
// selection probability becomes p_e ∝ π_e · exp(b_e) and b_e += γ · sign(mean load − load_e)
// after every step, run for `bias_steps` steps before the simulated one. Popularity may drift
// between steps (log π_e += N(0, drift²)).
// Capacity: with capacity factor c, an expert keeps at most ⌈c · T·k / E⌉ copies per micro-batch
// and drops the rest (Megatron drops before the all-to-all); c = 0 means dropless.
// Placement maps experts to the ep ranks of a group: contiguous (E/ep consecutive experts per
// rank), round-robin (expert e on rank e mod ep), or EPLB (DeepSeek's expert-parallel load
// balancer: the `redundant` most loaded experts get one extra replica each, load split evenly
// between replicas, and experts are assigned greedily, heaviest first, to the least loaded rank
// with a free slot).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "moe/routing_spec.h"

namespace fleetsim {

// Loads of one MoE layer in one micro-batch.
struct LayerLoad {
  std::vector<double> expert;  // token copies kept per expert (after drops)
  std::vector<double> rank;    // token copies per EP rank (after placement)
  double dropped = 0;          // token copies dropped
  double total = 0;            // token copies routed (T·k)
};

struct RoutingResult {
  int moe_layers = 0;
  int micro_batches = 0;
  int experts = 0;
  int ep = 1;
  // loads[layer][mb]
  std::vector<std::vector<LayerLoad>> loads;
  // Expected per-layer popularity after bias updates and drift (what the all-to-all matrices use).
  std::vector<std::vector<double>> popularity;
  // Expert → ranks holding a replica (placement); the per-rank count of expert slots.
  std::vector<std::vector<int>> replicas;
  int slots_per_rank = 0;
  // Max/mean expert load of each bias-update step (the decay of imbalance), layer-averaged.
  std::vector<double> bias_trajectory;
};

// Routes `tokens` tokens per micro-batch (per EP rank) with top-`top_k` over `experts` experts on
// `ep` ranks, for `moe_layers` layers and `micro_batches` micro-batches. Deterministic in `seed`.
RoutingResult route_tokens(const RoutingSpec& spec, int experts, int top_k, int ep, int moe_layers,
                           int micro_batches, double tokens_per_rank, uint64_t seed);

// Statistics over a layer's loads.
double max_over_mean(const std::vector<double>& v);  // 1 when balanced, 0 when empty/zero

// Gamma(shape, 1) variate by Marsaglia & Tsang (2000), from uniform and normal draws of `rng`.
class Rng;
double gamma_variate(Rng& rng, double shape);

}  // namespace fleetsim
