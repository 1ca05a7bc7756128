// Grouped GEMM model (MoE experts): `groups` dense GEMMs of the per-group shape times a factor
// fitted per dtype on the measured grouped-GEMM rows (calibration/kernels/grouped_gemm.csv).
#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

Time ComputeModel::grouped_gemm(int64_t groups, int64_t m_per_group, int64_t n, int64_t k,
                                DType dtype) const {
  if (groups <= 0 || m_per_group <= 0) return Time::zero();
  const Time t = gemm(m_per_group, n, k, dtype, groups);
  return us_to_time(t.us() * impl_->grouped_factor[di(dtype)]);
}

}  // namespace fleetsim
