// MoE kernel times (sim/compute/moe_ops.cpp, grouped_gemm.cpp) against the measured rows of
// validation/moe-host-kernels.csv they come from: the constants equal the rows, and the model
// at a row's shape reproduces the row.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "compute/compute_model.h"
#include "core/csv.h"
#include "support/fixtures.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

using MK = ComputeModel::MoeKernel;
using Pass = ComputeModel::GemmPass;

GpuSpec gpu(const std::string& model) {
  GpuSpec g;
  g.model = model;
  if (model == "H200" || model == "H100") {
    g.hbm_bandwidth = Bandwidth::gbytes_per_second(model == "H200" ? 4800 : 3350);
    g.peak_dense_tflops = {{"tf32", 494.5}, {"bf16", 989}, {"fp8", 1979}};
  } else {
    g.hbm_bandwidth = Bandwidth::gbytes_per_second(8000);
    g.peak_dense_tflops = {
        {"tf32", 1125}, {"bf16", 2250}, {"fp8", 4500}, {"mxfp8", 4500}, {"nvfp4", 10000}};
  }
  return g;
}

// A value of the row of validation/moe-host-kernels.csv whose kernel is `kernel`, whose
// seq_len / m columns are the given ones and whose notes contain `note`.
double row(const std::string& kernel, const std::string& key_col, const std::string& key,
           const std::string& note, const std::string& col) {
  const std::string file = kRoot + "/validation/moe-host-kernels.csv";
  const CsvTable t = parse_csv(read_text_file(file), file);
  const int ck = t.column("kernel"), cn = t.column("notes"), cx = t.column(key_col),
            cv = t.column(col);
  REQUIRE((ck >= 0 && cn >= 0 && cx >= 0 && cv >= 0));
  for (const auto& r : t.rows)
    if (r[ck] == kernel && r[cx] == key && r[cn].find(note) != std::string::npos)
      return std::stod(r[cv]);
  FAIL("no row " + kernel + " " + key_col + "=" + key + " '" + note + "'");
  return 0;
}

}  // namespace

TEST_CASE("the router kernels reproduce Megatron-LM PR 6456's rows") {
  const ComputeModel h100 = ComputeModel::load(gpu("H100"), kRoot);
  const std::string note_fused = "fused single _softmax_topk_kernel, 128 experts, 256 tokens";
  const double fused = row("router_topk", "seq_len", "256", note_fused, "time_us");
  const double unfused =
      row("router_topk", "seq_len", "128", "unfused reference: 4 kernels", "time_us");
  // Fused: one kernel, floor-bound at 256 tokens x 128 experts (131 KB of FP32 scores).
  CHECK(h100.moe_kernel(MK::kRouterFused, 256.0 * 128 * 4).us() == Approx(fused).epsilon(1e-6));
  // Unfused: four kernels of the floor at 128 tokens.
  CHECK(4 * h100.moe_kernel(MK::kRouterUnfused, 128.0 * 128 * 4).us() ==
        Approx(unfused).epsilon(1e-6));
  // The fused router's bandwidth is the TRTLLM-Gen slope: 8192 tokens x 256 experts take
  // 20.448 - 9.184 us more than 8 tokens; at 8192 tokens the bandwidth term is that difference
  // plus the 8-token share.
  const double t8 = row("router_topk", "seq_len", "8", "noop_softmax, E=256", "time_us");
  const double t8192 = row("router_topk", "seq_len", "8192", "noop_softmax, E=256", "time_us");
  CHECK(h100.moe_kernel(MK::kRouterFused, 8192.0 * 256 * 4).us() ==
        Approx((t8192 - t8) * 8192.0 / (8192.0 - 8.0)).epsilon(1e-4));
}

