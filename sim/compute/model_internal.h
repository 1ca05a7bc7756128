// Internal to sim/compute: the state behind ComputeModel (ComputeModel::Impl), the GEMM grid and
// attention fit types, and the helpers the GEMM, grouped-GEMM, attention and memory-bound models
// share. Included only by sim/compute/*.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "compute/compute_model.h"
#include "compute/fit.h"
#include "compute/import.h"
#include "compute/tables.h"

namespace fleetsim {
namespace compute_internal {

constexpr int kNumDTypes = 5;
inline int di(DType d) {
  return static_cast<int>(d);
}

// Default efficiencies for a GPU without any table (documented in KERNELS.md): GEMM 0.70 (best-
// shape MAMF / peak is 0.73-0.80 on H100/B200/GB200, XLA 4096^3 0.63-0.79); attention 0.50
// (cuDNN long-sequence bf16 fwd 0.65, bwd 0.49 of peak on GB200); HBM 0.80 of datasheet
// (GB200 RMSNorm 6.42 of 8 TB/s); kernel floor 3 us (smallest measured norm kernels).
constexpr double kDefaultGemmEff = 0.70;
constexpr double kDefaultAttnEff = 0.50;
constexpr double kDefaultHbmFraction = 0.80;
constexpr double kDefaultFloorUs = 3.0;

// Octaves beyond the measured GEMM box over which the large-shape factor fades in (the
// Transformer Engine layer shapes, M = 15872 against a box ending at 4096, lie ~2 out).
constexpr double kLargeOctaves = 2.0;

// 4-D grid over log2(batch, m, n, k) of ln(time_us), plus the fitted curve used outside it.
struct GemmGrid {
  bool ok = false;
  std::array<std::vector<double>, 4> axes;  // log2 values, ascending
  std::vector<double> log_t;
  GemmCurve curve;
  double mape = 0;
  int rows = 0;

  size_t index(const std::array<size_t, 4>& i) const {
    return ((i[0] * axes[1].size() + i[1]) * axes[2].size() + i[2]) * axes[3].size() + i[3];
  }

  // Multilinear interpolation of ln t at x (clamped into the box); returns the clamp distance.
  double interp(std::array<double, 4> x, double* dist) const {
    std::array<size_t, 4> lo{};
    std::array<double, 4> f{};
    double d = 0;
    for (size_t a = 0; a < 4; ++a) {
      const auto& ax = axes[a];
      const double xc = std::clamp(x[a], ax.front(), ax.back());
      d += std::abs(x[a] - xc);
      x[a] = xc;
      size_t i = 0;
      while (i + 2 < ax.size() && x[a] > ax[i + 1])
        ++i;
      lo[a] = i;
      f[a] = ax.size() < 2 ? 0.0 : (x[a] - ax[i]) / (ax[i + 1] - ax[i]);
    }
    double acc = 0;
    for (int corner = 0; corner < 16; ++corner) {
      double w = 1;
      std::array<size_t, 4> idx{};
      for (size_t a = 0; a < 4; ++a) {
        const bool hi = (corner >> a) & 1;
        if (hi && axes[a].size() < 2) {
          w = 0;
          break;
        }
        idx[a] = lo[a] + (hi ? 1 : 0);
        w *= hi ? f[a] : 1.0 - f[a];
      }
      if (w != 0) acc += w * log_t[index(idx)];
    }
    *dist = d;
    return acc;
  }

  // Euclidean log2 distance by which (b, m, n, k) exceeds the measured box (0 inside or below).
  double above_box(double m, double n, double k, double b) const {
    const double x[4] = {std::log2(b), std::log2(m), std::log2(n), std::log2(k)};
    double d2 = 0;
    for (size_t a = 0; a < 4; ++a) {
      const double o = std::max(0.0, x[a] - axes[a].back());
      d2 += o * o;
    }
    return std::sqrt(d2);
  }

