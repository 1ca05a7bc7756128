// Gated DeltaNet chunk-kernel and DeepSeek sparse-MLA times from calibration/kernels/ssm.csv
// (imported from calibration/sources/ssm-kernels.csv; documented in calibration/KERNELS.md).
//
// Gated DeltaNet: the FLA rows (flash-linear-attention's Triton chunk_gated_delta_rule, which
// Megatron-Core's GatedDeltaNet calls; the H800 rows are a Paddle port of the same kernels) of
// the GPU give an achieved TFLOP/s by log2(FLOPs), interpolated and clamped at the ends; FLOPs
// per token are heads · (6·dk·dv + 1.5·C·(dk + dv) + C²) (model.h gdn_chunk_flops_per_token),
// the count the table's flops column uses. The backward takes the forward's time times the mean
// (fwd+bwd − fwd) / fwd of the measured pairs (GB200, six shapes). A GPU without FLA rows takes
// the rows of its generation's measured GPU (Hopper: H800; others: B200) times the ratio of bf16
// dense peaks, and says so; without the table, 0.5 x bf16 peak and a backward of 2x the forward.
//
// Sparse MLA: TileLang's forward and backward kernels publish one approximate TFLOP/s each
// (H800 forward 600, backward 100; H200 backward 115); the forward counts
// 2·tokens·heads·keys·(2·kv_lora_rank + rope), the backward 2.5x that. A GPU without its row
// takes H800's times the bf16 peak ratio, and says so.
#include <cmath>
#include <filesystem>

#include "compute/model_internal.h"