TEST_CASE("permute and unpermute reproduce the H200 rows at their shapes") {
  const ComputeModel h200 = ComputeModel::load(gpu("H200"), kRoot);
  // TileOPs PR 603: 4096 tokens, top-2, hidden 4096; bytes = (tokens + copies) · hidden · 2.
  const double bytes_p = (4096.0 + 8192.0) * 4096 * 2;
  const std::string vllm = "vLLM moe_permute; total_tokens=4096", torch = "PyTorch reference";
  const double vllm_t = row("permute", "seq_len", "4096", vllm, "time_us");
  const double torch_t = row("permute", "seq_len", "4096", torch, "time_us");
  // The rows print times rounded to 0.01 ms: reproduced within half of that.
  CHECK(std::abs(h200.moe_kernel(MK::kPermuteFused, bytes_p).us() - vllm_t) <= 5.0);
  CHECK(std::abs(h200.moe_kernel(MK::kPermuteUnfused, bytes_p).us() - torch_t) <= 5.0);
  CHECK(h200.moe_kernel(MK::kPermuteFused, bytes_p).us() ==
        Approx(bytes_p / (row("permute", "seq_len", "4096", vllm, "achieved_gbps") * 1e9) * 1e6)
            .epsilon(1e-6));
  // TileOPs PR 608: 2048 tokens, top-2, hidden 4096; bytes = (copies + tokens) · hidden · 2.
  const double bytes_u = (4096.0 + 2048.0) * 4096 * 2;
  const double fu = row("unpermute", "seq_len", "2048", "vLLM; total_tokens=2048", "time_us");
  const double uu = row("unpermute", "seq_len", "2048", "PyTorch vectorized", "time_us");
  CHECK(std::abs(h200.moe_kernel(MK::kUnpermuteFused, bytes_u).us() - fu) <= 5.0);
  CHECK(std::abs(h200.moe_kernel(MK::kUnpermuteUnfused, bytes_u).us() - uu) <= 5.0);
  // vLLM PR 32892: the fused permute (row-id map + gather) takes 15.8 us at 1 token
  // (DeepSeek-V2-Lite: 64 experts, top-6, hidden 2048).
  const double floor = row("permute", "seq_len", "1", "DeepSeek-V2-lite", "time_us");
  CHECK(h200.moe_kernel(MK::kPermuteMapFused, 1.0 * 64 * 4).us() +
            h200.moe_kernel(MK::kPermuteFused, (1.0 + 6.0) * 2048 * 2).us() ==
        Approx(floor).epsilon(1e-6));
}

TEST_CASE("a GPU without permute rows scales the H200 bandwidth and says so") {
  const ComputeModel h200 = ComputeModel::load(gpu("H200"), kRoot);
  const ComputeModel b200 = ComputeModel::load(gpu("B200"), kRoot);
  const double bytes = 1e9;  // far above every floor
  CHECK(h200.moe_kernel(MK::kPermuteFused, bytes).us() /
            b200.moe_kernel(MK::kPermuteFused, bytes).us() ==
        Approx(8000.0 / 4800.0).epsilon(1e-6));
  bool said = false;
  for (const auto& s : b200.sources())
    said |= s.find("B200 has no rows: H200 bandwidths x 1.67") != std::string::npos;
  CHECK(said);
}

TEST_CASE("grouped GEMM rate against tokens per expert follows the Liger rows") {
  const ComputeModel h100 = ComputeModel::load(gpu("H100"), kRoot);
  const int64_t ref = ComputeModel::grouped_ref_tokens();
  REQUIRE(ref == 8192);
  // Every Liger fused-MoE row on H100 (hidden 2048, expert FFN 768): per m = tokens per expert
  // the geometric mean of its rows' TFLOP/s.
  const std::string file = kRoot + "/validation/moe-host-kernels.csv";
  const CsvTable t = parse_csv(read_text_file(file), file);
  const int ck = t.column("kernel"), cg = t.column("gpu"), cm = t.column("m"),
            ctf = t.column("achieved_tflops");
  auto measured = [&](const std::string& kernel, int64_t m) {
    double s = 0;
    int n = 0;
    for (const auto& r : t.rows)
      if (r[ck] == kernel && r[cg] == "H100 80GB HBM3" && r[cm] == std::to_string(m)) {
        s += std::log(std::stod(r[ctf]));
        ++n;
      }
    REQUIRE(n > 0);
    return std::exp(s / n);
  };
  // Qwen3-30B-A3B expert fc1 shape (hidden 2048 -> 2 x 768), 128 groups: per FLOP, m tokens per
  // expert run at rate(8192) · rate_row(m) / rate_row(8192).
  auto rate = [&](int64_t m, Pass pass) {
    return static_cast<double>(m) / h100.grouped_gemm(128, m, 1536, 2048, DType::kBf16, pass).us();
  };
  int points = 0;
  for (int64_t m = 8; m <= ref; m *= 2) {
    const double f = std::min(
        1.0, measured("moe_experts_fused_fwd", m) / measured("moe_experts_fused_fwd", ref));
    const double b = std::min(
        1.0, measured("moe_experts_fused_bwd", m) / measured("moe_experts_fused_bwd", ref));
    CHECK(rate(m, Pass::kForward) / rate(ref, Pass::kForward) == Approx(f).epsilon(1e-4));
    CHECK(rate(m, Pass::kDgrad) / rate(ref, Pass::kDgrad) == Approx(b).epsilon(1e-4));
    CHECK(rate(m, Pass::kWgrad) / rate(ref, Pass::kWgrad) == Approx(b).epsilon(1e-4));
    ++points;
  }
  CHECK(points == 11);
  // At and above the reference the grouped-factor model is unchanged.
  CHECK(h100.grouped_gemm(16, 16384, 1536, 2048, DType::kBf16, Pass::kForward) ==
        h100.grouped_gemm(16, 16384, 1536, 2048, DType::kBf16));
}
