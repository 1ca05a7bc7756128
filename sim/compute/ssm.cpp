// Mamba-2 SSD chunked-scan kernel times from calibration/kernels/ssm.csv (imported from
// calibration/sources/ssm-kernels.csv; documented in calibration/KERNELS.md).
//
// The only published SSD timings with a shape are TileLang's chunk_scan sub-kernel, forward, on
// H800 (six sequence lengths). Their achieved TFLOP/s (by their formula), interpolated in
// log2(tokens) and clamped at the ends, is the compute rate of every SSD kernel. A GPU without
// rows takes the H800 rate times the ratio of bf16 dense peaks (H800 = H100 compute, 989
// TFLOP/s) and says so. Without the table (a data directory lacking ssm.csv), 0.5 x bf16 peak,
// as attention's no-table default.
//
// ssd_kernels lists the kernels mamba_ssm 2.3.1 launches (the version Megatron-Bridge 0.3-0.6
// pins, uv.lock; mamba_ssm/ops/triton/ssd_combined.py _mamba_chunk_scan_combined_fwd / _bwd as
// MambaSplitConv1dScanCombinedFn calls them with z and without rmsnorm_weight, which is how
// Megatron-Core's MambaMixer._ssm_training calls it). Each Triton kernel takes the larger of
// its FLOPs at the rate above and the bytes of the tensors it reads and writes (their shapes
// and dtypes in the wrappers of ssd_chunk_state.py, ssd_state_passing.py, ssd_bmm.py,
// ssd_chunk_scan.py; states and C·Bᵀ in fp32 where the code asks for it) at the memory-bound
// bandwidth: at a chunk of 128 the fp32 chunk states alone are d·N/128 · 4 bytes per token,
// more than the FLOPs take on a GPU with a high tensor rate. The small PyTorch ops around them
// (workspace memsets, the .sum() reductions over splits and tiles, flip / cumsum / add of ddA,
// dt.clone()) are memory-bound kernels on their own bytes (the kernel floor, mostly).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

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

double ComputeModel::Impl::ssd_rate_tflops(double tokens) const {
  if (ssd_rate.empty()) return kDefaultAttnEff * peak[di(DType::kBf16)];
  const auto& v = ssd_rate;
  const double x = std::log2(tokens);
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
  return r * ssd_scale;
}

Time ComputeModel::ssd_chunk_scan(const SsdShape& s) const {
  const double rate =
      impl_->ssd_rate_tflops(static_cast<double>(s.batch) * static_cast<double>(s.seq));
  return us_to_time(chunk_scan_flops(s) / (rate * 1e12) * 1e6);
}

namespace {

// The kernels of one chunked-scan call, forward or backward, with the shape's tensor sizes.
class SsdKernels {
 public:
  SsdKernels(const ComputeModel& c, const SsdShape& s, double rate_flops)
      : c_(c), rate_(rate_flops) {
    const double T = static_cast<double>(s.batch) * static_cast<double>(s.seq);
    const double d = static_cast<double>(s.heads) * s.head_dim, g = s.groups, n = s.state;
    const double chunks =
        static_cast<double>(s.batch) * std::ceil(static_cast<double>(s.seq) / s.chunk);
    h_ = s.heads;
    Q_ = s.chunk;
    hc_ = chunks * h_ * 4;
    // Tensor sizes in bytes: x / z / out / dout [T, d] bf16; B or C [T, G·N] bf16 and their
    // fp32 gradient partials; dt [T, h] bf16; dt_out / dA_cumsum / ddA [b, h, chunks, Q] fp32;
    // the chunk states [b, chunks, h, p, N] fp32 or bf16; C·Bᵀ [b, chunks, G, Q, Q] fp32; the
    // dD partials [Q / 32, b, chunks, h] fp32 (chunk_scan_bwd_dz, _chunk_state_bwd_dx).
    X_ = T * d * 2;
    Bc_ = T * g * n * 2;
    Bf_ = T * g * n * 4;
    dt_ = T * h_ * 2;
    H4_ = chunks * Q_ * h_ * 4;
    S4_ = chunks * d * n * 4;
    S2_ = chunks * d * n * 2;
    CB_ = chunks * g * Q_ * Q_ * 4;
    DD_ = std::ceil(Q_ / 32.0) * hc_;
    state_fl_ = 2 * T * d * n;    // x·B (chunk_state), dout·C, x·dstates, dout·states
    cb_fl_ = 2 * T * Q_ * g * n;  // C·Bᵀ per chunk and group, and its gradients
    diag_fl_ = T * Q_ * d;        // the causal half of a [Q, Q] x [Q, p] product per head
  }

  std::vector<ComputeModel::SsdKernel> forward(Time chunk_scan, double chunk_scan_flops) {
    cumsum();
    chunk_state();
    triton("state_passing_fwd", 0, S4_ + S2_);  // out_dtype = C.dtype
    bmm();
    // reads C·Bᵀ, x, dt, dA, C, the bf16 states and z; writes out and out_x
    const Time mem = c_.memory_bound(CB_ + 2 * X_ + 2 * H4_ + Bc_ + S2_ + 2 * X_);
    k_.push_back({"chunk_scan_fwd", std::max(chunk_scan, mem), chunk_scan_flops});
    return std::move(k_);
  }

