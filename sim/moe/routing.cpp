#include "moe/routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"

namespace fleetsim {

const char* to_string(RoutingKind k) {
  switch (k) {
    case RoutingKind::kBalanced:
      return "balanced";
    case RoutingKind::kDirichlet:
      return "dirichlet";
    case RoutingKind::kZipf:
      return "zipf";
    case RoutingKind::kHistogram:
      return "histogram";
  }
  return "?";
}

const char* to_string(Placement p) {
  switch (p) {
    case Placement::kContiguous:
      return "contiguous";
    case Placement::kRoundRobin:
      return "round_robin";
    case Placement::kEplb:
      return "eplb";
  }
  return "?";
}

double gamma_variate(Rng& rng, double shape) {
  FLEETSIM_ASSERT(shape > 0);
  if (shape < 1.0) {
    // Boost to shape + 1 and scale by U^(1/shape) (Marsaglia & Tsang, section 6).
    const double u = std::max(rng.uniform01(), 1e-300);
    return gamma_variate(rng, shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = rng.normal(0.0, 1.0);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.uniform01();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(std::max(u, 1e-300)) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

double max_over_mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (sum <= 0) return 0;
  return *std::max_element(v.begin(), v.end()) / (sum / static_cast<double>(v.size()));
}

namespace {

// Binomial(n, p): inversion for small means (exact), normal approximation with continuity
// correction when n·p·(1 − p) ≥ 30 (error well below the sampling noise that matters here).
double binomial(Rng& rng, double n, double p) {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  const double mean = n * p;
  const double var = mean * (1.0 - p);
  if (var >= 30.0) {
    const double x = std::round(rng.normal(mean, std::sqrt(var)));
    return std::clamp(x, 0.0, n);
  }
  // Inversion: walk the pmf from 0 (at most a few dozen steps for these means).
  const double q = 1.0 - p;
  double pk = std::pow(q, n);
  if (pk <= 0) {  // underflow for large n with small var: use the Poisson limit
    double k = 0, prob = std::exp(-mean), cum = prob;
    const double u = rng.uniform01();
    while (u > cum && k < n) {
      k += 1;
      prob *= mean / k;
      cum += prob;
    }
    return k;
  }
  double k = 0, cum = pk;
  const double u = rng.uniform01();
  while (u > cum && k < n) {
    pk *= (n - k) / (k + 1) * p / q;
    k += 1;
    cum += pk;
  }
  return k;
}

// Multinomial(n, p) by conditional binomials.
std::vector<double> multinomial(Rng& rng, double n, const std::vector<double>& p) {
  std::vector<double> out(p.size(), 0.0);
  double left = n, mass = 1.0;
  for (size_t e = 0; e < p.size() && left > 0; ++e) {
    if (e + 1 == p.size() || mass <= 0) {
      out[e] = left;
      break;
    }
    const double q = std::clamp(p[e] / mass, 0.0, 1.0);
    out[e] = binomial(rng, left, q);
    left -= out[e];
    mass -= p[e];
  }
  return out;
}

std::vector<double> normalized(std::vector<double> v) {
  const double s = std::accumulate(v.begin(), v.end(), 0.0);
  if (s <= 0) return std::vector<double>(v.size(), 1.0 / static_cast<double>(v.size()));
  for (double& x : v)
    x /= s;
  return v;
}

// Base popularity π of MoE layer l (normalised over the experts).
std::vector<double> base_popularity(const RoutingSpec& spec, int experts, int l, uint64_t seed) {
  Rng rng = Rng::stream(seed, "moe.popularity." + std::to_string(l));
  std::vector<double> p(experts, 1.0);
  switch (spec.kind) {
    case RoutingKind::kBalanced:
      break;
    case RoutingKind::kDirichlet:
      for (double& x : p)
        x = gamma_variate(rng, spec.alpha);
      break;
    case RoutingKind::kZipf: {
      std::vector<int> order(experts);
      std::iota(order.begin(), order.end(), 0);
      for (int i = experts - 1; i > 0; --i)
        std::swap(order[i], order[rng.uniform_below(static_cast<uint64_t>(i) + 1)]);
      for (int rank = 0; rank < experts; ++rank)
        p[order[rank]] = 1.0 / std::pow(static_cast<double>(rank + 1), spec.s);
      break;
    }
    case RoutingKind::kHistogram:
      p = spec.histogram[static_cast<size_t>(l) % spec.histogram.size()];
      break;
  }
  return normalized(std::move(p));
}

// Steps before the simulated one: drift of popularity and the aux-loss-free bias update
// (expected loads, so the decay is deterministic apart from the drift draws). Fills the
// popularity after the last step and the bias trajectory of r.
void run_bias_steps(const RoutingSpec& spec, std::vector<std::vector<double>> base, double copies,
                    uint64_t seed, RoutingResult* r) {
  const int moe_layers = r->moe_layers, experts = r->experts;
  const double mean_load = copies / experts;
  std::vector<std::vector<double>> bias(moe_layers, std::vector<double>(experts, 0.0));
  auto effective = [&](int l) {
    std::vector<double> p(experts);
    for (int e = 0; e < experts; ++e)
      p[e] = base[l][e] * std::exp(bias[l][e]);
    return normalized(std::move(p));
  };
  const int steps = std::max(spec.bias_steps, 0);
  for (int step = 0; step <= steps; ++step) {
    double traj = 0;
    for (int l = 0; l < moe_layers; ++l) {
      const std::vector<double> p = effective(l);
      std::vector<double> load(experts);
      for (int e = 0; e < experts; ++e)
        load[e] = p[e] * copies;
      traj += max_over_mean(load);
      if (step == steps) continue;
      if (spec.bias_gamma > 0) {
        for (int e = 0; e < experts; ++e) {
          const double diff = mean_load - load[e];
          bias[l][e] += spec.bias_gamma * (diff > 0 ? 1.0 : diff < 0 ? -1.0 : 0.0);
        }
      }
      if (spec.drift > 0) {
        Rng rng = Rng::stream(seed, "moe.drift." + std::to_string(l) + "." + std::to_string(step));
        for (double& x : base[l])
          x *= std::exp(rng.normal(0.0, spec.drift));
        base[l] = normalized(std::move(base[l]));
      }
    }
    if (steps > 0 || spec.bias_gamma > 0) r->bias_trajectory.push_back(traj / moe_layers);
  }
  r->popularity.resize(moe_layers);
  for (int l = 0; l < moe_layers; ++l)
    r->popularity[l] = effective(l);
}

// EPLB on the layer-averaged popularity: replicate the `redundant` hottest experts, then
// place replicas heaviest first on the least loaded rank with a free slot (distinct ranks
// for the replicas of one expert).
void place_eplb(int redundant, RoutingResult* r) {
  const int experts = r->experts, ep = r->ep, moe_layers = r->moe_layers;
  std::vector<double> avg(experts, 0.0);
  for (int l = 0; l < moe_layers; ++l)
    for (int e = 0; e < experts; ++e)
      avg[e] += r->popularity[l][e] / moe_layers;
  std::vector<int> order(experts);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return avg[a] > avg[b]; });
  std::vector<int> copies_of(experts, 1);
  for (int i = 0; i < std::min(redundant, experts); ++i)
    copies_of[order[i]] = 2;
  struct Item {
    int expert;
    double weight;
  };
  std::vector<Item> items;
  for (int e = 0; e < experts; ++e)
    for (int c = 0; c < copies_of[e]; ++c)
      items.push_back({e, avg[e] / copies_of[e]});
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.weight > b.weight; });
  std::vector<double> rank_load(ep, 0.0);
  std::vector<int> used(ep, 0);
  for (const Item& it : items) {
    int best = -1;
    for (int q = 0; q < ep; ++q) {
      if (used[q] >= r->slots_per_rank) continue;
      if (std::find(r->replicas[it.expert].begin(), r->replicas[it.expert].end(), q) !=
          r->replicas[it.expert].end())
        continue;
      if (best < 0 || rank_load[q] < rank_load[best]) best = q;
    }
    if (best < 0) {
      // Only the rank holding the other replica has a free slot left: put it there (the two
      // replicas then act as one expert with two slots' worth of capacity on that rank).
      for (int q = 0; q < ep; ++q)
        if (used[q] < r->slots_per_rank && (best < 0 || rank_load[q] < rank_load[best])) best = q;
    }
    FLEETSIM_ASSERT(best >= 0);  // ep · slots_per_rank ≥ experts + redundant
    r->replicas[it.expert].push_back(best);
    rank_load[best] += it.weight;
    used[best]++;
  }
}

