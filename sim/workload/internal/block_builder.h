// Accumulation of kernel times and their host launches into the Segments of a Block
// (layer_costs.h), shared by the layer-cost model and the decoder-layer builder.
//
// Every call is one item of the segment's chain: a kernel (GPU time t, host time h to issue
// it), a host-only item (t = 0: framework work before a launch, a CUDA graph launch) or exposed
// TP time. The chain gives the segment's GPU time T, host time H and host span D
// (Segment::span), the exact max-plus result for one host thread issuing the chain in order
// onto one stream.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "workload/layer_costs.h"
#include "workload/step.h"

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

// The upper envelope over s > 0 of the lines a + s·b: the lines that are the maximum for some
// s > 0, in order of increasing b (exact integer arithmetic).
std::vector<HostLine> upper_envelope(std::vector<HostLine> lines);

// D(s) = max over the envelope of a + s·b (zero for an empty span).
Time host_span(const std::vector<HostLine>& span, double s);

// Accumulates the kernels of one block, cutting a new Segment at each synchronisation.
class BlockBuilder {
 public:
  BlockBuilder(const char* name, const FrameworkOptions& fw)
      : host_(fw.host),
        eff_(fw.kernel_efficiency),
        full_graph_(fw.cuda_graphs == CudaGraphs::kFullIteration),
        scopes_(fw.cuda_graphs == CudaGraphs::kScopes ? fw.cuda_graph_scopes : 0u) {
    cur_.name = name;
  }
  // One kernel launched by an eager framework op (host: HostCosts::op).
  void kernel(Time t, double flops = 0) { launch_item(derate(t), flops, host_.op); }
  // A kernel whose calibration was measured inside a framework (the grouped-GEMM tables come
  // from PyTorch autograd runs), so the in-step efficiency is already part of its time.
  void framework_kernel(Time t, double flops) { launch_item(t, flops, host_.op); }
  // A Transformer Engine module call: its host time before the first launch; the module's
  // kernels follow as module_kernel (each HostCosts::launch, the first included in `module`).
  void module() {
    const Time h = host_.module > host_.launch ? host_.module - host_.launch : Time::zero();
    host_item(h);
  }
  void module_kernel(Time t, double flops = 0) { launch_item(derate(t), flops, host_.launch); }
  // A framework-measured kernel (see framework_kernel) launched inside a module.
  void module_framework_kernel(Time t, double flops) { launch_item(t, flops, host_.launch); }
  // TP communication of `comm` that can hide behind `hidden` of adjacent GEMM time.
  void tp(Time comm, Time hidden, const CollCall& call) {
    if (comm <= Time::zero()) return;
    push(captured() ? Time::zero() : host_.nccl, comm > hidden ? comm - hidden : Time::zero(),
         false);
    blk_.colls.push_back(call);
  }
  void exposed(Time t) { push(Time::zero(), t, false); }
  // The per-expert host work of one GroupedLinear GEMM call over `experts` local experts
  // (HostCosts::expert each: split arithmetic, per-expert workspace / scale / alpha set-up).
  void expert_host(int64_t experts) { host_item(host_.expert * experts); }
  // Host-only work (no kernel); after a host_sync() it starts the next segment (the host does
  // it once the GPU has reached the sync).
  void host_item(Time h) {
    if (captured() || h <= Time::zero()) return;
    if (cur_.d2h) close();
    push(h, Time::zero(), true);
  }
  // A device-to-host synchronisation after the kernels so far (dropless MoE token counts):
  // the host waits until the GPU has run them, plus a round trip. Ignored inside a
  // full-iteration graph (the loader refuses a model that needs one there).
  void host_sync(const char* name = "token counts (D2H)") {
    if (full_graph_) return;
    cur_.d2h = true;
    cur_.d2h_name = name;
  }
  // A region captured by the CUDA-graph scope `scope` (a CudaGraphScope bit): one graph launch
  // (an op calling graph.replay()) replaces the launches of the kernels inside. No-op unless
  // cuda_graphs is "scopes" and the scope is one of FrameworkOptions::cuda_graph_scopes.
  void begin_graph(unsigned scope) {
    if (!(scopes_ & scope) || in_graph_) return;
    host_item(host_.op + host_.graph);
    in_graph_ = true;
    blk_.graphs++;
  }
  void end_graph() { in_graph_ = false; }
  void sync(Dim d, Time t, const char* name, const CollCall& call, const char* next_name) {
    cur_.sync_dim = static_cast<int>(d);
    cur_.sync = t;
    cur_.sync_name = name;
    cur_.sync_host = captured() ? Time::zero() : host_.nccl;
    blk_.colls.push_back(call);
    close();
    cur_.name = next_name;
    cur_.experts = std::string(next_name) == "experts";
  }
  // Appends the chain of a finished segment (its kernels, host launches and exposed TP), its
  // synchronisation folded in as `extra` GPU time at the end.
  void append(const Segment& s, Time extra);
  Block finish() {
    if (cur_.d2h || !lines_.empty()) close();
    return std::move(blk_);
  }

