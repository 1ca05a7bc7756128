// Element formats of GEMM inputs (compute_model.h): names, parsing, and bytes per element incl.
// the block scales of MXFP8 / NVFP4.
#include "compute/compute_model.h"

namespace fleetsim {

const char* to_string(DType d) {
  switch (d) {
    case DType::kFp32:
      return "fp32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
    case DType::kMxfp8:
      return "mxfp8";
    case DType::kNvfp4:
      return "nvfp4";
  }
  return "?";
}

bool parse_dtype(const std::string& s, DType* out) {
  for (DType d : {DType::kFp32, DType::kBf16, DType::kFp8, DType::kMxfp8, DType::kNvfp4}) {
    if (s == to_string(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

// MXFP8: one E8M0 scale byte per 32 elements (OCP MX spec v1.0); NVFP4: 4-bit values with one
// FP8 scale per 16 elements (NVIDIA Blackwell NVFP4 format), i.e. 0.5 + 1/16 bytes.
double dtype_bytes(DType d) {
  switch (d) {
    case DType::kFp32:
      return 4.0;
    case DType::kBf16:
      return 2.0;
    case DType::kFp8:
      return 1.0;
    case DType::kMxfp8:
      return 1.0 + 1.0 / 32.0;
    case DType::kNvfp4:
      return 0.5 + 1.0 / 16.0;
  }
  return 2.0;
}

}  // namespace fleetsim
