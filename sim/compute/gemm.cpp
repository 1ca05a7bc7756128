// GEMM model: XLA per-shape grids interpolated in log space, the fitted roofline-like curve
// (compute/fit.h) outside them, dtype derivations (fp8 from bf16 on Hopper, mxfp8 / nvfp4 from
// fp8), and the datasheet / measured-rate bounds. Sources: calibration/KERNELS.md.
#include "compute/model_internal.h"

#include "core/error.h"

namespace fleetsim {

using namespace compute_internal;

namespace compute_internal {

// SM counts of the GPUs the XLA grids were measured on (hardware-specs.md §4: B200 148 [AO-4002],
// H100 132 [MLE-ACC]); used by the wave term of the GEMM curve.
int table_sm_count(const std::string& table_gpu) {
  return table_gpu == "H100" ? 132 : 148;
}

GemmGrid build_grid(const std::vector<KernelRow>& rows, const std::string& gpu,
                    const std::string& dtype, const std::string& file) {
  GemmGrid g;
  std::vector<const KernelRow*> sel;
  for (const auto& r : rows)
    if (r.gpu == gpu && r.dtype == dtype && r.impl == "xla") sel.push_back(&r);
  if (sel.empty()) return g;
  std::array<std::vector<double>, 4> vals;
  for (const KernelRow* r : sel) {
    const double v[4] = {std::max(1.0, r->batch), r->m, r->n, r->k};
    for (int a = 0; a < 4; ++a) {
      if (v[a] <= 0)
        throw InputError(file, "line " + std::to_string(r->line),
                         "expected positive batch, m, n, k for an xla GEMM row");
      vals[a].push_back(std::log2(v[a]));
    }
  }
  for (int a = 0; a < 4; ++a) {
    std::sort(vals[a].begin(), vals[a].end());
    vals[a].erase(std::unique(vals[a].begin(), vals[a].end()), vals[a].end());
    g.axes[a] = vals[a];
  }
  const size_t total = g.axes[0].size() * g.axes[1].size() * g.axes[2].size() * g.axes[3].size();
  g.log_t.assign(total, std::nan(""));
  std::vector<GemmSample> samples;
  for (const KernelRow* r : sel) {
    std::array<size_t, 4> idx{};
    const double v[4] = {std::log2(std::max(1.0, r->batch)), std::log2(r->m), std::log2(r->n),
                         std::log2(r->k)};
    for (int a = 0; a < 4; ++a)
      idx[a] = static_cast<size_t>(std::lower_bound(g.axes[a].begin(), g.axes[a].end(), v[a]) -
                                   g.axes[a].begin());
    if (!std::isnan(g.log_t[g.index(idx)]))
      throw InputError(file, "line " + std::to_string(r->line),
                       "duplicate xla GEMM shape for " + gpu + " " + dtype);
    g.log_t[g.index(idx)] = std::log(r->time_us);
    samples.push_back({r->m, r->n, r->k, std::max(1.0, r->batch), r->time_us});
  }
  for (double v : g.log_t)
    if (std::isnan(v))
      throw InputError(file, "gpu " + gpu + " dtype " + dtype,
                       "xla GEMM rows must form a full grid over batch x m x n x k; " +
                           std::to_string(sel.size()) + " rows for " + std::to_string(total) +
                           " grid points");
  g.curve = fit_gemm_curve(samples, table_sm_count(gpu));
  g.mape = gemm_curve_mape(g.curve, samples);
  g.rows = static_cast<int>(samples.size());
  g.ok = true;
  return g;
}

}  // namespace compute_internal

double ComputeModel::Impl::gemm_table_time(int64_t m, int64_t n, int64_t k, DType d,
                                           int64_t b) const {
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k),
               B = static_cast<double>(b);
  const double w = large_bf16 == 1.0 && large_fp8 == 1.0
                       ? 0.0
                       : std::min(1.0, grid[1].above_box(M, N, K, B) / kLargeOctaves);
  auto bf16 = [&]() { return grid[1].time_us(M, N, K, B) * (1.0 + (large_bf16 - 1.0) * w); };
  auto fp8 = [&]() {
    if (grid[2].ok) return grid[2].time_us(M, N, K, B) * (1.0 + (large_fp8 - 1.0) * w);
    const double ref = ref_bf16.time_us(M, N, K, B) / ref_fp8.time_us(M, N, K, B);
    return bf16() / std::clamp(ref, 1.0, fp8_over_bf16_cap);
  };
  switch (d) {
    case DType::kFp32:
      return grid[0].ok ? grid[0].time_us(M, N, K, B) : 2.0 * bf16();
    case DType::kBf16:
      return bf16();
    case DType::kFp8:
      return fp8();
    case DType::kMxfp8:
      return fp8() * mxfp8_over_fp8;
    case DType::kNvfp4: {
      if (nvfp4_over_fp8 > 0) return fp8() * nvfp4_over_fp8;
      if (nvfp4_speedup.empty()) return fp8();
      const double lm = std::log2(M);
      double s = nvfp4_speedup.front().second;
      if (lm >= nvfp4_speedup.back().first) {
        s = nvfp4_speedup.back().second;
      } else if (lm > nvfp4_speedup.front().first) {
        size_t i = 1;
        while (nvfp4_speedup[i].first < lm)
          ++i;
        const auto& [x0, y0] = nvfp4_speedup[i - 1];
        const auto& [x1, y1] = nvfp4_speedup[i];
        s = std::exp(std::log(y0) + (lm - x0) / (x1 - x0) * (std::log(y1) - std::log(y0)));
      }
      return bf16() / s;
    }
  }
  return bf16();
}

Time ComputeModel::gemm(int64_t m, int64_t n, int64_t k, DType dtype, int64_t batch) const {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return Time::zero();
  const Impl& im = *impl_;
  const double flops = 2.0 * static_cast<double>(batch) * static_cast<double>(m) *
                       static_cast<double>(n) * static_cast<double>(k);
  const double peak = im.peak[di(dtype)] * 1e12;
  auto base_us = [&](double bm, double bn, double bk, double bb) {
    return im.no_tables ? 2.0 * bb * bm * bn * bk / (kDefaultGemmEff * peak) * 1e6 + kDefaultFloorUs
                        : im.gemm_table_time(static_cast<int64_t>(std::llround(bm)),
                                             static_cast<int64_t>(std::llround(bn)),
                                             static_cast<int64_t>(std::llround(bk)), dtype,
                                             static_cast<int64_t>(std::llround(bb))) /
                              im.gemm_scale;
  };
  const compute_internal::MeasuredGemm& mg = im.measured[di(dtype)];
  double t_us = mg.ok() ? mg.time_us(static_cast<double>(m), static_cast<double>(n),
                                     static_cast<double>(k), static_cast<double>(batch), base_us)
                        : base_us(static_cast<double>(m), static_cast<double>(n),
                                  static_cast<double>(k), static_cast<double>(batch));
  if (dtype == DType::kMxfp8 && mg.ok() && im.mxfp8_borrows_fp8) t_us *= im.mxfp8_over_fp8;
  const double in_b = dtype_bytes(dtype), out_b = dtype == DType::kFp32 ? 4.0 : 2.0;
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double bytes = static_cast<double>(batch) * ((M * K + K * N) * in_b + M * N * out_b);
  t_us = std::max({t_us, flops / peak * 1e6, bytes / im.hbm_Bps * 1e6});
  if (im.mamf_cap[di(dtype)] > 0)
    t_us = std::max(t_us, flops / (im.mamf_cap[di(dtype)] * 1e12) * 1e6);
  return us_to_time(t_us);
}

}  // namespace fleetsim
