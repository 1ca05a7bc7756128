// Kernel-time model: how long one GEMM, attention, grouped GEMM or memory-bound kernel takes on
// one GPU, from the measured tables in calibration/kernels/ (imported from
// calibration/sources/kernel-timings.csv with the source of every row).
//
// Between measured shapes times are interpolated; outside them a per-GPU, per-dtype efficiency
// curve fitted by least squares (Eigen) on that GPU's table is used. The fit is global per GPU
// and dtype — never per model. A GPU without a table falls back to datasheet peaks scaled by a
// documented default efficiency, and says so in warnings().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "topo/system.h"

namespace fleetsim {

// Element format a GEMM's inputs run in.
enum class DType { kFp32, kBf16, kFp8, kMxfp8, kNvfp4 };
const char* to_string(DType d);
bool parse_dtype(const std::string& s, DType* out);
double dtype_bytes(DType d);  // bytes per element (nvfp4 0.5 + scale overhead as documented)

struct AttentionShape {
  int64_t batch = 1;
  int64_t seq_q = 0;
  int64_t seq_kv = 0;  // = seq_q for self-attention
  int heads = 0;       // query heads on this GPU
  int kv_heads = 0;    // key/value heads on this GPU
  int head_dim_qk = 0;
  int head_dim_v = 0;
  bool causal = true;
  int window = 0;  // sliding window (0 = full)
};

// Mamba-2 SSD chunked scan on one GPU: `batch` sequences of `seq` tokens, the GPU's heads and
// B/C groups, head dim, state size and chunk length.
struct SsdShape {
  int64_t batch = 1;
  int64_t seq = 0;
  int heads = 0;
  int head_dim = 0;
  int state = 0;
  int groups = 1;
  int chunk = 0;
};

// Gated DeltaNet chunked delta rule on one GPU: `batch` sequences of `seq` tokens, the GPU's
// value heads (q and k run repeated to them), key / value head dims and chunk length.
struct GdnShape {
  int64_t batch = 1;
  int64_t seq = 0;
  int heads = 0;
  int head_dim_k = 0;
  int head_dim_v = 0;
  int chunk = 64;
};

// DeepSeek sparse attention's core on one GPU: MLA in MQA mode, each of `seq` queries of
// `heads` heads reading `topk` selected latent rows of kv_lora_rank + rope_dim (value:
// kv_lora_rank).
struct SparseMlaShape {
  int64_t batch = 1;
  int64_t seq = 0;
  int heads = 0;
  int topk = 0;
  int kv_lora_rank = 0;
  int rope_dim = 0;
};

class ComputeModel {
 public:
  // Loads <data_dir>/calibration/kernels/{gemm,grouped_gemm,attention,memory}.csv for `gpu`
  // (GpuSpec::model: B200, GB200, H100, H200, ...; data_dir = the directory holding topologies/
  // and calibration/) and fits the efficiency curves. Throws InputError naming the file and line
  // on malformed tables. All query functions are const, allocation-free and O(table rows) at
  // worst (attention), O(1) for GEMM and memory-bound kernels.
  static ComputeModel load(const GpuSpec& gpu, const std::string& data_dir);
  // As above, then applies the calibration set in `calibration_set_dir` (compute/import.h; ""
  // = none): its measured GEMM grids replace the tables for the dtypes it covers (mxfp8 falls
  // back to its fp8 grid), and its memory-bound rows set the HBM bandwidth and kernel floor.
  // InputError if the set has no rows for gpu.model. sources() lists the set's files.
  static ComputeModel load(const GpuSpec& gpu, const std::string& data_dir,
                           const std::string& calibration_set_dir);

