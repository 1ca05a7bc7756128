// Seeded random streams with distributions of our own, so results never depend on the standard
// library's distribution implementations (which differ between libstdc++ and libc++).
//
// Generator: xoshiro256** (Blackman & Vigna, 2018), seeded through SplitMix64. Each component
// derives its own stream from the scenario seed and a stable name (FNV-1a hash), so adding a
// component never shifts another component's numbers.
#pragma once

#include <cstdint>
#include <string_view>

namespace fleetsim {

class Rng {
 public:
  explicit Rng(uint64_t seed);
  // Stream for a named component: same (seed, name) → same sequence on every platform.
  static Rng stream(uint64_t seed, std::string_view component);

  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  // Uniform integer in [0, n) without modulo bias (Lemire's method); n > 0.
  uint64_t uniform_below(uint64_t n);
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Exponential with the given mean (inverse transform).
  double exponential(double mean);
  // Normal via Box–Muller (the spare value is cached).
  double normal(double mean, double stddev);
  double lognormal(double mu, double sigma);
  // Weibull with shape k and scale lambda (inverse transform).
  double weibull(double shape, double scale);
  bool bernoulli(double p) { return uniform01() < p; }

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

uint64_t fnv1a64(std::string_view text);
uint64_t splitmix64(uint64_t* state);

}  // namespace fleetsim