// Placement: expert slots per rank, replicas per expert.
void place_experts(const RoutingSpec& spec, RoutingResult* r) {
  const int experts = r->experts, ep = r->ep;
  const int per_rank = experts / ep;
  const int redundant =
      spec.placement == Placement::kEplb ? std::max(0, spec.redundant_experts) : 0;
  r->slots_per_rank = per_rank + (redundant + ep - 1) / ep;
  r->replicas.assign(experts, {});
  if (spec.placement == Placement::kContiguous) {
    for (int e = 0; e < experts; ++e)
      r->replicas[e] = {e / per_rank};
  } else if (spec.placement == Placement::kRoundRobin) {
    for (int e = 0; e < experts; ++e)
      r->replicas[e] = {e % ep};
  } else {
    place_eplb(redundant, r);
  }
}

// Loads of MoE layer l in micro-batch mb: copies drawn from the popularity, capacity drops,
// then per EP rank (split evenly between an expert's replicas).
LayerLoad route_micro_batch(const RoutingSpec& spec, const RoutingResult& r, int l, int mb,
                            double copies, double capacity, uint64_t seed) {
  const double mean_load = copies / r.experts;
  LayerLoad ld;
  ld.total = copies;
  if (spec.kind == RoutingKind::kBalanced && spec.drift <= 0) {
    ld.expert.assign(r.experts, mean_load);
  } else {
    Rng rng = Rng::stream(seed, "moe.route." + std::to_string(l) + "." + std::to_string(mb));
    ld.expert = multinomial(rng, std::round(copies), r.popularity[l]);
  }
  if (capacity > 0) {
    for (double& x : ld.expert) {
      if (x > capacity) {
        ld.dropped += x - capacity;
        x = capacity;
      }
    }
  }
  ld.rank.assign(r.ep, 0.0);
  for (int e = 0; e < r.experts; ++e) {
    const auto& reps = r.replicas[e];
    for (int q : reps)
      ld.rank[q] += ld.expert[e] / static_cast<double>(reps.size());
  }
  return ld;
}

}  // namespace

