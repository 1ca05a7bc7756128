// Failure arrivals of one class over its units (failure_process.h): Weibull lives by inverse
// transform, conditioned on survival to the current time; a failed unit is replaced by a new one.
#include "run/failure_process.h"

#include <cmath>
#include <limits>

namespace fleetsim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

FailureProcess::FailureProcess(int64_t units, double rate_per_hour, double shape, Rng* rng)
    : units_(units), fresh_(units), shape_(shape) {
  if (units <= 0 || rate_per_hour <= 0) {
    next_s_ = fresh_next_s_ = kInf;
    return;
  }
  const double mean_s = 3600.0 / rate_per_hour;
  scale_s_ = mean_s / std::tgamma(1.0 + 1.0 / shape_);
  draw_fresh(0.0, rng);
  update_next();
}

void FailureProcess::draw_fresh(double t0, Rng* rng) {
  if (fresh_ <= 0) {
    fresh_next_s_ = kInf;
    return;
  }
  const double e = rng->exponential(1.0);
  if (shape_ == 1.0) {
    fresh_next_s_ = t0 + scale_s_ * e / static_cast<double>(fresh_);
    return;
  }
  const double h0 = std::pow(t0 / scale_s_, shape_);
  fresh_next_s_ = scale_s_ * std::pow(h0 + e / static_cast<double>(fresh_), 1.0 / shape_);
}

void FailureProcess::update_next() {
  next_s_ = fresh_next_s_;
  for (double r : renewed_next_s_)
    next_s_ = std::min(next_s_, r);
}

int64_t FailureProcess::fire(Rng* rng) {
  const double t = next_s_;
  int64_t unit = 0;
  if (shape_ == 1.0) {
    // Memoryless: every unit is alike; the replaced unit stays in the pool.
    unit = static_cast<int64_t>(rng->uniform_below(static_cast<uint64_t>(units_)));
    draw_fresh(t, rng);
    update_next();
    return unit;
  }
  size_t which = renewed_next_s_.size();
  for (size_t i = 0; i < renewed_next_s_.size(); ++i) {
    if (renewed_next_s_[i] == t && fresh_next_s_ != t) {
      which = i;
      break;
    }
  }
  if (which < renewed_next_s_.size()) {
    unit = renewed_unit_[which];
    renewed_next_s_[which] = t + rng->weibull(shape_, scale_s_);
  } else {
    // One of the units on their first life; which one is uniform among them (the renewed
    // units are numbered from the top so indices stay distinct).
    unit = static_cast<int64_t>(rng->uniform_below(static_cast<uint64_t>(fresh_)));
    --fresh_;
    renewed_unit_.push_back(units_ - 1 - static_cast<int64_t>(renewed_unit_.size()));
    renewed_next_s_.push_back(t + rng->weibull(shape_, scale_s_));
    draw_fresh(t, rng);
  }
  update_next();
  return unit;
}

}  // namespace fleetsim