  // C[m×n] = A[m×k]·B[k×n], `batch` independent GEMMs of that shape.
  Time gemm(int64_t m, int64_t n, int64_t k, DType dtype, int64_t batch = 1) const;
  // Grouped GEMM (MoE experts): `groups` GEMMs of m_per_group × n × k in one kernel (the
  // forward pass of an expert layer with m_per_group tokens per expert).
  Time grouped_gemm(int64_t groups, int64_t m_per_group, int64_t n, int64_t k, DType dtype) const;
  // Which GEMM of an expert layer [tokens × k]·[k × n] a grouped GEMM is: the forward, the input
  // gradient [tokens × n]·[n × k] or the weight gradient [k × tokens]·[tokens × n].
  enum class GemmPass { kForward, kDgrad, kWgrad };
  // The pass's grouped GEMM over `groups` experts with `tokens_per_group` tokens each. Below
  // grouped_ref_tokens() tokens per expert its rate follows the measured fused-MoE rate against
  // tokens per expert (grouped_gemm.cpp), not the dense GEMM curve.
  Time grouped_gemm(int64_t groups, int64_t tokens_per_group, int64_t n, int64_t k, DType dtype,
                    GemmPass pass) const;
  static int64_t grouped_ref_tokens();
  // MoE routing and token-permutation kernels (moe_ops.cpp): the router's score function +
  // top-k (one fused kernel, or one of the unfused kernels), the permute gather of token copies
  // into expert order and the unpermute (weighted scatter back to token order), fused (Transformer
  // Engine) or unfused (PyTorch ops), each moving `bytes`: max(the rows' floor, bytes / the rows'
  // effective bandwidth).
  enum class MoeKernel {
    kRouterFused,    // scores + top-k in one kernel (moe_router_fusion); bytes: tokens·experts·4
    kRouterUnfused,  // one of the unfused score / top-k / scatter kernels; same bytes
    kPermuteMapFused,   // the fused permute's row-id map; bytes: tokens · experts · 4
    kPermuteFused,      // bytes: (tokens + copies) · hidden · 2
    kPermuteUnfused,    // the index_select gather of the unfused path; same bytes
    kUnpermuteFused,    // bytes: (copies + tokens) · hidden · 2
    kUnpermuteUnfused,  // the scatter_add of the unfused path; same bytes
  };
  Time moe_kernel(MoeKernel kind, double bytes) const;
  // Fused attention (flash / cuDNN SDPA) forward or backward.
  Time attention(const AttentionShape& s, bool backward, DType dtype) const;
  // A memory-bound kernel moving `bytes` (reads + writes) through HBM at achieved bandwidth.
  Time memory_bound(double bytes) const;
  // Cast of `elements` BF16 values to `dtype` (FP8 / MXFP8 / NVFP4 quantization incl. scales),
  // writing quantized_copies(dtype) outputs in one fused kernel.
  Time quantize(int64_t elements, DType dtype) const;
  // Quantized copies one tensor needs for the forward and both backward GEMMs (Transformer
  // Engine, "Performance considerations: handling transposes"): 2 for MXFP8 / NVFP4 (row- and
  // column-wise blocks) and for per-tensor FP8 on Hopper / Ada (a transposed copy); 1 for
  // per-tensor FP8 on Blackwell, which reads FP8 column-wise natively.
  int quantized_copies(DType dtype) const;

  // Mamba-2 SSD (calibration/kernels/ssm.csv, ssm.cpp): the chunk_scan sub-kernel alone
  // (forward, the measured kernel: FLOPs at the measured rate), every kernel of the chunked scan
  // as mamba_ssm's MambaSplitConv1dScanCombinedFn launches it forward or backward (each the
  // larger of its FLOPs at that rate and the bytes of its own tensors at the memory-bound
  // bandwidth), and the sum of those.
  struct SsdKernel {
    const char* name;
    Time time;
    double flops;
  };
  Time ssd_chunk_scan(const SsdShape& s) const;
  std::vector<SsdKernel> ssd_kernels(const SsdShape& s, bool backward) const;
  Time ssd_scan(const SsdShape& s, bool backward) const;
  // Where ssd_scan's times come from; `fallback` set when this GPU has no measured rows (the
  // line is then a warning). Not part of sources(): only models with Mamba-2 layers report it.
  std::string ssd_source(bool* fallback) const;
  // Gated DeltaNet chunk kernel (FLA chunk_gated_delta_rule; calibration/kernels/ssm.csv,
  // linear_attention.cpp), forward or backward; and where its times come from (`fallback` set
  // when this GPU has no measured rows).
  Time gdn_chunk(const GdnShape& s, bool backward) const;
  std::string gdn_source(bool* fallback) const;
  // DeepSeek sparse attention core (TileLang sparse MLA rates, linear_attention.cpp), forward
  // or backward; and its source line.
  Time sparse_mla(const SparseMlaShape& s, bool backward) const;
  std::string sparse_mla_source(bool* fallback) const;
  // The warning that this GPU's MoE permute / unpermute kernels borrow H200's rows (scaled by
  // the datasheet HBM ratio; moe_ops.cpp); empty on H200. Only MoE models report it.
  const std::string& moe_ops_warning() const;

  double peak_tflops(DType dtype) const;  // datasheet dense peak used for the fallback / MFU
  const std::string& gpu() const { return gpu_; }
  // Where the timings come from (table files and their source URLs) and fallbacks taken.
  const std::vector<std::string>& sources() const { return sources_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Quality of each fitted curve on the rows it was fitted to (mean absolute % error).
  struct FitReport {
    std::string table;  // e.g. "gemm B200 bf16 (xla)", "attention GB200 bf16 fwd (cudnn)"
    int rows = 0;
    double mape_percent = 0;
  };
  const std::vector<FitReport>& fit_reports() const;
  // Measured (or, for the fallback, datasheet-derived) HBM bandwidth used by memory_bound() and
  // its per-kernel floor.
  double hbm_bandwidth_gbps() const;
  Time kernel_floor() const;

  // Implementation state (tables, fitted coefficients) lives behind this pointer so that Eigen
  // stays inside sim/compute.
  struct Impl;
  ComputeModel();
  ~ComputeModel();
  ComputeModel(ComputeModel&&) noexcept;
  ComputeModel& operator=(ComputeModel&&) noexcept;
  ComputeModel(const ComputeModel&);
  ComputeModel& operator=(const ComputeModel&);

 private:
  std::string gpu_;
  std::vector<std::string> sources_;
  std::vector<std::string> warnings_;
  Impl* impl_ = nullptr;
};

}  // namespace fleetsim
