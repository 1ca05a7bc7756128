// Memory-bound kernels and quantization casts: bytes moved through HBM at the measured achieved
// bandwidth, never below the smallest measured kernel time. Sources: calibration/KERNELS.md.
#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

Time ComputeModel::memory_bound(double bytes) const {
  if (bytes <= 0) return Time::zero();
  return us_to_time(std::max(impl_->floor_us, bytes / impl_->hbm_Bps * 1e6));
}

int ComputeModel::quantized_copies(DType dtype) const {
  switch (dtype) {
    case DType::kMxfp8:
    case DType::kNvfp4:
      // 1-D block scales run along the contraction dimension, so the column-wise usage (wgrad,
      // dgrad's weight) needs its own blocks: a second quantized copy on every GPU.
      return 2;
    case DType::kFp8:
      // One per-tensor scale: Blackwell's tensor cores read FP8 column-wise natively, so one
      // copy serves both usages; Hopper (and Ada) need a physical transpose, written by the
      // fused cast-transpose kernel.
      return gpu_.rfind("H", 0) == 0 || gpu_.rfind("L", 0) == 0 ? 2 : 1;
    default:
      return 1;
  }
}

Time ComputeModel::quantize(int64_t elements, DType dtype) const {
  if (elements <= 0) return Time::zero();
  // Reads bf16 once (2 bytes) and writes each quantized copy the GEMMs need (the row-wise one
  // and, where the format or GPU needs it, the column-wise one), each incl. its scales.
  const double bytes =
      static_cast<double>(elements) * (2.0 + quantized_copies(dtype) * dtype_bytes(dtype));
  const bool low_precision =
      dtype == DType::kFp8 || dtype == DType::kMxfp8 || dtype == DType::kNvfp4;
  const double bw = low_precision ? impl_->quant_Bps : impl_->hbm_Bps;
  return us_to_time(std::max(impl_->floor_us, bytes / bw * 1e6));
}

}  // namespace fleetsim
