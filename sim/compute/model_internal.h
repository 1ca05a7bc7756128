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
#include "compute/log_grid.h"
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

// 4-D grid over log2(batch, m, n, k) of ln(time_us) (compute/log_grid.h), plus the fitted curve
// used outside it.
struct GemmGrid {
  bool ok = false;
  GridAxes axes;  // log2 values, ascending
  std::vector<double> log_t;
  GemmCurve curve;
  double mape = 0;
  int rows = 0;

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
  // table at the nearest box point with a correction that fades with the log2 distance.
  double time_us(double m, double n, double k, double b) const {
    return anchored_time_us(axes, log_t, m, n, k, b,
                            [this](double cm, double cn, double ck, double cb) {
                              return curve.time_us(cm, cn, ck, cb);
                            });
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

// The published tables of calibration/kernels/ and their paths (ComputeModel::load).
struct KernelTables {
  std::string gemm_file, grouped_file, attn_file, mem_file;
  std::vector<KernelRow> gemm, grouped, attn, mem;
};

// Shared by the models' loaders (compute_model.cpp).
// Siblings to borrow attention / memory rows from when `model` has none (same die family).
std::vector<std::string> siblings(const std::string& model);
double median(std::vector<double> v);
std::string fmt(double v, int prec = 3);  // %.*g
// MAMF (maximum achievable matmul TFLOP/s) of `gpu` in dtype `dt`; 0 when not measured.
double mamf(const std::vector<KernelRow>& rows, const std::string& gpu, const std::string& dt);
// Geometric mean over dtypes of MAMF(a) / MAMF(b); 0 when no dtype was measured on both.
double mamf_ratio(const std::vector<KernelRow>& rows, const std::string& a, const std::string& b);

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
  // The GPU whose measured GEMM rates (MAMF) set gemm_scale and the cap: the target itself, or
  // (where it has none, e.g. GB300) the first sibling that has them; "" = none.
  std::string gemm_rate_gpu;
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
  // MoE routing / permutation kernels (moe_ops.cpp): per ComputeModel::MoeKernel, the floor
  // (us) and the effective bandwidth (bytes/s) on this GPU.
  std::array<double, 7> moe_floor_us{}, moe_Bps{};
  std::string moe_ops_warning;  // empty where the GPU has its own permute rows (H200)
  // Attention
  std::array<std::array<compute_internal::AttnSet, 2>, compute_internal::kNumDTypes> attn;
  std::array<double, compute_internal::kNumDTypes> attn_scale{1, 1, 1, 1, 1};
  // Memory
  double hbm_Bps = 0, quant_Bps = 0, floor_us = compute_internal::kDefaultFloorUs;
  // Mamba-2 SSD (ssm.cpp): chunk_scan TFLOP/s by log2(tokens) of the GPU whose rows serve this
  // one, times ssd_scale (this GPU's bf16 peak / theirs when borrowed).
  std::vector<std::pair<double, double>> ssd_rate;
  double ssd_scale = 1.0;
  std::string ssd_note;
  bool ssd_fallback = false;
  // The SSD compute rate (TFLOP/s) at `tokens` tokens per call (ssm.cpp).
  double ssd_rate_tflops(double tokens) const;
  // Gated DeltaNet (linear_attention.cpp): forward TFLOP/s by log2(FLOPs) of the FLA rows serving
  // this GPU, times gdn_scale; the backward / forward time ratio of the fwd+bwd pairs.
  std::vector<std::pair<double, double>> gdn_rate;
  double gdn_scale = 1.0, gdn_bwd_ratio = 0.0;
  std::string gdn_note;
  bool gdn_fallback = false;
  // Sparse MLA (linear_attention.cpp): forward and backward TFLOP/s on this GPU.
  double sparse_fwd_tflops = 0.0, sparse_bwd_tflops = 0.0;
  std::string sparse_note;
  bool sparse_fallback = false;
  std::vector<FitReport> reports;
  // Measured GEMM grids of a calibration set, by DType (compute/import.h).
  std::array<compute_internal::MeasuredGemm, compute_internal::kNumDTypes> measured;

  double gemm_table_time(int64_t m, int64_t n, int64_t k, DType d, int64_t b) const;

  // Loading (ComputeModel::load calls them in this order; each appends to cm's sources() and
  // warnings()). tgpu: the GPU whose GEMM grids serve cm's GPU ("" = none).
  void load_peaks(const GpuSpec& gpu, ComputeModel& cm);  // compute_model.cpp
  void load_memory(const GpuSpec& gpu, const compute_internal::KernelTables& t,
                   ComputeModel& cm);  // memory_bound.cpp
  // gemm.cpp: the grids and dtype derivations, then the measured-rate cap.
  void load_gemm(const GpuSpec& gpu, const std::string& tgpu,
                 const compute_internal::KernelTables& t, ComputeModel& cm);
  void derive_fp8_from_bf16(const std::string& tgpu, const compute_internal::KernelTables& t,
                            ComputeModel& cm);
  void load_nvfp4_speedup(const compute_internal::KernelTables& t, ComputeModel& cm);
  void load_block_scaled(const GpuSpec& gpu, const compute_internal::KernelTables& t,
                         ComputeModel& cm);
  void fit_large_shapes(const std::string& tgpu, const compute_internal::KernelTables& t,
                        ComputeModel& cm);
  void load_gemm_cap(const GpuSpec& gpu, const compute_internal::KernelTables& t, ComputeModel& cm);
  void load_grouped(const std::string& tgpu, const compute_internal::KernelTables& t,
                    ComputeModel& cm);  // grouped_gemm.cpp
  void load_attention(const GpuSpec& gpu, const compute_internal::KernelTables& t,
                      ComputeModel& cm);                                    // attention.cpp
  void load_ssm(const GpuSpec& gpu, const std::string& file);               // ssm.cpp
  void load_linear_attention(const GpuSpec& gpu, const std::string& file);  // linear_attention.cpp
  void load_moe_ops(const GpuSpec& gpu, ComputeModel& cm);                  // moe_ops.cpp
};

}  // namespace fleetsim
