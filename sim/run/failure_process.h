// Arrivals of one failure class over all its units (GPUs, nodes, domains or the job).
//
// Units start new at t = 0. While n units are still on their first life, the first failure
// among them is the minimum of n Weibull(k, λ) lives conditioned on survival to t0, drawn by
// inverse transform: t = λ · ((t0/λ)^k + E/n)^(1/k), E ~ Exp(1). A failed unit is replaced by a
// new one whose next failure is t + Weibull(k, λ). With k = 1 this is a Poisson process of rate
// n/λ. λ = mean life / Γ(1 + 1/k), the mean life being 1 / rate.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace fleetsim {

class FailureProcess {
 public:
  FailureProcess() = default;
  FailureProcess(int64_t units, double rate_per_hour, double shape, Rng* rng);
  // Time (seconds) of the next failure; +inf when the rate is 0.
  double next_s() const { return next_s_; }
  // Consumes the next failure at next_s() and draws the following one; returns the unit index.
  int64_t fire(Rng* rng);

 private:
  void draw_fresh(double t0, Rng* rng);
  void update_next();
  int64_t units_ = 0;
  int64_t fresh_ = 0;
  double shape_ = 1, scale_s_ = 0;
  double fresh_next_s_ = 0;
  std::vector<double> renewed_next_s_;  // units on a later life (Weibull only)
  std::vector<int64_t> renewed_unit_;
  double next_s_ = 0;
};

}  // namespace fleetsim
