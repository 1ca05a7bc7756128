// Memory-bound kernels and quantization casts: bytes moved through HBM at the measured achieved
// bandwidth, never below the smallest measured kernel time. Sources: calibration/KERNELS.md.
#include <map>

#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

void ComputeModel::Impl::load_memory(const GpuSpec& gpu, const KernelTables& t, ComputeModel& cm) {
  auto mem_for = [&](const std::string& g, bool quant) {
    std::vector<const KernelRow*> v;
    for (const auto& r : t.mem) {
      const bool is_quant = r.kernel.find("quant") != std::string::npos;
      if (r.gpu == g && is_quant == quant) v.push_back(&r);
    }
    return v;
  };
  auto pick = [&](bool quant) {
    std::pair<std::string, std::vector<const KernelRow*>> best{gpu.model,
                                                               mem_for(gpu.model, quant)};
    for (const auto& s : siblings(gpu.model))
      if (best.second.empty()) best = {s, mem_for(s, quant)};
    return best;
  };
  const auto [norm_gpu, norm_rows] = pick(false);
  const auto [quant_gpu, quant_rows] = pick(true);
  // Best implementation per shape, then the median over shapes moving >= 32 MiB.
  std::map<std::string, double> best;
  std::vector<const KernelRow*> all = norm_rows;
  all.insert(all.end(), quant_rows.begin(), quant_rows.end());
  std::string bw_gpu = norm_rows.empty() ? quant_gpu : norm_gpu;
  if (!norm_rows.empty() && !quant_rows.empty() && quant_gpu == gpu.model) bw_gpu = gpu.model;
  for (const KernelRow* r : all) {
    if (r->gpu != bw_gpu || r->bytes < 32.0 * 1024 * 1024) continue;
    const std::string key = r->kernel + "/" + r->dtype + "/" + fmt(r->m, 9) + "x" + fmt(r->n, 9) +
                            "x" + fmt(r->k, 9) + "x" + fmt(r->batch, 9);
    best[key] = std::max(best[key], r->gbps);
  }
  std::vector<double> v;
  for (const auto& [key, g] : best)
    v.push_back(g);
  if (!v.empty()) {
    hbm_Bps = median(v) * 1e9;
    cm.sources_.push_back("memory-bound: median of best-implementation rows >= 32 MiB on " +
                          bw_gpu + " = " + fmt(hbm_Bps * 1e-9, 5) + " GB/s (" +
                          fmt(hbm_Bps / gpu.hbm_bandwidth.bytes_per_second(), 3) +
                          " of datasheet), " + t.mem_file);
    if (bw_gpu != gpu.model) {
      cm.sources_.push_back("memory-bound: " + gpu.model + " has no rows; uses sibling " + bw_gpu);
      cm.warnings_.push_back(gpu.model + ": no memory-bound rows of its own; uses " + bw_gpu +
                             "'s measured bandwidth unscaled (fallback)");
    }
  } else {
    hbm_Bps = kDefaultHbmFraction * gpu.hbm_bandwidth.bytes_per_second();
    cm.warnings_.push_back(gpu.model + ": no memory-bound rows; HBM bandwidth = " +
                           fmt(kDefaultHbmFraction, 2) + " x datasheet");
  }
  double floor = 0;
  for (const KernelRow* r : norm_rows)
    if (r->kernel.find("norm") != std::string::npos)
      floor = floor == 0 ? r->time_us : std::min(floor, r->time_us);
  floor_us = floor > 0 ? floor : kDefaultFloorUs;
  cm.sources_.push_back("kernel floor: " + fmt(floor_us) +
                        " us = smallest measured norm kernel on " + norm_gpu);
  std::vector<double> q;
  for (const KernelRow* r : quant_rows)
    q.push_back(r->gbps);
  quant_Bps = q.empty() ? hbm_Bps : median(q) * 1e9;
  if (!q.empty())
    cm.sources_.push_back("quantize: median of " + std::to_string(q.size()) +
                          " quantization rows on " + quant_gpu + " = " + fmt(quant_Bps * 1e-9, 5) +
                          " GB/s");
  if (!q.empty() && quant_gpu != gpu.model) {
    // The borrowed table is named in the sources too (as the GEMM fallback is), so that a
    // report's compute_sources alone says which of its kernels are not the GPU's own.
    const std::string w = gpu.model + ": no quantization rows of its own; quantize uses " +
                          quant_gpu + "'s measured bandwidth (fallback)";
    cm.sources_.push_back("quantize: " + w);
    cm.warnings_.push_back(w);
  }
}

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
