// Grouped GEMM model (MoE experts): `groups` dense GEMMs of the per-group shape times a factor
// fitted per dtype on the measured grouped-GEMM rows (calibration/kernels/grouped_gemm.csv, all
// at 4096-128000 tokens per group). Below kRefTokens tokens per expert the rate is not read off
// the dense GEMM curve at the small shape but follows the measured rate of a grouped MoE kernel
// against tokens per expert: rate(m) = rate(kRefTokens) · e(m), e from the rows below.
#include <map>

#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

namespace {

// Liger-Kernel fused MoE (Triton grouped GEMMs gate/up + SwiGLU + down), H100 BF16, hidden 2048,
// expert FFN 768, top-8: achieved TFLOP/s forward and backward against m = tokens per expert
// (validation/moe-host-kernels.csv rows moe_experts_fused_fwd / _bwd, from
// https://github.com/linkedin/Liger-Kernel/blob/ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c/benchmark/data/all_benchmark_data.csv).
// m = 8..2048: the 128-expert sweep (T = 128..32768 tokens); m = 512..8192: the expert sweep at
// T = 8192 (E = 128..8); where both give an m the geometric mean is used.
struct RatePoint {
  double m, fwd, bwd;
};
constexpr RatePoint kLiger[] = {
    {8, 16.4, 5.9},     {16, 32.4, 11.7},     {32, 63.0, 22.5},     {64, 115.2, 41.7},
    {128, 176.8, 74.0}, {256, 247.2, 119.4},  {512, 0, 0},          {1024, 0, 0},
    {2048, 0, 0},       {4096, 320.2, 286.8}, {8192, 323.5, 296.5},
};
// The m that appear in both sweeps: (128-expert sweep, expert sweep at T = 8192).
constexpr double kLigerDup[3][4] = {
    {295.1, 277.9, 167.6, 167.6},  // m = 512
    {317.9, 300.2, 210.0, 215.1},  // m = 1024
    {336.9, 314.1, 241.5, 259.2},  // m = 2048
};
constexpr int64_t kRefTokens = 8192;  // the largest measured m: e(kRefTokens) = 1

// e(m) = rate(m) / rate(kRefTokens), log-linear in m between the points, ∝ m below the first
// (a fixed time: the kernel is latency-bound there), 1 at and above kRefTokens.
double small_group_efficiency(double m, bool backward) {
  if (m >= static_cast<double>(kRefTokens)) return 1.0;
  constexpr int n = sizeof(kLiger) / sizeof(kLiger[0]);
  double lm[n], lr[n];
  for (int i = 0; i < n; ++i) {
    double r = backward ? kLiger[i].bwd : kLiger[i].fwd;
    if (r == 0) {
      const double* d = kLigerDup[i - 6];
      r = backward ? std::sqrt(d[2] * d[3]) : std::sqrt(d[0] * d[1]);
    }
    lm[i] = std::log2(kLiger[i].m);
    lr[i] = std::log(r);
  }
  const double ref = lr[n - 1];
  if (m <= kLiger[0].m) return std::exp(lr[0] - ref) * m / kLiger[0].m;
  const double x = std::log2(m);
  int i = 0;
  while (i + 2 < n && x > lm[i + 1])
    ++i;
  const double w = (x - lm[i]) / (lm[i + 1] - lm[i]);
  return std::min(1.0, std::exp(lr[i] + w * (lr[i + 1] - lr[i]) - ref));
}

}  // namespace