  // Inside the measured box: the interpolated table. Outside: the fitted curve, anchored to the
  // table at the nearest box point with a correction that fades with the log2 distance d.
  double time_us(double m, double n, double k, double b) const {
    const std::array<double, 4> x = {std::log2(b), std::log2(m), std::log2(n), std::log2(k)};
    double d = 0;
    const double lt = interp(x, &d);
    if (d == 0) return std::exp(lt);
    const double bc = std::exp2(std::clamp(x[0], axes[0].front(), axes[0].back()));
    const double mc = std::exp2(std::clamp(x[1], axes[1].front(), axes[1].back()));
    const double nc = std::exp2(std::clamp(x[2], axes[2].front(), axes[2].back()));
    const double kc = std::exp2(std::clamp(x[3], axes[3].front(), axes[3].back()));
    const double at_edge = std::max(1e-3, curve.time_us(mc, nc, kc, bc));
    const double corr = lt - std::log(at_edge);
    return std::max(1e-3, curve.time_us(m, n, k, b)) * std::exp(corr / (1.0 + d));
  }
};

GemmGrid build_grid(const std::vector<KernelRow>& rows, const std::string& gpu,
                    const std::string& dtype, const std::string& file);

// Attention: logit(achieved / ceiling) = c · [1, ln L, ln(b·h·s_q), ln(d_qk + d_v), causal],
// L = query-key pairs per query row; Shepard-weighted log residuals of the measured rows make
// the model exact at measured shapes and fade back to the fit away from them.
struct AttnPoint {
  std::array<double, 5> z;
  double resid;
};
struct AttnSet {
  bool ok = false;
  std::vector<double> coef;
  double ceiling_tflops = 0;
  std::vector<AttnPoint> points;
  double mape = 0;
};

double attn_pairs(double s_q, double s_kv, bool causal, double window);
std::array<double, 5> attn_features(double b, double h, double s_q, double pairs, double d_sum,
                                    bool causal);
std::array<double, 5> attn_z(double b, double h, double kvh, double s_q, double pairs, double d_sum,
                             bool causal);
double attn_fit_tflops(const AttnSet& s, const std::array<double, 5>& f);

inline Time us_to_time(double us) {
  return Time::from_ps(static_cast<int64_t>(std::ceil(us * 1e6)));
}

}  // namespace compute_internal

struct ComputeModel::Impl {
  std::array<double, compute_internal::kNumDTypes> peak{};  // TFLOP/s, target GPU
  bool no_tables = false;
  // GEMM
  std::array<compute_internal::GemmGrid, 3> grid;  // fp32 (tf32), bf16, fp8 of the table GPU
  compute_internal::GemmGrid ref_bf16,
      ref_fp8;                   // B200 grids: shape-dependent fp8/bf16 speedup for H100 fp8
  double fp8_over_bf16_cap = 0;  // > 0: fp8 derived from bf16 (MAMF fp8/bf16 ratio)
  double gemm_scale = 1.0;       // target / table GPU throughput (MAMF ratio)
  std::vector<std::pair<double, double>> nvfp4_speedup;  // (log2 m, nvfp4 / bf16 TFLOP/s)
  double mxfp8_over_fp8 = 1.0;     // MXFP8 / per-tensor FP8 GEMM kernel time (Blackwell)
  double nvfp4_over_fp8 = 0;       // > 0: NVFP4 / FP8 GEMM kernel time measured on this die
  bool mxfp8_borrows_fp8 = false;  // the calibration set's MXFP8 grid is its FP8 one
  // Beyond the measured box the fitted curve keeps climbing with size; Transformer Engine's
  // layer benchmark at Llama-sized shapes fixes how fast large GEMMs really run. Time factor at
  // >= kLargeOctaves beyond the box (faded in linearly before), for bf16 and fp8 (1 = none).
  double large_bf16 = 1.0, large_fp8 = 1.0;
  // Maximum achievable matmul TFLOP/s measured on the target GPU (MAMF), by DType; 0 = none.
  std::array<double, compute_internal::kNumDTypes> mamf_cap{};
  std::array<double, compute_internal::kNumDTypes> grouped_factor{1, 1, 1, 1, 1};
  // Attention
  std::array<std::array<compute_internal::AttnSet, 2>, compute_internal::kNumDTypes> attn;
  std::array<double, compute_internal::kNumDTypes> attn_scale{1, 1, 1, 1, 1};
  // Memory
  double hbm_Bps = 0, quant_Bps = 0, floor_us = compute_internal::kDefaultFloorUs;
  std::vector<FitReport> reports;
  // Measured GEMM grids of a calibration set, by DType (compute/import.h).
  std::array<compute_internal::MeasuredGemm, compute_internal::kNumDTypes> measured;

  double gemm_table_time(int64_t m, int64_t n, int64_t k, DType d, int64_t b) const;
};

}  // namespace fleetsim
