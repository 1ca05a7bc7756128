// Grouped GEMM model (MoE experts): `groups` dense GEMMs of the per-group shape times a factor
// fitted per dtype on the measured grouped-GEMM rows (calibration/kernels/grouped_gemm.csv).
#include <map>

#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

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
}

Time ComputeModel::grouped_gemm(int64_t groups, int64_t m_per_group, int64_t n, int64_t k,
                                DType dtype) const {
  if (groups <= 0 || m_per_group <= 0) return Time::zero();
  const Time t = gemm(m_per_group, n, k, dtype, groups);
  return us_to_time(t.us() * impl_->grouped_factor[di(dtype)]);
}

}  // namespace fleetsim