// Grouped GEMM factor: the geometric mean of measured / (groups x dense GEMM) at the measured
// shapes, per dtype (falling back to another dtype's rows).
void ComputeModel::Impl::load_grouped(const std::string& tgpu, const KernelTables& t,
                                      ComputeModel& cm) {
  const bool hopper = tgpu == "H100";
  std::map<std::string, std::vector<double>> logs;
  for (const auto& r : t.grouped) {
    const bool row_hopper = r.gpu == "H100" || r.gpu == "H800" || r.gpu == "H200";
    if (row_hopper != hopper || r.kernel.find("incl_quant") != std::string::npos) continue;
    DType d;
    if (!parse_dtype(r.dtype, &d)) continue;
    const int64_t g = std::max<int64_t>(1, static_cast<int64_t>(r.batch));
    const auto M = static_cast<int64_t>(r.m), N = static_cast<int64_t>(r.n),
               K = static_cast<int64_t>(r.k);
    double pred = 0;
    if (r.kernel == "grouped_gemm_fwd_bwd")
      pred = gemm_table_time(M / g, N, K, d, g) + gemm_table_time(M / g, K, N, d, g) +
             gemm_table_time(K, N, M / g, d, g);
    else if (r.kernel == "grouped_gemm_wgrad")
      pred = gemm_table_time(M, N, K / g, d, g);
    else
      pred = gemm_table_time(M / g, N, K, d, g);
    logs[r.dtype].push_back(std::log(r.time_us / pred));
  }
  auto factor = [&](const std::string& dt) {
    const auto it = logs.find(dt);
    if (it == logs.end()) return 0.0;
    double s = 0;
    for (double v : it->second)
      s += v;
    return std::exp(s / static_cast<double>(it->second.size()));
  };
  for (DType d : {DType::kFp32, DType::kBf16, DType::kFp8, DType::kMxfp8, DType::kNvfp4}) {
    std::vector<std::string> order = {to_string(d)};
    if (d != DType::kBf16 && d != DType::kFp32) order.insert(order.end(), {"mxfp8", "fp8"});
    order.insert(order.end(), {"bf16", "fp8", "mxfp8"});
    double f = 0;
    std::string used;
    for (const auto& o : order)
      if (f == 0 && (f = factor(o)) > 0) used = o;
    grouped_factor[di(d)] = f > 0 ? f : 1.0;
    cm.sources_.push_back("grouped gemm " + std::string(to_string(d)) + ": factor " +
                          fmt(grouped_factor[di(d)], 4) + " x groups x gemm (from " +
                          (used.empty() ? std::string("none: 1.0") : used + " rows") + ", " +
                          t.grouped_file + ")");
  }
  cm.sources_.push_back(
      "grouped gemm below " + std::to_string(kRefTokens) +
      " tokens per expert: rate x e(tokens per expert), e from the Liger fused-MoE rows (H100 "
      "BF16, validation/moe-host-kernels.csv; " +
      (tgpu == "H100" ? std::string("this GPU") : tgpu + " has no such rows: the H100 curve") +
      ", every dtype): e(512) = " + fmt(small_group_efficiency(512, false), 3) + " fwd / " +
      fmt(small_group_efficiency(512, true), 3) + " bwd");
}

Time ComputeModel::grouped_gemm(int64_t groups, int64_t m_per_group, int64_t n, int64_t k,
                                DType dtype) const {
  return grouped_gemm(groups, m_per_group, n, k, dtype, GemmPass::kForward);
}

int64_t ComputeModel::grouped_ref_tokens() {
  return kRefTokens;
}

// At kRefTokens tokens per expert or more: groups x the dense GEMM of the pass's shape x the
// grouped factor. Below: the same at kRefTokens, scaled to the FLOPs of `tokens` and divided by
// e(tokens) (forward rows for the forward, backward rows for dgrad and wgrad).
Time ComputeModel::grouped_gemm(int64_t groups, int64_t tokens, int64_t n, int64_t k, DType dtype,
                                GemmPass pass) const {
  if (groups <= 0 || tokens <= 0) return Time::zero();
  const int64_t m = std::max(tokens, kRefTokens);
  Time t;
  switch (pass) {
    case GemmPass::kForward:
      t = gemm(m, n, k, dtype, groups);
      break;
    case GemmPass::kDgrad:
      t = gemm(m, k, n, dtype, groups);
      break;
    case GemmPass::kWgrad:
      t = gemm(k, n, m, dtype, groups);
      break;
  }
  double us = t.us() * impl_->grouped_factor[di(dtype)];
  if (tokens < kRefTokens) {
    const double mt = static_cast<double>(tokens);
    us *= mt / static_cast<double>(kRefTokens) /
          small_group_efficiency(mt, pass != GemmPass::kForward);
  }
  return us_to_time(us);
}

}  // namespace fleetsim
