// MoE routing and token-permutation kernels: max(floor, bytes / effective bandwidth), with the
// floors and bandwidths taken from the measured kernel rows of validation/moe-host-kernels.csv
// (validation/moe-host.md §3; tests/compute/test_moe_ops.cpp checks the numbers below against
// that file and reproduces the rows). What each kernel moves:
//   router (scores + top-k)  tokens · experts · 4 bytes (the FP32 score matrix)
//   permute                  (tokens + copies) · hidden · 2 (read each token, write each copy)
//   unpermute                (copies + tokens) · hidden · 2 (read each copy, write each token)
// which is how the rows' TB/s columns are defined (time_us · achieved_gbps = those bytes).
#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

namespace {

using K = ComputeModel::MoeKernel;

// Megatron-LM PR #6456 (https://github.com/NVIDIA/Megatron-LM/pull/6456), router selection
// microbenchmark (CUDA-graph replay, 128 experts, 128-512 tokens): the fused softmax + top-k
// kernel takes 4.1 us at every size; the unfused reference is 4 kernels taking 16.4 us in all
// at 128 tokens, i.e. 4.1 us each.
constexpr double kRouterFusedFloorUs = 4.1;
constexpr double kRouterUnfusedFloorUs = 16.4 / 4.0;
// TensorRT-LLM PR #15656 (https://github.com/NVIDIA/TensorRT-LLM/pull/15656), TRTLLM-Gen routing
// kernel, 256 experts, top-8: 9.184 us at 8 tokens, 20.448 us at 8192 tokens. The slope is the
// fused router's effective bandwidth over the score matrix: (8192 - 8) · 256 · 4 B / 11.264 us.
constexpr double kRouterFusedBps = (8192.0 - 8.0) * 256.0 * 4.0 / ((20.448 - 9.184) * 1e-6);
// TileOPs PR #603 (https://github.com/tile-ai/TileOPs/pull/603), H200 BF16, 4096 tokens, top-2,
// hidden 4096 (the largest shape): vLLM's moe_permute kernel (the fused CUDA kernel class of
// Transformer Engine's moe_permute) 1780 GB/s, the PyTorch reference (index_select) 1250 GB/s.
// TileOPs PR #608 (https://github.com/tile-ai/TileOPs/pull/608), H200 BF16, 2048 tokens, top-2,
// hidden 4096: fused unpermute (vLLM) 2930 GB/s, the PyTorch gather-mul-sum 250 GB/s.
constexpr double kRowsHbmGbps = 4800;  // H200 datasheet (topologies/sources/hardware-specs.md)
constexpr double kPermuteFusedGbps = 1780, kPermuteUnfusedGbps = 1250;
constexpr double kUnpermuteFusedGbps = 2930, kUnpermuteUnfusedGbps = 250;
// vLLM PR #32892 (https://github.com/vllm-project/vllm/pull/32892): moe_permute takes 15.8 us at
// 1 token (DeepSeek-V2-Lite, 64 experts): the floor of the fused permute, split evenly over its
// two launches (the row-id map and the gather).
constexpr double kPermuteFusedFloorUs = 15.8 / 2.0;

}  // namespace

void ComputeModel::Impl::load_moe_ops(const GpuSpec& gpu, ComputeModel& cm) {
  // The permute rows were measured on H200; another GPU scales their bandwidth by its datasheet
  // HBM bandwidth (the kernels are HBM-bound gathers and scatters).
  const double datasheet = gpu.hbm_bandwidth.bytes_per_second() * 1e-9;
  const bool on_h200 = gpu.model == "H200";
  const double scale = on_h200 || datasheet <= 0 ? 1.0 : datasheet / kRowsHbmGbps;
  auto set = [&](K k, double f_us, double bps) {
    moe_floor_us[static_cast<int>(k)] = f_us;
    moe_Bps[static_cast<int>(k)] = bps;
  };
  set(K::kRouterFused, kRouterFusedFloorUs, kRouterFusedBps);
  set(K::kRouterUnfused, kRouterUnfusedFloorUs, hbm_Bps);
  set(K::kPermuteMapFused, kPermuteFusedFloorUs, hbm_Bps);
  set(K::kPermuteFused, kPermuteFusedFloorUs, kPermuteFusedGbps * 1e9 * scale);
  set(K::kPermuteUnfused, floor_us, kPermuteUnfusedGbps * 1e9 * scale);
  set(K::kUnpermuteFused, floor_us, kUnpermuteFusedGbps * 1e9 * scale);
  set(K::kUnpermuteUnfused, floor_us, kUnpermuteUnfusedGbps * 1e9 * scale);
  cm.sources_.push_back(
      "moe router: fused scores + top-k max(" + fmt(kRouterFusedFloorUs) + " us, bytes / " +
      fmt(kRouterFusedBps * 1e-9, 4) + " GB/s), unfused 4 kernels of max(" +
      fmt(kRouterUnfusedFloorUs) +
      " us, bytes / HBM) (Megatron-LM PR 6456, TensorRT-LLM PR 15656; GPU not stated in the "
      "rows, used on every GPU)");
  cm.sources_.push_back("moe permute / unpermute: fused " + fmt(kPermuteFusedGbps * scale, 4) +
                        " / " + fmt(kUnpermuteFusedGbps * scale, 4) + " GB/s, unfused " +
                        fmt(kPermuteUnfusedGbps * scale, 4) + " / " +
                        fmt(kUnpermuteUnfusedGbps * scale, 4) + " GB/s, fused permute floor 2 x " +
                        fmt(kPermuteFusedFloorUs) +
                        " us (TileOPs PRs 603 / 608 on H200, vLLM PR 32892)" +
                        (on_h200 ? std::string()
                                 : "; " + gpu.model + " has no rows: H200 bandwidths x " +
                                       fmt(scale, 3) + " (datasheet HBM ratio)"));
  moe_ops_warning = on_h200 ? std::string()
                            : gpu.model +
                                  ": no MoE permute / unpermute rows of its own; uses H200's "
                                  "measured bandwidths x " +
                                  fmt(scale, 3) + " (datasheet HBM ratio, fallback)";
}

const std::string& ComputeModel::moe_ops_warning() const {
  return impl_->moe_ops_warning;
}

Time ComputeModel::moe_kernel(MoeKernel kind, double bytes) const {
  const int i = static_cast<int>(kind);
  const double bw = impl_->moe_Bps[i];
  const double t = bytes > 0 && bw > 0 ? bytes / bw * 1e6 : 0.0;
  return us_to_time(std::max(impl_->moe_floor_us[i], t));
}

}  // namespace fleetsim