namespace fleetsim {

using namespace compute_internal;

namespace {

// topologies/sources/hardware-specs.md, bf16 dense: H800 = H100 SXM compute; B200.
constexpr double kH800Bf16Peak = 989.0;
constexpr double kB200Bf16Peak = 2250.0;
constexpr double kSparseBwdFlopRatio = 2.5;

double gdn_flops(const GdnShape& s) {
  const double tokens = static_cast<double>(s.batch) * static_cast<double>(s.seq);
  const double dk = s.head_dim_k, dv = s.head_dim_v, C = s.chunk;
  return tokens * s.heads * (6.0 * dk * dv + 1.5 * C * (dk + dv) + C * C);
}

double interpolate(const std::vector<std::pair<double, double>>& v, double x) {
  if (x <= v.front().first) return v.front().second;
  if (x >= v.back().first) return v.back().second;
  for (size_t i = 1; i < v.size(); ++i) {
    if (x <= v[i].first) {
      const double f = (x - v[i - 1].first) / (v[i].first - v[i - 1].first);
      return v[i - 1].second + f * (v[i].second - v[i - 1].second);
    }
  }
  return v.back().second;
}

bool hopper(const std::string& model) {
  return !model.empty() && model[0] == 'H';
}

}  // namespace

void ComputeModel::Impl::load_linear_attention(const GpuSpec& gpu, const std::string& file) {
  std::vector<KernelRow> rows;
  if (std::filesystem::exists(file)) rows = read_kernel_table(file);
  auto fla_fwd = [&](const std::string& g) {
    std::vector<std::pair<double, double>> v;
    for (const KernelRow& r : rows)
      if (r.gpu == g && r.kernel == "gated_deltanet_fwd" && r.impl == "fla" && r.flops > 0)
        v.emplace_back(std::log2(r.flops), r.flops / (r.time_us * 1e-6) / 1e12);
    std::sort(v.begin(), v.end());
    return v;
  };
  // Backward / forward time ratio over the measured fwd+bwd pairs.
  double sum = 0;
  int pairs = 0;
  for (const KernelRow& fb : rows) {
    if (fb.kernel != "gated_deltanet_fwd_bwd") continue;
    for (const KernelRow& f : rows) {
      if (f.kernel == "gated_deltanet_fwd" && f.gpu == fb.gpu && f.impl == fb.impl &&
          f.batch == fb.batch && f.seq_q == fb.seq_q && f.heads == fb.heads &&
          f.head_dim_qk == fb.head_dim_qk) {
        sum += (fb.time_us - f.time_us) / f.time_us;
        ++pairs;
        break;
      }
    }
  }
  gdn_bwd_ratio = pairs > 0 ? sum / pairs : 2.0;
  const std::string bwd = pairs > 0 ? "backward " + fmt(gdn_bwd_ratio, 3) + " x forward (" +
                                          std::to_string(pairs) + " measured fwd+bwd pairs)"
                                    : "backward 2 x forward (no measured pair)";
  gdn_rate = fla_fwd(gpu.model);
  if (!gdn_rate.empty()) {
    gdn_note = "gated deltanet: " + std::to_string(gdn_rate.size()) + " measured FLA rows on " +
               gpu.model + " (" + file + "), " + bwd;
  } else {
    const std::string from = hopper(gpu.model) ? "H800" : "B200";
    gdn_rate = fla_fwd(from);
    gdn_fallback = true;
    if (!gdn_rate.empty()) {
      gdn_scale = peak[di(DType::kBf16)] / (from == "H800" ? kH800Bf16Peak : kB200Bf16Peak);
      gdn_note = gpu.model + ": no Gated DeltaNet rows; the " + from + " FLA rate (" + file +
                 ") x bf16 peak ratio " + fmt(gdn_scale, 4) + ", " + bwd +
                 " (calibration/KERNELS.md)";
    } else {
      gdn_note = gpu.model + ": no Gated DeltaNet table; chunk kernel at " +
                 fmt(kDefaultAttnEff, 2) + " x bf16 peak, " + bwd;
    }
  }
  auto rate_of = [&](const std::string& g, const char* kernel) {
    for (const KernelRow& r : rows)
      if (r.gpu == g && r.kernel == kernel && r.tflops > 0) return r.tflops;
    return 0.0;
  };
  const double scale = peak[di(DType::kBf16)] / kH800Bf16Peak;
  std::string borrowed;
  sparse_fwd_tflops = rate_of(gpu.model, "sparse_mla_fwd");
  sparse_bwd_tflops = rate_of(gpu.model, "sparse_mla_bwd");
  if (sparse_fwd_tflops == 0) {
    sparse_fwd_tflops = rate_of("H800", "sparse_mla_fwd") * scale;
    borrowed += " forward";
  }
  if (sparse_bwd_tflops == 0) {
    sparse_bwd_tflops = rate_of("H800", "sparse_mla_bwd") * scale;
    borrowed += " backward";
  }
  sparse_fallback = !borrowed.empty();
  const double dflt = kDefaultAttnEff * peak[di(DType::kBf16)];
  if (sparse_fwd_tflops == 0) sparse_fwd_tflops = dflt;
  if (sparse_bwd_tflops == 0) sparse_bwd_tflops = dflt;
  sparse_note =
      (sparse_fallback ? gpu.model + ": no sparse MLA row for the" + borrowed +
                             "; the H800 TileLang rate x bf16 peak ratio " + fmt(scale, 4) + ", "
                       : std::string("sparse mla: TileLang rates on ") + gpu.model + ", ") +
      "forward " + fmt(sparse_fwd_tflops, 4) + " / backward " + fmt(sparse_bwd_tflops, 4) +
      " TFLOP/s (" + file + ")";
}

Time ComputeModel::gdn_chunk(const GdnShape& s, bool backward) const {
  const Impl& im = *impl_;
  const double flops = gdn_flops(s);
  double rate = kDefaultAttnEff * im.peak[di(DType::kBf16)];
  if (!im.gdn_rate.empty()) rate = interpolate(im.gdn_rate, std::log2(flops)) * im.gdn_scale;
  const double fwd_us = flops / (rate * 1e12) * 1e6;
  return us_to_time(backward ? fwd_us * im.gdn_bwd_ratio : fwd_us);
}

std::string ComputeModel::gdn_source(bool* fallback) const {
  if (fallback) *fallback = impl_->gdn_fallback;
  return impl_->gdn_note;
}

Time ComputeModel::sparse_mla(const SparseMlaShape& s, bool backward) const {
  const Impl& im = *impl_;
  const double L = static_cast<double>(s.seq), k = s.topk;
  const double keys = L > k ? k - k * k / (2.0 * L) : L / 2.0;
  const double fwd =
      2.0 * static_cast<double>(s.batch) * L * s.heads * keys * (2.0 * s.kv_lora_rank + s.rope_dim);
  const double flops = backward ? kSparseBwdFlopRatio * fwd : fwd;
  const double rate = backward ? im.sparse_bwd_tflops : im.sparse_fwd_tflops;
  return us_to_time(flops / (rate * 1e12) * 1e6);
}

std::string ComputeModel::sparse_mla_source(bool* fallback) const {
  if (fallback) *fallback = impl_->sparse_fallback;
  return impl_->sparse_note;
}

}  // namespace fleetsim
