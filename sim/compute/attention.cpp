// Fused attention model (flash / cuDNN SDPA): a logit-linear efficiency fit on the cuDNN tables
// with a Shepard-weighted residual correction that makes it exact at measured shapes.
// Sources: calibration/KERNELS.md.
#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

namespace compute_internal {

double attn_pairs(double s_q, double s_kv, bool causal, double window) {
  if (causal) {
    if (window > 0 && window < s_kv) return s_q * window - window * window / 2.0;
    return s_q * s_kv / 2.0;
  }
  if (window > 0 && window < s_kv) return s_q * window;
  return s_q * s_kv;
}

std::array<double, 5> attn_features(double b, double h, double s_q, double pairs, double d_sum,
                                    bool causal) {
  return {1.0, std::log(std::max(1.0, pairs / s_q)), std::log(b * h * s_q), std::log(d_sum),
          causal ? 1.0 : 0.0};
}

std::array<double, 5> attn_z(double b, double h, double kvh, double s_q, double pairs, double d_sum,
                             bool causal) {
  return {std::log2(std::max(1.0, pairs / s_q)), std::log2(b * h * s_q), std::log2(d_sum),
          causal ? 2.0 : 0.0, std::log2(std::max(1.0, h / std::max(1.0, kvh)))};
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

double attn_fit_tflops(const AttnSet& s, const std::array<double, 5>& f) {
  double y = 0;
  for (size_t j = 0; j < s.coef.size(); ++j)
    y += s.coef[j] * f[j];
  return s.ceiling_tflops * sigmoid(y);
}

double shepard(const AttnSet& s, const std::array<double, 5>& z) {
  constexpr double kPriorWeight = 1.0;  // equal to one point at 1 octave
  double wsum = 0, acc = 0, exact_sum = 0;
  int exact = 0;
  for (const AttnPoint& p : s.points) {
    double d2 = 0;
    for (size_t j = 0; j < z.size(); ++j)
      d2 += (z[j] - p.z[j]) * (z[j] - p.z[j]);
    if (d2 < 1e-18) {
      exact_sum += p.resid;
      ++exact;
      continue;
    }
    const double w = 1.0 / (d2 * d2);
    wsum += w;
    acc += w * p.resid;
  }
  if (exact > 0) return exact_sum / exact;
  return acc / (kPriorWeight + wsum);
}

}  // namespace compute_internal

Time ComputeModel::attention(const AttentionShape& s, bool backward, DType dtype) const {
  if (s.batch <= 0 || s.seq_q <= 0 || s.heads <= 0 || s.head_dim_qk <= 0) return Time::zero();
  const Impl& im = *impl_;
  const double s_kv = static_cast<double>(s.seq_kv > 0 ? s.seq_kv : s.seq_q);
  const double s_q = static_cast<double>(s.seq_q);
  const double b = static_cast<double>(s.batch), h = s.heads;
  const double dsum = s.head_dim_qk + (s.head_dim_v > 0 ? s.head_dim_v : s.head_dim_qk);
  const double pairs = attn_pairs(s_q, s_kv, s.causal, s.window);
  const double flops = 2.0 * b * h * pairs * dsum * (backward ? 2.5 : 1.0);
  const double peak = im.peak[di(dtype)];
  const AttnSet& set = im.attn[di(dtype)][backward ? 1 : 0];
  double t_us;
  if (!set.ok) {
    t_us = flops / (kDefaultAttnEff * peak * 1e12) * 1e6;
  } else {
    const double tf = attn_fit_tflops(set, attn_features(b, h, s_q, pairs, dsum, s.causal)) *
                      im.attn_scale[di(dtype)];
    const double corr =
        shepard(set, attn_z(b, h, s.kv_heads > 0 ? s.kv_heads : h, s_q, pairs, dsum, s.causal));
    t_us = flops / (tf * 1e12) * 1e6 * std::exp(corr);
  }
  t_us = std::max({t_us, flops / (peak * 1e12) * 1e6, im.floor_us});
  return us_to_time(t_us);
}

}  // namespace fleetsim
