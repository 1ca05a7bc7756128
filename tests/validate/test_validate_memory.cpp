// Memory rows of validation/memory-measured.csv (sim/validate/validate_memory.cpp): the row
// mapping reproduces the estimator for the configuration a row states, and the estimate meets
// the published measurements (issue 18: MAPE <= 10 % on allocated rows, <= 15 % on reserved).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "core/csv.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"
#include "validate/validate.h"
#include "validate/validate_memory.h"
#include "workload/memory.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

std::map<std::string, std::string> simumax_70b_tp8(const std::string& metric) {
  return {{"source_url", "https://github.com/MooreThreads/SimuMax/blob/x/summary.json"},
          {"hardware", "B200 SXM (8-GPU node)"},
          {"num_gpus", "8"},
          {"model", "Llama 3 70B"},
          {"precision", "bf16"},
          {"seq_len", "4096"},
          {"gbs", "4"},
          {"mbs", "1"},
          {"tp", "8"},
          {"pp", "1"},
          {"cp", "1"},
          {"vp", "1"},
          {"ep", "1"},
          {"dp", "1"},
          {"recompute", "none (0 layers recomputed)"},
          {"metric_name", metric},
          {"notes", "layers=12 (full model 80); framework=Megatron-LM 23e00ed; rank=max over all"}};
}

ValidationRow row_of(const std::map<std::string, std::string>& f) {
  ValidationRow v;
  v.model = f.at("model");
  v.metric = f.at("metric_name");
  v.hardware = f.at("hardware");
  v.num_gpus = std::stoi(f.at("num_gpus"));
  return v;
}

}  // namespace

