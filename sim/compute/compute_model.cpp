// Kernel-time model: loading (ComputeModel::load reads the four published tables and hands them
// to the GEMM, memory-bound, grouped-GEMM and attention models in gemm.cpp, memory_bound.cpp,
// grouped_gemm.cpp and attention.cpp), datasheet peaks, a calibration set on top, and the helpers
// the models share. Which table serves which GPU, and every fallback, is documented in
// calibration/KERNELS.md.
#include "compute/compute_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

#include "compute/model_internal.h"
#include "core/error.h"

namespace fleetsim {

using namespace compute_internal;

namespace {

// Which GPU's GEMM grid serves `model` (the GB200 / GB300 / B300 use the sm_100 B200 grid;
// H200 the sm_90 H100 grid; no per-shape GEMM table of Blackwell Ultra is published).
std::string gemm_table_gpu(const std::string& model) {
  if (model == "B200" || model == "GB200" || model == "B300" || model == "GB300") return "B200";
  if (model == "H100" || model == "H200") return "H100";
  return "";
}

}  // namespace

namespace compute_internal {

std::vector<std::string> siblings(const std::string& model) {
  if (model == "B200") return {"GB200"};
  if (model == "GB200") return {"B200"};
  if (model == "B300") return {"GB300", "GB200", "B200"};
  if (model == "GB300") return {"GB200", "B200"};
  if (model == "H100") return {"H200"};
  if (model == "H200") return {"H100"};
  return {};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::string fmt(double v, int prec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", prec, v);
  return buf;
}

double mamf(const std::vector<KernelRow>& rows, const std::string& gpu, const std::string& dt) {
  for (const auto& r : rows)
    if (r.impl == "mamf" && r.gpu == gpu && r.dtype == dt) return r.tflops;
  return 0;
}

double mamf_ratio(const std::vector<KernelRow>& rows, const std::string& a, const std::string& b) {
  double lsum = 0;
  int n = 0;
  for (const char* dt : {"bf16", "fp8"}) {
    const double x = mamf(rows, a, dt), y = mamf(rows, b, dt);
    if (x > 0 && y > 0) {
      lsum += std::log(x / y);
      ++n;
    }
  }
  return n ? std::exp(lsum / n) : 0.0;
}

}  // namespace compute_internal

ComputeModel::ComputeModel() : impl_(new Impl) {}
ComputeModel::~ComputeModel() {
  delete impl_;
}
ComputeModel::ComputeModel(ComputeModel&& o) noexcept
    : gpu_(std::move(o.gpu_)),
      sources_(std::move(o.sources_)),
      warnings_(std::move(o.warnings_)),
      impl_(o.impl_) {
  o.impl_ = nullptr;
}
ComputeModel& ComputeModel::operator=(ComputeModel&& o) noexcept {
  if (this != &o) {
    delete impl_;
    gpu_ = std::move(o.gpu_);
    sources_ = std::move(o.sources_);
    warnings_ = std::move(o.warnings_);
    impl_ = o.impl_;
    o.impl_ = nullptr;
  }
  return *this;
}
ComputeModel::ComputeModel(const ComputeModel& o)
    : gpu_(o.gpu_),
      sources_(o.sources_),
      warnings_(o.warnings_),
      impl_(o.impl_ ? new Impl(*o.impl_) : nullptr) {}
ComputeModel& ComputeModel::operator=(const ComputeModel& o) {
  if (this != &o) {
    ComputeModel tmp(o);
    *this = std::move(tmp);
  }
  return *this;
}

const std::vector<ComputeModel::FitReport>& ComputeModel::fit_reports() const {
  return impl_->reports;
}
double ComputeModel::hbm_bandwidth_gbps() const {
  return impl_->hbm_Bps * 1e-9;
}
Time ComputeModel::kernel_floor() const {
  return Time::from_us(impl_->floor_us);
}
double ComputeModel::peak_tflops(DType dtype) const {
  return impl_->peak[di(dtype)];
}

namespace {

// Datasheet dense peak by DType from GpuSpec keys: fp32 GEMMs run on TF32 tensor cores (the
// XLA fp32 tables exceed the FP32 SIMT peak 8x), mxfp8 falls back to fp8, nvfp4 to fp4 then fp8.
double spec_peak(const GpuSpec& g, DType d) {
  auto get = [&](const char* key) {
    auto it = g.peak_dense_tflops.find(key);
    return it == g.peak_dense_tflops.end() ? 0.0 : it->second;
  };
  double v = 0;
  switch (d) {
    case DType::kFp32:
      v = get("tf32") > 0 ? get("tf32") : get("fp32");
      break;
    case DType::kBf16:
      v = get("bf16");
      break;
    case DType::kFp8:
      v = get("fp8");
      break;
    case DType::kMxfp8:
      v = get("mxfp8") > 0 ? get("mxfp8") : get("fp8");
      break;
    case DType::kNvfp4:
      v = get("nvfp4") > 0 ? get("nvfp4") : get("fp4") > 0 ? get("fp4") : get("fp8");
      break;
  }
  return v;
}

}  // namespace

void ComputeModel::Impl::load_peaks(const GpuSpec& gpu, ComputeModel& cm) {
  for (DType d : {DType::kFp32, DType::kBf16, DType::kFp8, DType::kMxfp8, DType::kNvfp4})
    peak[di(d)] = spec_peak(gpu, d);
  if (peak[di(DType::kBf16)] <= 0)
    throw InputError("GpuSpec " + gpu.model, "/gpu/peak_dense_tflops/bf16",
                     "expected a positive bf16 dense peak");
  for (DType d : {DType::kFp32, DType::kFp8, DType::kMxfp8, DType::kNvfp4}) {
    if (peak[di(d)] <= 0) {
      peak[di(d)] = d == DType::kFp32           ? peak[1] / 2
                    : peak[di(DType::kFp8)] > 0 ? peak[di(DType::kFp8)]
                                                : peak[1];
      cm.warnings_.push_back(gpu.model + ": no datasheet peak for " + to_string(d) + "; using " +
                             fmt(peak[di(d)], 5) + " TFLOP/s");
    }
  }
}

ComputeModel ComputeModel::load(const GpuSpec& gpu, const std::string& data_dir) {
  ComputeModel cm;
  Impl& im = *cm.impl_;
  cm.gpu_ = gpu.model;
  const std::string dir = data_dir + "/calibration/kernels/";
  KernelTables t;
  t.gemm_file = dir + "gemm.csv";
  t.grouped_file = dir + "grouped_gemm.csv";
  t.attn_file = dir + "attention.csv";
  t.mem_file = dir + "memory.csv";
  t.gemm = read_kernel_table(t.gemm_file);
  t.grouped = read_kernel_table(t.grouped_file);
  t.attn = read_kernel_table(t.attn_file);
  t.mem = read_kernel_table(t.mem_file);

  im.load_peaks(gpu, cm);
  im.load_memory(gpu, t, cm);
  const std::string tgpu = gemm_table_gpu(gpu.model);
  im.load_gemm(gpu, tgpu, t, cm);
  im.load_gemm_cap(gpu, t, cm);
  if (!im.no_tables) im.load_grouped(tgpu, t, cm);
  im.load_attention(gpu, t, cm);
  im.load_ssm(gpu, dir + "ssm.csv");
  im.load_linear_attention(gpu, dir + "ssm.csv");
  im.load_moe_ops(gpu, cm);
  return cm;
}

// A calibration set on top of the published tables (calibration/README.md).
ComputeModel ComputeModel::load(const GpuSpec& gpu, const std::string& data_dir,
                                const std::string& calibration_set_dir) {
  ComputeModel cm = load(gpu, data_dir);
  if (calibration_set_dir.empty()) return cm;
  Impl& im = *cm.impl_;
  const std::vector<CalibrationFile> files = read_calibration_set(calibration_set_dir);
  std::vector<const KernelRow*> gemm_rows[kNumDTypes];
  std::map<std::string, double> best_gbps;  // best bandwidth per memory kernel shape
  double floor = 0;
  std::string others;
  bool matched = false;
  for (const CalibrationFile& f : files) {
    matched = matched || f.gpu == gpu.model;
    if (f.gpu != gpu.model) {
      others += (others.empty() ? "" : ", ") + f.gpu;
      continue;
    }
    const auto hdr = [&](const char* key) {
      const auto it = f.header.find(key);
      return it == f.header.end() ? std::string("?") : it->second;
    };
    cm.sources_.push_back("calibration set " + calibration_set_dir + ": " + f.path + " (" +
                          hdr("generator") + " on " + hdr("device") + ", driver " + hdr("driver") +
                          ", " + hdr("date") + ")");
    for (const KernelRow& r : f.rows) {
      DType d;
      if (r.kernel == "gemm" && parse_dtype(r.dtype, &d)) gemm_rows[di(d)].push_back(&r);
      if (!is_memory_kernel(r.kernel)) continue;
      if (r.kernel.find("norm") != std::string::npos)
        floor = floor == 0 ? r.time_us : std::min(floor, r.time_us);
      if (r.bytes < 32.0 * 1024 * 1024) continue;
      const std::string key = r.kernel + "/" + r.dtype + "/" + fmt(r.m, 9) + "x" + fmt(r.n, 9) +
                              "x" + fmt(r.k, 9) + "x" + fmt(r.bytes, 12);
      best_gbps[key] = std::max(best_gbps[key], r.gbps);
    }
  }
  if (!matched)
    throw InputError(
        calibration_set_dir, "",
        "calibration set has no rows for GPU " + gpu.model + " (it has: " + others + ")");
  for (DType d : {DType::kFp32, DType::kBf16, DType::kFp8, DType::kMxfp8, DType::kNvfp4}) {
    auto& rows = gemm_rows[di(d)];
    if (rows.empty()) continue;
    im.measured[di(d)] = compute_internal::MeasuredGemm::build(rows);
    cm.sources_.push_back("gemm " + std::string(to_string(d)) + ": " + std::to_string(rows.size()) +
                          " measured shapes of the calibration set (" +
                          im.measured[di(d)].describe() +
                          "); outside them the base model corrected at the nearest measured shape");
  }
  if (!im.measured[di(DType::kMxfp8)].ok() && im.measured[di(DType::kFp8)].ok()) {
    im.measured[di(DType::kMxfp8)] = im.measured[di(DType::kFp8)];
    im.mxfp8_borrows_fp8 = true;
    cm.sources_.push_back("gemm mxfp8: the calibration set's fp8 grid x " +
                          fmt(im.mxfp8_over_fp8, 4));
  }
  if (!best_gbps.empty()) {
    std::vector<double> v;
    for (const auto& [key, gb] : best_gbps)
      v.push_back(gb);
    const bool quant_was_hbm = im.quant_Bps == im.hbm_Bps;
    im.hbm_Bps = median(v) * 1e9;
    if (quant_was_hbm) im.quant_Bps = im.hbm_Bps;
    cm.sources_.push_back(
        "memory-bound: median of " + std::to_string(v.size()) +
        " measured rows >= 32 MiB of the calibration set = " + fmt(im.hbm_Bps * 1e-9, 5) +
        " GB/s (" + fmt(im.hbm_Bps / gpu.hbm_bandwidth.bytes_per_second(), 3) + " of datasheet)");
  }
  // The kernel floor stays with the published tables: the harness's small RMSNorm is a plain
  // one-block-per-row kernel whose launch and ramp are slower than cuDNN's (calibration/README.md).
  if (floor > 0)
    cm.sources_.push_back("kernel floor: the calibration set's smallest norm kernel (" +
                          fmt(floor) + " us) is not used; floor " + fmt(im.floor_us) + " us");
  return cm;
}

}  // namespace fleetsim
