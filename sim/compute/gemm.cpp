// GEMM model: XLA per-shape grids interpolated in log space, the fitted roofline-like curve
// (compute/fit.h) outside them, dtype derivations (fp8 from bf16 on Hopper, mxfp8 / nvfp4 from
// fp8), and the datasheet / measured-rate bounds. Sources: calibration/KERNELS.md.
#include <map>

#include "compute/model_internal.h"
#include "core/error.h"

namespace fleetsim {

using namespace compute_internal;

namespace {

// SM counts of the GPUs the XLA grids were measured on (hardware-specs.md §4: B200 148 [AO-4002],
// H100 132 [MLE-ACC]); used by the wave term of the GEMM curve.
int table_sm_count(const std::string& table_gpu) {
  return table_gpu == "H100" ? 132 : 148;
}

const char* grid_dtype(int slot) {
  return slot == 0 ? "fp32" : slot == 1 ? "bf16" : "fp8";
}

// Transformer Engine's benchmark_gemm.py: one layer's 12 GEMMs timed pre-quantized on `gpu`.
bool is_te_layer(const KernelRow& r, const std::string& gpu) {
  return r.gpu == gpu && r.kernel == "gemm_layer" && r.impl == "te_prequant";
}
// Its time in dtype `dt` (us; 0 = not measured).
double te_layer_us(const std::vector<KernelRow>& rows, const std::string& gpu, const char* dt) {
  for (const auto& r : rows)
    if (is_te_layer(r, gpu) && r.dtype == dt) return r.time_us;
  return 0.0;
}
// Its row (the last one of `gpu`: all share the layer's shape).
const KernelRow* te_layer_row(const std::vector<KernelRow>& rows, const std::string& gpu) {
  const KernelRow* lr = nullptr;
  for (const auto& r : rows)
    if (is_te_layer(r, gpu)) lr = &r;
  return lr;
}

}  // namespace

namespace compute_internal {

GemmGrid build_grid(const std::vector<KernelRow>& rows, const std::string& gpu,
                    const std::string& dtype, const std::string& file) {
  GemmGrid g;
  std::vector<const KernelRow*> sel;
  for (const auto& r : rows)
    if (r.gpu == gpu && r.dtype == dtype && r.impl == "xla") sel.push_back(&r);
  if (sel.empty()) return g;
  for (const KernelRow* r : sel) {
    const double v[4] = {std::max(1.0, r->batch), r->m, r->n, r->k};
    for (size_t a = 0; a < 4; ++a) {
      if (v[a] <= 0)
        throw InputError(file, "line " + std::to_string(r->line),
                         "expected positive batch, m, n, k for an xla GEMM row");
      g.axes[a].push_back(std::log2(v[a]));
    }
  }
  sort_unique_axes(&g.axes);
  const size_t total = g.axes[0].size() * g.axes[1].size() * g.axes[2].size() * g.axes[3].size();
  g.log_t.assign(total, std::nan(""));
  std::vector<GemmSample> samples;
  for (const KernelRow* r : sel) {
    const size_t at = grid_index(g.axes, {std::log2(std::max(1.0, r->batch)), std::log2(r->m),
                                          std::log2(r->n), std::log2(r->k)});
    if (!std::isnan(g.log_t[at]))
      throw InputError(file, "line " + std::to_string(r->line),
                       "duplicate xla GEMM shape for " + gpu + " " + dtype);
    g.log_t[at] = std::log(r->time_us);
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

void ComputeModel::Impl::load_gemm(const GpuSpec& gpu, const std::string& tgpu,
                                   const KernelTables& t, ComputeModel& cm) {
  for (int s = 0; s < 3 && !tgpu.empty(); ++s) {
    grid[static_cast<size_t>(s)] = build_grid(t.gemm, tgpu, grid_dtype(s), t.gemm_file);
    const GemmGrid& g = grid[static_cast<size_t>(s)];
    if (g.ok)
      reports.push_back(
          {std::string("gemm ") + tgpu + " " + grid_dtype(s) + " (xla)", g.rows, g.mape});
  }
  no_tables = tgpu.empty() || !grid[1].ok;
  if (no_tables) {
    cm.warnings_.push_back(gpu.model + ": no GEMM calibration table; GEMM time = FLOPs / (" +
                           fmt(kDefaultGemmEff, 2) + " x datasheet peak) + " +
                           fmt(kDefaultFloorUs, 2) + " us");
    return;
  }
  cm.sources_.push_back("gemm: XLA per-shape tables of " + tgpu + " in " + t.gemm_file);
  if (tgpu != gpu.model) {
    gemm_scale = mamf_ratio(t.gemm, gpu.model, tgpu);
    gemm_rate_gpu = gemm_scale > 0 ? gpu.model : "";
    // No measured GEMM rate of its own (GB300 has no MAMF or per-shape row): the first sibling
    // that has one (GB300: GB200, the same Grace-Blackwell tray with the same datasheet BF16 /
    // FP8 dense rates), and a warning naming it.
    for (const std::string& s : siblings(gpu.model)) {
      if (!gemm_rate_gpu.empty() || s == tgpu) continue;
      const double r = mamf_ratio(t.gemm, s, tgpu);
      if (r > 0) gemm_scale = r, gemm_rate_gpu = s;
    }
    if (gemm_rate_gpu == gpu.model) {
      cm.sources_.push_back("gemm: " + gpu.model + " uses the " + tgpu +
                            " tables scaled by the measured MAMF ratio " + fmt(gemm_scale, 4));
    } else if (!gemm_rate_gpu.empty()) {
      const std::string w = gpu.model + ": no GEMM rows of its own; GEMM uses the " + tgpu +
                            " tables scaled by " + gemm_rate_gpu + "'s measured MAMF ratio " +
                            fmt(gemm_scale, 4) + " (fallback)";
      cm.sources_.push_back("gemm: " + w);
      cm.warnings_.push_back(w);
    } else {
      gemm_scale = 1.0;
      cm.warnings_.push_back(gpu.model + ": GEMM uses the " + tgpu +
                             " tables unscaled (no MAMF row on both GPUs)");
    }
  } else {
    gemm_rate_gpu = gpu.model;
  }
  if (!grid[2].ok) derive_fp8_from_bf16(tgpu, t, cm);
  if (tgpu == "B200" && peak[di(DType::kNvfp4)] > peak[di(DType::kFp8)]) load_nvfp4_speedup(t, cm);
  if (gpu.model.rfind("H", 0) == 0 && gpu.peak_dense_tflops.count("mxfp8") == 0) {
    cm.sources_.push_back("gemm mxfp8/nvfp4 on " + gpu.model +
                          ": no tensor-core support; timed as fp8");
    return;
  }
  load_block_scaled(gpu, t, cm);
  if (tgpu == "B200") fit_large_shapes(tgpu, t, cm);
}

void ComputeModel::Impl::derive_fp8_from_bf16(const std::string& tgpu, const KernelTables& t,
                                              ComputeModel& cm) {
  // FP8 GEMM on H100 (XLA sm_90 fp8 table excluded upstream): bf16 time divided by the B200
  // fp8/bf16 speedup at the same shape, capped at the H100 MAMF fp8/bf16 ratio.
  ref_bf16 = build_grid(t.gemm, "B200", "bf16", t.gemm_file);
  ref_fp8 = build_grid(t.gemm, "B200", "fp8", t.gemm_file);
  fp8_over_bf16_cap = mamf(t.gemm, tgpu, "fp8") / mamf(t.gemm, tgpu, "bf16");
  if (!ref_bf16.ok || !ref_fp8.ok || !(fp8_over_bf16_cap > 1.0))
    throw InputError(t.gemm_file, "gpu " + tgpu,
                     "no fp8 table and no B200 grids / MAMF rows to derive one");
  cm.sources_.push_back("gemm fp8: " + tgpu + " bf16 table / min(B200 fp8 speedup at shape, " +
                        fmt(fp8_over_bf16_cap, 4) + " = MAMF fp8/bf16 on " + tgpu + ")");
}

void ComputeModel::Impl::load_nvfp4_speedup(const KernelTables& t, ComputeModel& cm) {
  // NVFP4 (Blackwell only): vLLM SM100 noquant CUTLASS NVFP4 vs torch bf16 at the same shapes.
  std::map<double, std::pair<double, double>> by_m;  // m -> (nvfp4, bf16) TFLOP/s
  for (const auto& r : t.gemm) {
    if (r.gpu != "B200" || r.n != 6144 || r.k != 4096) continue;
    if (r.dtype == "nvfp4" && r.impl == "cutlass") by_m[r.m].first = r.tflops;
    if (r.dtype == "bf16" && r.impl == "torch") by_m[r.m].second = r.tflops;
  }
  for (const auto& [m, p] : by_m)
    if (p.first > 0 && p.second > 0) nvfp4_speedup.push_back({std::log2(m), p.first / p.second});
  if (!nvfp4_speedup.empty())
    cm.sources_.push_back("gemm nvfp4: bf16 table / vLLM SM100 nvfp4-vs-bf16 speedup over m (" +
                          std::to_string(nvfp4_speedup.size()) + " shapes)");
}

void ComputeModel::Impl::load_block_scaled(const GpuSpec& gpu, const KernelTables& t,
                                           ComputeModel& cm) {
  // No per-shape MXFP8 GEMM table is published; Transformer Engine's benchmark_gemm.py timed one
  // layer's 12 GEMMs pre-quantized in both formats on the same shapes. Their ratio (the block-
  // scale loads) multiplies the FP8 table; the GPU's own rows are used when there are any, else
  // another Blackwell GPU's.
  auto layer = [&](const std::string& g, const char* dt) { return te_layer_us(t.gemm, g, dt); };
  std::string from;
  for (const std::string& g : {gpu.model, std::string("B200"), std::string("GB200"),
                               std::string("B300"), std::string("GB300")})
    if (from.empty() && layer(g, "mxfp8") > 0 && layer(g, "fp8") > 0) from = g;
  // NVFP4: Blackwell Ultra (B300 / GB300) raises the FP4 tensor-core rate over B200's, so the
  // vLLM B200 speedup does not carry over; the same benchmark's NVFP4 / FP8 ratio on this die
  // does (B300 and GB300 share one).
  const std::string twin = gpu.model == "GB300" ? "B300" : gpu.model == "B300" ? "GB300" : "";
  for (const std::string& g : {gpu.model, twin})
    if (nvfp4_over_fp8 == 0 && !g.empty() && layer(g, "nvfp4") > 0 && layer(g, "fp8") > 0) {
      nvfp4_over_fp8 = layer(g, "nvfp4") / layer(g, "fp8");
      std::erase_if(cm.sources_,
                    [](const std::string& x) { return x.rfind("gemm nvfp4: bf16", 0) == 0; });
      cm.sources_.push_back("gemm nvfp4: fp8 table x " + fmt(nvfp4_over_fp8, 4) +
                            " (NVFP4 / per-tensor FP8 time of one layer's 12 GEMMs, "
                            "pre-quantized, on " +
                            g + "; replaces the B200 vLLM speedup, " + t.gemm_file + ")");
    }
  if (!from.empty()) {
    mxfp8_over_fp8 = layer(from, "mxfp8") / layer(from, "fp8");
    cm.sources_.push_back("gemm mxfp8: fp8 table x " + fmt(mxfp8_over_fp8, 4) +
                          " (MXFP8 / per-tensor FP8 time of one layer's 12 GEMMs, "
                          "pre-quantized, on " +
                          from + ", " + t.gemm_file + ")");
  } else {
    cm.sources_.push_back("gemm mxfp8: fp8 table (no MXFP8 GEMM timing published)");
  }
}

void ComputeModel::Impl::fit_large_shapes(const std::string& tgpu, const KernelTables& t,
                                          ComputeModel& cm) {
  // Large shapes: one layer's 12 GEMMs (M tokens, hidden k, intermediate n; QKV 3k) timed
  // pre-quantized on a Blackwell GPU, converted to the table GPU by the MAMF ratio, against
  // the same 12 GEMMs from the tables: the factor f with measured = sum t_i (1 + (f-1) w_i).
  for (const std::string& g :
       {std::string("B200"), std::string("GB200"), std::string("B300"), std::string("GB300")}) {
    if (te_layer_us(t.gemm, g, "bf16") <= 0 || te_layer_us(t.gemm, g, "fp8") <= 0) continue;
    const double to_table = g == tgpu ? 1.0 : mamf_ratio(t.gemm, g, tgpu);
    if (to_table <= 0) continue;
    const KernelRow* lr = te_layer_row(t.gemm, g);
    const double M = lr->m, F = lr->n, H = lr->k;
    const double shapes[12][3] = {{M, 3 * H, H}, {M, H, H}, {M, F, H}, {M, H, F},
                                  {M, H, 3 * H}, {M, H, H}, {M, H, F}, {M, F, H},
                                  {H, 3 * H, M}, {H, H, M}, {H, F, M}, {F, H, M}};
    for (const char* dt : {"bf16", "fp8"}) {
      const DType d = std::string(dt) == "bf16" ? DType::kBf16 : DType::kFp8;
      double sum = 0, wsum = 0;
      for (const auto& sh : shapes) {
        const double tu = gemm_table_time(static_cast<int64_t>(sh[0]), static_cast<int64_t>(sh[1]),
                                          static_cast<int64_t>(sh[2]), d, 1);
        sum += tu;
        wsum += tu * std::min(1.0, grid[1].above_box(sh[0], sh[1], sh[2], 1) / kLargeOctaves);
      }
      const double measured_us = te_layer_us(t.gemm, g, dt) * to_table;
      const double f = wsum > 0 ? 1.0 + (measured_us - sum) / wsum : 1.0;
      (d == DType::kBf16 ? large_bf16 : large_fp8) = f;
      cm.sources_.push_back(
          std::string("gemm ") + dt + " beyond the measured box: x " + fmt(f, 4) +
          " at >= 2 octaves out, so that one layer's 12 GEMMs (" + fmt(M, 6) + " tokens, " +
          fmt(H, 6) + " / " + fmt(F, 6) + ") take the " + fmt(te_layer_us(t.gemm, g, dt), 6) +
          " us Transformer Engine measured pre-quantized on " + g + " (" + t.gemm_file + ")");
    }
    break;
  }
}

void ComputeModel::Impl::load_gemm_cap(const GpuSpec& gpu, const KernelTables& t,
                                       ComputeModel& cm) {
  // No GEMM runs faster than the best rate a shape search found on the GPU itself (MAMF,
  // calibration/kernels/gemm.csv); the curve beyond the box would otherwise pass it at large
  // sizes (H100 bf16 859 / fp8 1,516 TFLOP/s against MAMF 795 / 1,403). The best of MAMF and the
  // GPU's own per-shape table (XLA's batched H100 bf16 points reach 805 against MAMF 795:
  // another machine).
  // A GPU without rates of its own is capped by the sibling whose rates scale its tables.
  const std::string& g = gemm_rate_gpu.empty() ? gpu.model : gemm_rate_gpu;
  auto best = [&](const char* dt) {
    double v = 0;
    for (const auto& r : t.gemm)
      if (r.gpu == g && r.dtype == dt && (r.impl == "mamf" || r.impl == "xla"))
        v = std::max(v, r.tflops);
    return v;
  };
  const double bf = best("bf16"), f8 = best("fp8");
  if (bf > 0) mamf_cap[di(DType::kBf16)] = bf;
  if (f8 > 0) {
    mamf_cap[di(DType::kFp8)] = f8;
    mamf_cap[di(DType::kMxfp8)] = f8 / mxfp8_over_fp8;
  }
  if (bf > 0 || f8 > 0)
    cm.sources_.push_back("gemm cap: best measured rate (MAMF, XLA table) of " + g +
                          (bf > 0 ? " bf16 " + fmt(bf, 5) : std::string()) +
                          (f8 > 0 ? " fp8 " + fmt(f8, 5) : std::string()) + " TFLOP/s");
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
