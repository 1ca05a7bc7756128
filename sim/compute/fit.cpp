// Least-squares fitting with Eigen (column-pivoting QR), used by the kernel-time model.
#include "compute/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace fleetsim {

namespace {

std::array<double, 6> gemm_features(double m, double n, double k, double b, int sms) {
  const double tiles = b * std::ceil(m / 128.0) * std::ceil(n / 128.0);
  const double waves = std::ceil(tiles / static_cast<double>(sms));
  return {b * m * n * k / 1e6, b * n * k / 1e3, b * m * k / 1e3, b * m * n / 1e3, 1.0,
          k * waves / 1e3};
}

}  // namespace

std::vector<double> least_squares(const std::vector<double>& x_row_major, int rows, int cols,
                                  const std::vector<double>& y, const std::vector<int>& nonneg) {
  std::vector<bool> active(static_cast<size_t>(cols), true);
  // Columns the data cannot tell apart from earlier ones (numerically a linear combination of
  // them: Gram-Schmidt residual below 1e-8 of the column's norm) stay at 0, so the fit never
  // extrapolates along a direction the samples do not vary in.
  {
    std::vector<Eigen::VectorXd> basis;
    for (int j = 0; j < cols; ++j) {
      Eigen::VectorXd v(rows);
      for (int i = 0; i < rows; ++i)
        v(i) = x_row_major[static_cast<size_t>(i * cols + j)];
      const double norm = v.norm();
      for (const auto& q : basis)
        v -= q.dot(v) * q;
      if (norm <= 0 || v.norm() <= 1e-8 * norm) {
        active[static_cast<size_t>(j)] = false;
      } else {
        basis.push_back(v / v.norm());
      }
    }
  }
  std::vector<double> coef(static_cast<size_t>(cols), 0.0);
  for (int iter = 0; iter <= cols; ++iter) {
    std::vector<int> idx;
    for (int j = 0; j < cols; ++j)
      if (active[static_cast<size_t>(j)]) idx.push_back(j);
    if (idx.empty()) break;
    Eigen::MatrixXd a(rows, static_cast<int>(idx.size()));
    Eigen::VectorXd rhs(rows);
    for (int i = 0; i < rows; ++i) {
      rhs(i) = y[static_cast<size_t>(i)];
      for (size_t j = 0; j < idx.size(); ++j)
        a(i, static_cast<int>(j)) = x_row_major[static_cast<size_t>(i * cols + idx[j])];
    }
    const Eigen::VectorXd sol = a.colPivHouseholderQr().solve(rhs);
    std::fill(coef.begin(), coef.end(), 0.0);
    bool dropped = false;
    for (size_t j = 0; j < idx.size(); ++j)
      coef[static_cast<size_t>(idx[j])] = sol(static_cast<int>(j));
    for (int j : nonneg) {
      if (active[static_cast<size_t>(j)] && coef[static_cast<size_t>(j)] < 0.0) {
        active[static_cast<size_t>(j)] = false;
        dropped = true;
      }
    }
    if (!dropped) return coef;
  }
  for (int j : nonneg)
    coef[static_cast<size_t>(j)] = std::max(0.0, coef[static_cast<size_t>(j)]);
  return coef;
}

double GemmCurve::time_us(double m, double n, double k, double batch) const {
  const auto f = gemm_features(m, n, k, batch, sm_count);
  double t = 0;
  for (size_t i = 0; i < f.size(); ++i)
    t += c[i] * f[i];
  return t;
}

GemmCurve fit_gemm_curve(const std::vector<GemmSample>& samples, int sm_count) {
  GemmCurve curve;
  curve.sm_count = sm_count;
  const int rows = static_cast<int>(samples.size());
  std::vector<double> x(static_cast<size_t>(rows) * 6);
  std::vector<double> y(static_cast<size_t>(rows), 1.0);
  for (int i = 0; i < rows; ++i) {
    const GemmSample& s = samples[static_cast<size_t>(i)];
    const auto f = gemm_features(s.m, s.n, s.k, s.batch, sm_count);
    for (int j = 0; j < 6; ++j)
      x[static_cast<size_t>(i * 6 + j)] = f[static_cast<size_t>(j)] / s.time_us;
  }
  const auto c = least_squares(x, rows, 6, y, {0, 1, 2, 3, 4, 5});
  for (int j = 0; j < 6; ++j)
    curve.c[static_cast<size_t>(j)] = c[static_cast<size_t>(j)];
  return curve;
}

double gemm_curve_mape(const GemmCurve& curve, const std::vector<GemmSample>& samples) {
  if (samples.empty()) return 0.0;
  double sum = 0;
  for (const GemmSample& s : samples)
    sum += std::abs(curve.time_us(s.m, s.n, s.k, s.batch) - s.time_us) / s.time_us;
  return 100.0 * sum / static_cast<double>(samples.size());
}

}  // namespace fleetsim