  std::vector<ComputeModel::SsdKernel> backward() {
    small("dt.clone", 2 * dt_);
    cumsum();
    bmm();
    chunk_state();
    triton("state_passing_fwd", 0, 2 * S4_);  // the backward's recompute keeps fp32 states
    triton("chunk_scan_bwd_dz", 0, 6 * X_);   // x, z, out_x, dout in; dz, dout_x out
    small("dD.sum", DD_ + h_ * 4);
    triton("chunk_scan_bwd_dstates", state_fl_, Bc_ + H4_ + X_ + S4_);
    triton("state_passing_bwd", 0, 2 * S4_ + 2 * S2_);
    small("ddA_chunk_cumsum.sum", 2 * hc_);
    small("zeros dD", DD_);
    small("init_to_zero ddt", H4_);
    small("init_to_zero dD", DD_);
    triton("chunk_scan_chunk_state_bwd_dx", diag_fl_ + state_fl_,
           3 * X_ + 3 * H4_ + Bc_ + CB_ + S2_);  // x, dout, dx; dt, dA, ddt
    small("dD.sum", DD_ + h_ * 4);
    bwd_db_dc();
    triton("chunk_scan_bwd_dcb", diag_fl_, 2 * X_ + 2 * H4_ + CB_);
    small("dCB.sum", 2 * CB_);
    triton("bmm_chunk_bwd dB", cb_fl_, 2 * Bc_ + CB_ + Bf_);
    triton("bmm_chunk_bwd dC", cb_fl_, 2 * Bc_ + CB_ + Bf_);
    small("ddA_prev[-1] +=", 3 * hc_);
    small("flip", 2 * H4_);
    small("cumsum", 2 * H4_);
    small("flip", 2 * H4_);
    // writes [b, h, chunks, Q / 32, Q] fp32 partials, then sums them (dim 3)
    const double tiles = std::ceil(Q_ / 32.0);
    triton("chunk_scan_bwd_ddAcs_stable", diag_fl_, 2 * X_ + 2 * H4_ + CB_ + tiles * H4_);
    small("ddAcs.sum", tiles * H4_ + H4_);
    small("ddA_next + ddA_prev", 3 * H4_);
    small("ddA +=", 3 * H4_);
    small("init_to_zero dA", h_ * 4);
    small("init_to_zero ddt_bias", h_ * 4);
    triton("chunk_cumsum_bwd", 0, 2 * H4_ + 2 * dt_);
    return std::move(k_);
  }

 private:
  void triton(const char* name, double flops, double bytes) {
    const Time mem = c_.memory_bound(bytes);
    const Time fl = us_to_time(flops / rate_ * 1e6);
    k_.push_back({name, std::max(mem, fl), flops});
  }
  void small(const char* name, double bytes) { k_.push_back({name, c_.memory_bound(bytes), 0}); }
  void cumsum() { triton("chunk_cumsum_fwd", 0, dt_ + 2 * H4_); }
  void chunk_state() { triton("chunk_state_fwd", state_fl_, X_ + Bc_ + 2 * H4_ + S4_); }
  void bmm() { triton("bmm_chunk_fwd", cb_fl_, 2 * Bc_ + CB_); }
  // dB (x, bf16 dstates, B, dt, dA in; fp32 dB partials, ddA out) and dC (bf16 states, dA,
  // dout, C in; fp32 dC partials, ddA_prev out), each with its zeroed ddA workspace and the
  // .sum() over head splits; dB's ddA cumsum.
  void bwd_db_dc() {
    small("init_to_zero ddA", H4_);
    triton("chunk_state_bwd_db", state_fl_, X_ + S2_ + Bc_ + 3 * H4_ + Bf_);
    small("dB.sum", 2 * Bf_);
    small("ddA.cumsum", 2 * H4_);
    small("init_to_zero ddA_prev", H4_);
    triton("chunk_scan_bwd_dc", state_fl_, S2_ + 2 * H4_ + X_ + Bc_ + Bf_);
    small("dC.sum", 2 * Bf_);
  }

  const ComputeModel& c_;
  double rate_;
  double h_, Q_, hc_, X_, Bc_, Bf_, dt_, H4_, S4_, S2_, CB_, DD_;
  double state_fl_, cb_fl_, diag_fl_;
  std::vector<ComputeModel::SsdKernel> k_;
};

}  // namespace

std::vector<ComputeModel::SsdKernel> ComputeModel::ssd_kernels(const SsdShape& s,
                                                               bool backward) const {
  const double T = static_cast<double>(s.batch) * static_cast<double>(s.seq);
  SsdKernels k(*this, s, impl_->ssd_rate_tflops(T) * 1e12);
  return backward ? k.backward() : k.forward(ssd_chunk_scan(s), chunk_scan_flops(s));
}

Time ComputeModel::ssd_scan(const SsdShape& s, bool backward) const {
  Time t = Time::zero();
  for (const SsdKernel& k : ssd_kernels(s, backward))
    t += k.time;
  return t;
}

}  // namespace fleetsim