TEST_CASE("memory rows: the stated configuration, layer override and statistic") {
  ModelSpec m = load_model("llama3-70b", kRoot);
  m.layers = 12;
  ParallelConfig p;
  p.tp = 8;
  p.seq_len = 4096;
  p.global_batch = 4;
  const MemoryBreakdown r = estimate_memory(m, p, 180'000'000'000LL, MemoryOptions{});
  const double gib = 1024.0 * 1024 * 1024;
  for (const char* metric :
       {"peak_allocated_gib", "peak_reserved_gib", "allocated_after_step_gib"}) {
    auto f = simumax_70b_tp8(metric);
    ValidationRow v = row_of(f);
    std::string why;
    REQUIRE(predict_memory_row(f, kRoot, &v, &why));
    const std::string mname = metric;
    const int64_t want = mname == "peak_allocated_gib"  ? r.total
                         : mname == "peak_reserved_gib" ? r.reserved
                                                        : r.persistent();
    CHECK(v.predicted == Approx(static_cast<double>(want) / gib).epsilon(1e-12));
    CHECK(v.config.find("L12 tp8") != std::string::npos);
  }
  auto f = simumax_70b_tp8("peak_active_gib");
  ValidationRow v = row_of(f);
  std::string why;
  CHECK_FALSE(predict_memory_row(f, kRoot, &v, &why));
  CHECK(why.find("statistic") != std::string::npos);
  f = simumax_70b_tp8("peak_allocated_gib");
  f["dp"] = "";
  f["num_gpus"] = "";
  v = row_of(simumax_70b_tp8("peak_allocated_gib"));
  v.num_gpus = 0;
  CHECK_FALSE(predict_memory_row(f, kRoot, &v, &why));
  CHECK(why.find("data-parallel size not stated") != std::string::npos);
}

TEST_CASE("memory rows: recipe=megatron-bridge-perf starts from the recipes' options") {
  // Megatron-Bridge's Qwen3-30B-A3B run on 16 H100 (validation/memory-measured.csv): the row's
  // prediction is the estimator's with megatron_bridge_perf_options(), which differ from
  // Megatron-LM's defaults by bf16 main gradients (2 B instead of 4 per parameter).
  std::map<std::string, std::string> f = {
      {"source_url", "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/x/SKILL.md"},
      {"hardware", "H100 SXM 80GB"},
      {"num_gpus", "16"},
      {"model", "Qwen3-30B-A3B"},
      {"precision", "bf16"},
      {"seq_len", "4096"},
      {"gbs", "1024"},
      {"mbs", "1"},
      {"tp", "1"},
      {"pp", "1"},
      {"cp", "1"},
      {"vp", "1"},
      {"ep", "16"},
      {"etp", "1"},
      {"dp", "16"},
      {"recompute", "none"},
      {"metric_name", "peak_allocated_gib"},
      {"notes", "framework=Megatron-Bridge; recipe=megatron-bridge-perf; rank=pp stage 0"}};
  const ModelSpec m = load_model("qwen3-30b-a3b", kRoot);
  ParallelConfig p;
  p.ep = 16;
  p.dp = 16;
  p.seq_len = 4096;
  p.global_batch = 1024;
  const int64_t hbm = static_cast<int64_t>(79.11 * (1 << 30));
  const MemoryBreakdown want = estimate_memory_stage(m, p, hbm, megatron_bridge_perf_options(), 0);
  const MemoryBreakdown lm = estimate_memory_stage(m, p, hbm, MemoryOptions{}, 0);
  ValidationRow v = row_of(f);
  std::string why;
  REQUIRE(predict_memory_row(f, kRoot, &v, &why));
  const double gib = 1024.0 * 1024 * 1024;
  CHECK(v.predicted == Approx(static_cast<double>(want.total) / gib).epsilon(1e-12));
  CHECK(lm.gradients == 2 * want.gradients);
  CHECK(memory_row_source(f["source_url"]) == "Megatron-Bridge");
}

TEST_CASE("memory rows: MAPE against validation/memory-measured.csv") {
  const std::string path = kRoot + "/validation/memory-measured.csv";
  const CsvTable t = parse_csv(read_text_file(path), path);
  double abs_alloc = 0, abs_res = 0;
  int n_alloc = 0, n_res = 0;
  for (const auto& cells : t.rows) {
    std::map<std::string, std::string> f;
    for (size_t c = 0; c < t.header.size(); ++c)
      f[t.header[c]] = cells[c];
    ValidationRow v;
    v.model = f["model"];
    v.metric = f["metric_name"];
    v.hardware = f["hardware"];
    v.num_gpus = f["num_gpus"].empty() ? 0 : std::stoi(f["num_gpus"]);
    std::string why;
    if (!predict_memory_row(f, kRoot, &v, &why)) continue;
    const double err = std::fabs(v.predicted / std::stod(f["metric_value"]) - 1) * 100;
    if (v.metric == "peak_reserved_gib") {
      abs_res += err;
      ++n_res;
    } else if (v.metric == "peak_allocated_gib") {
      abs_alloc += err;
      ++n_alloc;
    }
  }
  // SimuMax + Megatron-Bridge's Qwen3-30B-A3B skill run: 21 allocated rows; SimuMax + torchao:
  // 21 reserved rows (docs/memory.md).
  CHECK(n_alloc == 21);
  CHECK(n_res == 21);
  CHECK(abs_alloc / n_alloc <= 10.0);
  CHECK(abs_res / n_res <= 15.0);
}

TEST_CASE("recipe memory options: Megatron-Bridge defaults and the DeepSeek-V3 layout") {
  const ModelSpec d = load_model("deepseek-v3", kRoot);
  ParallelConfig p;
  p.pp = 4;
  p.vp = 4;
  const MemoryOptions o = recipe_memory_options(d, p, "GB200");
  CHECK(o.grad_bytes == 2);
  CHECK(o.cross_entropy == CrossEntropyImpl::kTe);
  CHECK(o.expandable_segments);
  CHECK(o.exp_avg_bytes == 2);
  REQUIRE(o.layers_per_vstage.size() == 16);
  int sum = 0;
  for (int n : o.layers_per_vstage)
    sum += n;
  CHECK(sum == 61);
  CHECK(o.layers_per_vstage.back() == 1);
  const ModelSpec l = load_model("llama3-70b", kRoot);
  CHECK(recipe_memory_options(l, p, "GB200").exp_avg_bytes == 4);
  CHECK(recipe_memory_options(l, p, "GB200").layers_per_vstage.empty());
}

TEST_CASE("recipe memory options: FSDP offload layers, the 405B split, FP8 weights per GPU") {
  // Megatron-Bridge's Llama 3 70B Megatron-FSDP recipes (v0.2.0 workload_base_configs.py):
  // --cpu-offloading-num-layers 40 for FP8 and 20 for BF16 on GB200, 20 / 30 on GB300, 5 with
  // FP8 on B200; none without FSDP.
  const ModelSpec l70 = load_model("llama3-70b", kRoot);
  ParallelConfig p;
  p.fsdp = true;
  p.precision = PrecisionRecipe::kFp8Current;
  CHECK(recipe_memory_options(l70, p, "GB200").cpu_offload_layers == 40);
  CHECK(recipe_memory_options(l70, p, "GB300").cpu_offload_layers == 20);
  CHECK(recipe_memory_options(l70, p, "B200").cpu_offload_layers == 5);
  CHECK(recipe_memory_options(l70, p, "H100").cpu_offload_layers == 0);
  p.precision = PrecisionRecipe::kBf16;
  CHECK(recipe_memory_options(l70, p, "GB200").cpu_offload_layers == 20);
  CHECK(recipe_memory_options(l70, p, "GB300").cpu_offload_layers == 30);
  p.fsdp = false;
  CHECK(recipe_memory_options(l70, p, "GB200").cpu_offload_layers == 0);
  // Llama 3.1 405B FSDP on GB200 (FP8): 92 of 126 layers.
  const ModelSpec l405 = load_model("llama3.1-405b", kRoot);
  p.fsdp = true;
  p.precision = PrecisionRecipe::kFp8Current;
  CHECK(recipe_memory_options(l405, p, "GB200").cpu_offload_layers == 92);
  // Llama 3.1 405B with a pipeline: the embedding and the loss take a layer's place each.
  p.fsdp = false;
  p.pp = 16;
  p.vp = 4;
  const MemoryOptions o = recipe_memory_options(l405, p, "GB200");
  CHECK(o.layers_per_vstage == embedding_loss_split(126, 16, 4, true, true));
  CHECK(o.fp8_param_gather);
  CHECK(o.non_tn_fp8_gemm);
  CHECK_FALSE(recipe_memory_options(l405, p, "H100").non_tn_fp8_gemm);
  // A model without the setting keeps the step's split.
  CHECK(recipe_memory_options(l70, p, "GB200").layers_per_vstage.empty());
}

TEST_CASE("recipe memory options: NVFP4 weights kept once from Megatron-Bridge 0.4.2") {
  // bf16_with_nvfp4_mixed (training/mixed_precision.py): fp8_param_gather = False up to v0.4.1,
  // fp4_param_gather = True from v0.4.2; the FP8 / MXFP8 recipes gather FP8 parameters in every
  // release.
  const ModelSpec l70 = load_model("llama3-70b", kRoot);
  ParallelConfig p;
  p.precision = PrecisionRecipe::kNvfp4;
  CHECK_FALSE(recipe_memory_options(l70, p, "GB300", "Megatron-Bridge 0.3.1").fp8_param_gather);
  CHECK_FALSE(recipe_memory_options(l70, p, "GB300", "Megatron-Bridge 0.4.0").fp8_param_gather);
  CHECK(recipe_memory_options(l70, p, "GB300", "Megatron-Bridge 0.4.2").fp8_param_gather);
  CHECK(recipe_memory_options(l70, p, "GB300", "Megatron-Bridge 0.6.0").fp8_param_gather);
  CHECK(recipe_memory_options(l70, p, "GB300", "").fp8_param_gather);
  CHECK_FALSE(recipe_memory_options(l70, p, "GB300", "NeMo 2.0").fp8_param_gather);
  p.precision = PrecisionRecipe::kMxfp8;
  CHECK(recipe_memory_options(l70, p, "GB300", "Megatron-Bridge 0.3.1").fp8_param_gather);
  CHECK(bridge_at_least("Megatron-Bridge 1.0.0", 0, 4, 2));
  CHECK(bridge_at_least("Megatron-Bridge 0.5.0", 0, 4, 2));
  CHECK_FALSE(bridge_at_least("Megatron-Bridge 0.1.0rc3", 0, 4, 2));
  CHECK_FALSE(bridge_at_least("Megatron-Bridge 0.4.1", 0, 4, 2));
}

TEST_CASE("recipe memory options: NeMo-Framework-Launcher fine-tuning (NeMo 24.07 SFT / LoRA)") {
  // launcher_scripts/conf/peft/llama/sft.yaml at tag 24.07: distributed_fused_adam with dtype
  // bf16 and grad_sync_dtype bf16; examples/peft/llama/h100/*.sh add fp8 and fp8_params. NeMo's
  // setup_optimization stores a bf16 copy of the parameters with fp8_params and none when the
  // optimizer dtype is the model's. Layout of the 70B SFT example (70b_2node.sh): 16 H100, TP 4,
  // PP 4, DP 1, MBS 1.
  const ModelSpec m = load_model("llama2-70b", kRoot);
  ParallelConfig p;
  p.tp = 4;
  p.pp = 4;
  p.global_batch = 32;
  p.seq_len = 4096;
  p.precision = PrecisionRecipe::kFp8Delayed;
  const std::string stack = "NeMo-Framework-Launcher 24.07";
  const MemoryOptions o = recipe_memory_options(m, p, "H100", stack);
  CHECK(o.grad_bytes == 2);
  CHECK(o.exp_avg_bytes == 2);
  CHECK(o.exp_avg_sq_bytes == 2);
  CHECK(o.master_bytes == 2);
  CHECK(o.fp8_param_gather);
  CHECK_FALSE(o.non_tn_fp8_gemm);
  CHECK(o.cross_entropy == CrossEntropyImpl::kNative);
  CHECK_FALSE(o.expandable_segments);
  const int64_t hbm = 80LL << 30;
  const MemoryBreakdown launcher = estimate_memory_stage(m, p, hbm, o, 0);
  const MemoryBreakdown bridge =
      estimate_memory_stage(m, p, hbm, recipe_memory_options(m, p, "H100", "NeMo 2.0"), 0);
  // With DP 1 nothing is sharded: the Megatron-Bridge options' 4 B fp32 master weight per
  // parameter counts the stage's parameters. By hand: 20 layers × (q, o 8192², k, v 8192 × 1024,
  // the SwiGLU MLP 3 × 8192 × 28672) / TP 4 + 2 norms of 8192, and the 32,000 × 8192 embedding / 4:
  // 4.344 × 10^9 (Megatron pads the vocabulary a little).
  const double params = static_cast<double>(bridge.master_weights) / 4;
  CHECK(params == Approx(4.344e9).epsilon(0.01));
  // The launcher keeps a 2 B copy and 2 + 2 B of moments per parameter (4 + 4 + 4 B in the
  // Megatron-Bridge options); weights and bf16 gradients are the same in both.
  CHECK(static_cast<double>(launcher.master_weights) == Approx(2 * params));
  CHECK(static_cast<double>(launcher.optimizer) == Approx(4 * params));
  CHECK(static_cast<double>(bridge.optimizer) == Approx(8 * params));
  CHECK(launcher.weights == bridge.weights);
  CHECK(launcher.gradients == bridge.gradients);
  // NVIDIA ran it on 80 GB H100s (NeMo 24.07 performance summary, Llama 2 70B SFT, 16 GPUs):
  // it fits with the launcher's optimizer, not with the Megatron-Bridge one.
  CHECK(launcher.fits);
  CHECK_FALSE(bridge.fits);
  // BF16 (no fp8_params): the optimizer dtype is the model's, so no copy of the parameters.
  p.precision = PrecisionRecipe::kBf16;
  CHECK(recipe_memory_options(m, p, "H100", stack).master_bytes == 0);
  CHECK_FALSE(recipe_memory_options(m, p, "H100", stack).fp8_param_gather);
}

TEST_CASE("memory rows: MAPE and bias per source and statistic in the report") {
  const ValidationReport r = validate_reference(kRoot + "/validation/memory-measured.csv", kRoot);
  int n = 0;
  for (const auto& [src, e] : r.memory_by_source)
    n += e.n;
  CHECK(n == r.n_rows);
  const auto& s = r.memory_by_source;
  REQUIRE(s.count("SimuMax (Megatron-LM, B200) peak_allocated_gib"));
  REQUIRE(s.count("SimuMax (Megatron-LM, B200) peak_reserved_gib"));
  REQUIRE(s.count("torchao peak_reserved_gib"));
  REQUIRE(s.count("Megatron-Bridge peak_allocated_gib"));
  CHECK(s.at("SimuMax (Megatron-LM, B200) peak_allocated_gib").n == 20);
  CHECK(s.at("SimuMax (Megatron-LM, B200) peak_reserved_gib").n == 17);
  CHECK(s.at("torchao peak_reserved_gib").n == 4);
  // One row: its MAPE is its |error| and its bias its signed error (the row of the skill doc).
  const auto& b = s.at("Megatron-Bridge peak_allocated_gib");
  REQUIRE(b.n == 1);
  for (const ValidationRow& v : r.rows)
    if (v.source == "Megatron-Bridge peak_allocated_gib") {
      CHECK(b.bias_pct == Approx((v.predicted / 62.166 - 1) * 100).epsilon(1e-9));
      CHECK(b.mape_pct == Approx(std::fabs(b.bias_pct)));
    }
  for (const auto& [src, e] : s)
    CHECK(e.mape_pct >= std::fabs(e.bias_pct) - 1e-9);
}
