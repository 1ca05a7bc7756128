// Mamba-2 SSD chunked-scan kernel times from calibration/kernels/ssm.csv (imported from
// calibration/sources/ssm-kernels.csv; documented in calibration/KERNELS.md).
//
// The only published SSD timings with a shape are TileLang's chunk_scan sub-kernel, forward, on
// H800 (six sequence lengths). Model: the achieved TFLOP/s of those rows (by their formula),
// interpolated in log2(tokens) and clamped at the ends, is the rate of every SSD sub-kernel
// (bmm_chunk, chunk_state, chunk_scan; FLOPs as model.h's ssd_scan_flops_per_token); the
// backward (mamba_ssm ssd_combined.py, _mamba_chunk_scan_combined_bwd) first recomputes the
// chunk states and C·Bᵀ, which the forward does not save (2·Q·G·N + 2·d·N), then runs two
// gradient products per forward product (twice the forward FLOPs), at the same rate. A GPU without
// rows takes the H800 rate times the ratio of bf16 dense peaks (H800 = H100 compute, 989 TFLOP/s)
// and says so. Without the table (a data directory lacking ssm.csv), 0.5 x bf16 peak, as
// attention's no-table default.
#include <cmath>
#include <filesystem>

#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

namespace {

constexpr double kH800Bf16Peak = 989.0;  // topologies/sources/hardware-specs.md: H800 = H100 SXM

double chunk_scan_flops(const SsdShape& s) {
  const double tokens = static_cast<double>(s.batch) * static_cast<double>(s.seq);
  const double d = static_cast<double>(s.heads) * s.head_dim;
  return tokens * (s.chunk * d + 2.0 * d * s.state);
}

double scan_flops(const SsdShape& s) {
  const double tokens = static_cast<double>(s.batch) * static_cast<double>(s.seq);
  const double d = static_cast<double>(s.heads) * s.head_dim;
  const double Q = s.chunk, G = s.groups, N = s.state;
  return tokens * (2.0 * Q * G * N + 2.0 * d * N + Q * d + 2.0 * d * N);
}

}  // namespace

void ComputeModel::Impl::load_ssm(const GpuSpec& gpu, const std::string& file) {
  std::vector<KernelRow> rows;
  if (std::filesystem::exists(file)) rows = read_kernel_table(file);
  auto rows_of = [&](const std::string& g) {
    std::vector<std::pair<double, double>> v;
    for (const KernelRow& r : rows)
      if (r.gpu == g && r.kernel == "mamba2_ssd_chunk_scan_fwd" && r.time_us > 0)
        v.emplace_back(std::log2(r.batch * r.seq_q), r.flops / (r.time_us * 1e-6) / 1e12);
    std::sort(v.begin(), v.end());
    return v;
  };
  ssd_rate = rows_of(gpu.model);
  if (!ssd_rate.empty()) {
    ssd_note = "mamba2 ssd: " + std::to_string(ssd_rate.size()) + " measured chunk_scan rows on " +
               gpu.model + " (" + file + "), rate applied to every SSD sub-kernel and the backward";
    return;
  }
  ssd_fallback = true;
  ssd_rate = rows_of("H800");
  if (!ssd_rate.empty()) {
    ssd_scale = peak[di(DType::kBf16)] / kH800Bf16Peak;
    ssd_note = gpu.model + ": no Mamba-2 SSD rows; SSD scan at the H800 chunk_scan rate (" +
               fmt(ssd_rate.back().second, 4) + " TFLOP/s at the longest row, " + file +
               ") x bf16 peak ratio " + fmt(ssd_scale, 4) + " (calibration/KERNELS.md)";
    return;
  }
  ssd_note =
      gpu.model + ": no Mamba-2 SSD table; SSD scan at " + fmt(kDefaultAttnEff, 2) + " x bf16 peak";
}

std::string ComputeModel::ssd_source(bool* fallback) const {
  if (fallback) *fallback = impl_->ssd_fallback;
  return impl_->ssd_note;
}

Time ComputeModel::ssd_chunk_scan(const SsdShape& s) const {
  const Impl& im = *impl_;
  double rate = kDefaultAttnEff * im.peak[di(DType::kBf16)];
  const auto& v = im.ssd_rate;
  if (!v.empty()) {
    const double x = std::log2(static_cast<double>(s.batch) * static_cast<double>(s.seq));
    double r = v.front().second;
    if (x >= v.back().first) {
      r = v.back().second;
    } else if (x > v.front().first) {
      for (size_t i = 1; i < v.size(); ++i) {
        if (x <= v[i].first) {
          const double f = (x - v[i - 1].first) / (v[i].first - v[i - 1].first);
          r = v[i - 1].second + f * (v[i].second - v[i - 1].second);
          break;
        }
      }
    }
    rate = r * im.ssd_scale;
  }
  return us_to_time(chunk_scan_flops(s) / (rate * 1e12) * 1e6);
}

Time ComputeModel::ssd_scan(const SsdShape& s, bool backward) const {
  const Time cs = ssd_chunk_scan(s);
  const double tokens = static_cast<double>(s.batch) * static_cast<double>(s.seq);
  const double d = static_cast<double>(s.heads) * s.head_dim;
  const double recompute = tokens * (2.0 * s.chunk * s.groups * s.state + 2.0 * d * s.state);
  const double flops = backward ? 2.0 * scan_flops(s) + recompute : scan_flops(s);
  const double ratio = flops / chunk_scan_flops(s);
  return Time::from_ps(static_cast<int64_t>(std::llround(static_cast<double>(cs.ps()) * ratio)));
}

}  // namespace fleetsim