RoutingResult route_tokens(const RoutingSpec& spec, int experts, int top_k, int ep, int moe_layers,
                           int micro_batches, double tokens_per_rank, uint64_t seed) {
  FLEETSIM_ASSERT(experts > 0 && top_k > 0 && ep > 0 && experts % ep == 0);
  RoutingResult r;
  r.moe_layers = moe_layers;
  r.micro_batches = micro_batches;
  r.experts = experts;
  r.ep = ep;
  const double copies = tokens_per_rank * ep * top_k;  // token copies per layer per micro-batch
  const double mean_load = copies / experts;
  std::vector<std::vector<double>> base(moe_layers);
  for (int l = 0; l < moe_layers; ++l)
    base[l] = base_popularity(spec, experts, l, seed);
  run_bias_steps(spec, std::move(base), copies, seed, &r);
  place_experts(spec, &r);
  // Loads per layer and micro-batch.
  const double capacity =
      spec.capacity_factor > 0 ? std::ceil(spec.capacity_factor * mean_load) : 0.0;
  r.loads.assign(moe_layers, std::vector<LayerLoad>(micro_batches));
  for (int l = 0; l < moe_layers; ++l)
    for (int mb = 0; mb < micro_batches; ++mb)
      r.loads[l][mb] = route_micro_batch(spec, r, l, mb, copies, capacity, seed);
  return r;
}

}  // namespace fleetsim
