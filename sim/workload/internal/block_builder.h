// Accumulation of kernel times into the Segments of a Block (layer_costs.h), shared by the
// layer-cost model and the decoder-layer builder.
#pragma once

#include <cmath>
#include <string>

#include "compute/compute_model.h"
#include "workload/layer_costs.h"

namespace fleetsim::step_internal {

// The dtype the GEMMs of a precision recipe run in.
inline DType gemm_dtype(PrecisionRecipe p) {
  switch (p) {
    case PrecisionRecipe::kBf16:
      return DType::kBf16;
    case PrecisionRecipe::kFp8Delayed:
    case PrecisionRecipe::kFp8Current:
    case PrecisionRecipe::kFp8Block:
      return DType::kFp8;
    case PrecisionRecipe::kMxfp8:
      return DType::kMxfp8;
    case PrecisionRecipe::kNvfp4:
      return DType::kNvfp4;
  }
  return DType::kBf16;
}

// Accumulates the kernels of one block, cutting a new Segment at each synchronisation.
class BlockBuilder {
 public:
  BlockBuilder(const char* name, Time gap, double efficiency) : gap_(gap), eff_(efficiency) {
    cur_.name = name;
  }
  void kernel(Time t, double flops = 0) {
    cur_.compute +=
        Time::from_ps(static_cast<int64_t>(std::llround(static_cast<double>(t.ps()) / eff_))) +
        gap_;
    blk_.flops += flops;
    blk_.kernels++;
  }
  // A kernel whose calibration was measured inside a framework (the grouped-GEMM tables come
  // from PyTorch autograd runs), so the in-step efficiency is already part of its time.
  void framework_kernel(Time t, double flops) {
    cur_.compute += t + gap_;
    blk_.flops += flops;
    blk_.kernels++;
  }
  // TP communication of `comm` that can hide behind `hidden` of adjacent GEMM time.
  void tp(Time comm, Time hidden, const CollCall& call) {
    if (comm <= Time::zero()) return;
    cur_.tp += comm > hidden ? comm - hidden : Time::zero();
    blk_.colls.push_back(call);
  }
  void exposed(Time t) { cur_.tp += t; }
  void sync(Dim d, Time t, const char* name, const CollCall& call, const char* next_name) {
    cur_.sync_dim = static_cast<int>(d);
    cur_.sync = t;
    cur_.sync_name = name;
    blk_.colls.push_back(call);
    blk_.segs.push_back(cur_);
    cur_ = Segment{};
    cur_.name = next_name;
    cur_.experts = std::string(next_name) == "experts";
  }
  Block finish() {
    if (cur_.compute > Time::zero() || cur_.tp > Time::zero()) blk_.segs.push_back(cur_);
    return std::move(blk_);
  }

 private:
  Time gap_;
  double eff_;
  Segment cur_;
  Block blk_;
};

}  // namespace fleetsim::step_internal