 private:
  bool captured() const { return full_graph_ || in_graph_; }
  Time derate(Time t) const {
    return Time::from_ps(static_cast<int64_t>(std::llround(static_cast<double>(t.ps()) / eff_)));
  }
  void launch_item(Time t, double flops, Time h) {
    if (cur_.d2h) close();  // the kernels after a host sync form a new segment
    push(captured() ? Time::zero() : h, t, true);
    blk_.flops += flops;
    blk_.kernels++;
    if (!captured()) blk_.launches++;
  }
  // One chain item: host time h, then GPU time t (scaled at replay, or not: TP).
  void push(Time h, Time t, bool scaled) {
    H_ += h;
    lines_.push_back({H_, scaled_, unscaled_});
    (scaled ? scaled_ : unscaled_) += t;
  }
  // Ends the current segment (its span from the chain) and starts an empty one.
  void close();

  struct Item {
    Time host;      // H_1..j
    Time scaled;    // scaled GPU time before item j
    Time unscaled;  // unscaled GPU time before item j
  };
  HostCosts host_;
  double eff_;
  bool full_graph_;
  unsigned scopes_;  // captured CudaGraphScope bits (0 unless cuda_graphs is "scopes")
  bool in_graph_ = false;
  std::vector<Item> lines_;
  Time H_, scaled_, unscaled_;
  Segment cur_;
  Block blk_;
};

// One Transformer Engine quantise of `elements` BF16 values before a GEMM of precision recipe
// `p` (nothing in BF16), launched inside a module: one fused cast writing every copy the GEMMs
// need (ComputeModel::quantized_copies). Current scaling first runs the three kernels of
// Float8CurrentScalingQuantizer::quantize_impl's amax and scale (transformer_engine/pytorch/csrc/
// quantizer.cpp and common/recipe/current_scaling.cu, v2.9 to v2.16, the releases' containers):
// launch_amax_kernel's one-thread zero_amax_kernel, the amax reduction over the input (elements ·
// 2 bytes, HBM-bound), compute_scale_from_amax_kernel on one FP32 value; the one-value kernels
// take the kernel floor. Four launches per quantise in all.
inline void quantize_kernels(BlockBuilder& b, const ComputeModel& c, PrecisionRecipe p,
                             double elements) {
  const DType gd = gemm_dtype(p);
  if (gd == DType::kBf16) return;
  if (p == PrecisionRecipe::kFp8Current) {
    b.module_kernel(c.memory_bound(sizeof(float)));  // zero the amax
    b.module_kernel(c.memory_bound(elements * 2.0));
    b.module_kernel(c.memory_bound(sizeof(float)));  // scale from the amax
  }
  b.module_kernel(c.quantize(static_cast<int64_t>(elements), gd));
}

}  // namespace fleetsim::step_internal
