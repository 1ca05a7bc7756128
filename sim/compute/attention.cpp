// Fused attention model (flash / cuDNN SDPA): a logit-linear efficiency fit on the cuDNN tables
// with a Shepard-weighted residual correction that makes it exact at measured shapes.
// Sources: calibration/KERNELS.md.
#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

namespace {

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

const char* attn_dtype(DType d) {
  switch (d) {
    case DType::kFp8:
      return "fp8";
    case DType::kMxfp8:
      return "mxfp8";
    case DType::kNvfp4:
      return "fp8";
    default:
      return "bf16";
  }
}

// The cuDNN rows of `kernel` that serve dtype d on `gpu`: its own, else a sibling's; for mxfp8
// the fp8 rows when no GPU has mxfp8 ones. *used_gpu, *used_dt: the GPU and dtype they are of.
std::vector<const KernelRow*> attention_rows(const std::vector<KernelRow>& rows,
                                             const std::string& gpu, DType d,
                                             const std::string& kernel, std::string* used_gpu,
                                             std::string* used_dt) {
  std::vector<std::string> cand = {gpu};
  for (const auto& s : siblings(gpu))
    cand.push_back(s);
  std::vector<std::string> dts = {attn_dtype(d)};
  if (d == DType::kMxfp8) dts.push_back("fp8");
  std::vector<const KernelRow*> sel;
  for (const auto& dt : dts)
    for (const auto& g : cand) {
      if (!sel.empty()) break;
      for (const auto& r : rows)
        if (r.gpu == g && r.dtype == dt && r.kernel == kernel && r.impl == "cudnn")
          sel.push_back(&r);
      if (!sel.empty()) *used_gpu = g, *used_dt = dt;
    }
  return sel;
}

// Fits s (ceiling_tflops set) to the rows `sel`: the logit-linear coefficients (fewer features
// when there are few rows), the Shepard residual points and the fit's MAPE.
void fit_attention(const std::vector<const KernelRow*>& sel, bool bwd, AttnSet& s) {
  const int rows = static_cast<int>(sel.size());
  const int cols = rows >= 10 ? 5 : rows >= 3 ? 2 : 1;
  std::vector<double> x, y;
  for (const KernelRow* r : sel) {
    const double pairs = attn_pairs(r->seq_q, r->seq_kv, r->causal, r->window);
    const auto f = attn_features(r->batch, r->heads, r->seq_q, pairs,
                                 r->head_dim_qk + r->head_dim_v, r->causal);
    for (int j = 0; j < cols; ++j)
      x.push_back(f[static_cast<size_t>(j)]);
    const double e = std::clamp(r->tflops / s.ceiling_tflops, 1e-4, 0.999);
    y.push_back(std::log(e / (1 - e)));
  }
  s.coef = least_squares(x, rows, cols, y, {});
  double err = 0;
  for (const KernelRow* r : sel) {
    const double pairs = attn_pairs(r->seq_q, r->seq_kv, r->causal, r->window);
    const double dsum = r->head_dim_qk + r->head_dim_v;
    const double flops = 2.0 * r->batch * r->heads * pairs * dsum * (bwd ? 2.5 : 1.0);
    const double t_fit =
        flops /
        (attn_fit_tflops(s, attn_features(r->batch, r->heads, r->seq_q, pairs, dsum, r->causal)) *
         1e12) *
        1e6;
    err += std::abs(t_fit - r->time_us) / r->time_us;
    s.points.push_back({attn_z(r->batch, r->heads, r->kv_heads, r->seq_q, pairs, dsum, r->causal),
                        std::log(r->time_us / t_fit)});
  }
  s.mape = 100.0 * err / rows;
  s.ok = true;
}

}  // namespace

void ComputeModel::Impl::load_attention(const GpuSpec& gpu, const KernelTables& t,
                                        ComputeModel& cm) {
  std::string unscaled_from;  // a sibling whose rows are used without a measured conversion
  for (DType d : {DType::kFp32, DType::kBf16, DType::kFp8, DType::kMxfp8, DType::kNvfp4}) {
    for (int bwd = 0; bwd < 2; ++bwd) {
      const std::string kernel = bwd ? "attention_bwd" : "attention_fwd";
      std::string used_gpu, used_dt;
      const std::vector<const KernelRow*> sel =
          attention_rows(t.attn, gpu.model, d, kernel, &used_gpu, &used_dt);
      if (sel.empty()) continue;
      AttnSet& s = attn[di(d)][bwd];
      double scale = 1.0;
      if (used_gpu != gpu.model) {
        scale = mamf_ratio(t.gemm, gpu.model, used_gpu);
        if (scale <= 0) {
          // No measured rate on both GPUs to convert with (B300 <- GB300: GB300 has no MAMF).
          scale = 1.0;
          unscaled_from = used_gpu;
        }
      }
      attn_scale[di(d)] = scale;
      s.ceiling_tflops = peak[di(d)] / scale;
      fit_attention(sel, bwd != 0, s);
      const int rows = static_cast<int>(sel.size());
      if (d == DType::kBf16 || d == DType::kFp8 || d == DType::kMxfp8)
        reports.push_back(
            {"attention " + used_gpu + " " + used_dt + " " + kernel + " (cudnn)", rows, s.mape});
      if (d == DType::kBf16 || used_gpu != gpu.model || used_dt != attn_dtype(d))
        cm.sources_.push_back("attention " + std::string(to_string(d)) + " " + kernel + ": " +
                              std::to_string(rows) + " cuDNN rows of " + used_gpu + " " + used_dt +
                              (scale != 1.0 ? " scaled by MAMF ratio " + fmt(scale, 4) : "") +
                              ", " + t.attn_file);
    }
  }
  if (!unscaled_from.empty()) {
    const std::string w = gpu.model + ": no attention rows of its own; uses " + unscaled_from +
                          "'s cuDNN rows unscaled (no measured rate on both GPUs; fallback)";
    cm.sources_.push_back("attention: " + w);
    cm.warnings_.push_back(w);
  }
  bool any_attn = false;
  for (const auto& a : attn)
    any_attn = any_attn || a[0].ok;
  if (!any_attn)
    cm.warnings_.push_back(gpu.model + ": no attention table; attention = FLOPs / (" +
                           fmt(kDefaultAttnEff, 2) + " x datasheet peak)");
}

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
