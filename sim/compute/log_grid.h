// Log-space GEMM grids (internal to sim/compute): ln(time_us) on a full grid over
// log2(batch, m, n, k), as the published XLA tables (gemm.cpp) and a calibration set's measured
// GEMMs (import.cpp) hold them. Inside the grid box ln t is interpolated multilinearly (exact at
// grid points); outside it a base model is anchored to the grid at the nearest box point, the
// correction fading as 1 / (1 + log2 distance). Header-only: the interpolation sits on the
// GEMM query path. Complexity O(axis length) per query.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace fleetsim::compute_internal {

using GridAxes = std::array<std::vector<double>, 4>;  // log2 of batch, m, n, k; ascending

// Sorts each axis and removes repeated values.
inline void sort_unique_axes(GridAxes* axes) {
  for (auto& ax : *axes) {
    std::sort(ax.begin(), ax.end());
    ax.erase(std::unique(ax.begin(), ax.end()), ax.end());
  }
}

// Flat row-major index of the grid point x (log2 batch, m, n, k; each value on its axis).
inline size_t grid_index(const GridAxes& axes, const std::array<double, 4>& x) {
  size_t idx = 0;
  for (size_t a = 0; a < 4; ++a) {
    const auto& ax = axes[a];
    idx = idx * ax.size() +
          static_cast<size_t>(std::lower_bound(ax.begin(), ax.end(), x[a]) - ax.begin());
  }
  return idx;
}

// Multilinear interpolation of ln t at *x, which is clamped into the box in place; *dist = the
// L1 log2 distance the clamp moved it.
inline double interp_log_grid(const GridAxes& axes, const std::vector<double>& log_t,
                              std::array<double, 4>* x, double* dist) {
  std::array<size_t, 4> lo{};
  std::array<double, 4> f{};
  double d = 0;
  for (size_t a = 0; a < 4; ++a) {
    const auto& ax = axes[a];
    double& xa = (*x)[a];
    const double xc = std::clamp(xa, ax.front(), ax.back());
    d += std::abs(xa - xc);
    xa = xc;
    size_t i = 0;
    while (i + 2 < ax.size() && xa > ax[i + 1])
      ++i;
    lo[a] = i;
    f[a] = ax.size() < 2 ? 0.0 : (xa - ax[i]) / (ax[i + 1] - ax[i]);
  }
  double acc = 0;
  for (int corner = 0; corner < 16; ++corner) {
    double w = 1;
    size_t idx = 0;
    for (size_t a = 0; a < 4; ++a) {
      const bool hi = (corner >> a) & 1;
      if (hi && axes[a].size() < 2) {
        w = 0;
        break;
      }
      idx = idx * axes[a].size() + lo[a] + (hi ? 1 : 0);
      w *= hi ? f[a] : 1.0 - f[a];
    }
    if (w != 0) acc += w * log_t[idx];
  }
  *dist = d;
  return acc;
}

// Inside the box: the interpolated grid. Outside: base(m, n, k, batch) (microseconds) times the
// grid / base ratio at the nearest box point, faded by the log2 distance.
template <class Base>
double anchored_time_us(const GridAxes& axes, const std::vector<double>& log_t, double m, double n,
                        double k, double batch, const Base& base) {
  std::array<double, 4> x = {std::log2(batch), std::log2(m), std::log2(n), std::log2(k)};
  double dist = 0;
  const double lt = interp_log_grid(axes, log_t, &x, &dist);
  if (dist == 0) return std::exp(lt);
  const double at_edge = base(std::exp2(x[1]), std::exp2(x[2]), std::exp2(x[3]), std::exp2(x[0]));
  const double corr = lt - std::log(std::max(1e-3, at_edge));
  return std::max(1e-3, base(m, n, k, batch)) * std::exp(corr / (1.0 + dist));
}

}  // namespace fleetsim::compute_internal
