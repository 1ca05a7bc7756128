// Least-squares fits behind the kernel-time model (Eigen stays in fit.cpp).
//
// GEMM time curve (per table GPU and dtype), linear in its coefficients c ≥ 0:
//   t_us = c0·b·m·n·k/1e6 + c1·b·n·k/1e3 + c2·b·m·k/1e3 + c3·b·m·n/1e3 + c4 + c5·k·waves/1e3
// — a roofline-like sum of tensor-core work (mnk), operand / result traffic (nk, mk, mn), a fixed
// launch + prologue time, and the serial k-loop of each wave of output tiles (waves =
// ceil(b·ceil(m/128)·ceil(n/128) / SMs); 128×128 is the CUTLASS / cuBLAS SM90-SM100 default CTA
// tile). Fitted by relative-error least squares (each row divided by its measured time);
// coefficients that come out negative are removed and the rest refitted, so time grows with
// every dimension. Efficiency = FLOPs / (peak · t) is then bounded by the caller (t ≥ FLOPs/peak).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace fleetsim {

struct GemmSample {
  double m = 0, n = 0, k = 0, batch = 1;
  double time_us = 0;
};

struct GemmCurve {
  std::array<double, 6> c{};
  int sm_count = 132;
  double time_us(double m, double n, double k, double batch) const;
};

GemmCurve fit_gemm_curve(const std::vector<GemmSample>& samples, int sm_count);
// Mean absolute percentage error (%) of `curve` on `samples`.
double gemm_curve_mape(const GemmCurve& curve, const std::vector<GemmSample>& samples);

// Ordinary least squares: minimises |X·c − y|² for row-major X (rows × cols). Columns listed in
// `nonneg` are constrained ≥ 0 by dropping negative ones and refitting (they end at 0). A column
// the samples make a linear combination of earlier columns is left at 0 (order = priority), so
// the fit does not extrapolate along directions the data never varied in.
std::vector<double> least_squares(const std::vector<double>& x_row_major, int rows, int cols,
                                  const std::vector<double>& y, const std::vector<int>& nonneg);

}  // namespace fleetsim
