// The memory options of Megatron-Bridge's performance recipes, and of NeMo-Framework-Launcher's
// fine-tuning examples for NeMo 24.07's SFT / LoRA rows (workload/memory.h
// recipe_memory_options): the recipe facts, each with its source, that validate gives every
// NVIDIA throughput row.
#include <regex>
#include <string>

#include "workload/memory.h"

namespace fleetsim {

namespace {

// Megatron-FSDP recipes with layer-wise activation offloading (--cpu-offloading,
// cpu_offloading_weights = False): the layers whose activations live in host memory, as
// Megatron-Bridge's performance configurations set them (v0.2.0 / v0.3.0
// scripts/performance/configs/{llama3,llama31}/workload_base_configs.py, the same values in
// src/megatron/bridge/perf_recipes/llama/{gb200,gb300,b200,b300}/llama3{,1}.py today; Llama 3.1
// 405B on B300 from v0.5.0). tests/validate/test_recipe_layouts.cpp checks these against
// calibration/recipe-layouts.csv for every release from Megatron-Bridge 0.2.0 on.
struct OffloadRecipe {
  const char* model;
  const char* gpu;
  bool bf16;  // the BF16 recipe; false = the FP8 recipes
  int layers;
};
constexpr OffloadRecipe kFsdpOffload[] = {
    {"llama3-70b", "GB200", true, 20},    {"llama3-70b", "GB200", false, 40},
    {"llama3-70b", "GB300", true, 30},    {"llama3-70b", "GB300", false, 20},
    {"llama3-70b", "B200", false, 5},     {"llama3.1-405b", "GB200", false, 92},
    {"llama3.1-405b", "GB300", true, 40}, {"llama3.1-405b", "GB300", false, 10},
    {"llama3.1-405b", "B300", true, 40},
};

// NeMo-Framework-Launcher's fine-tuning examples (tag 24.07, examples/peft/llama/h100/*.sh:
// peft=llama/sft with fp8 = true and fp8_params = true) on
// launcher_scripts/conf/peft/llama/sft.yaml (megatron_amp_O2: bf16 parameters; optim
// distributed_fused_adam with dtype bf16, grad_sync_dtype bf16, contiguous_grad_buffer). NeMo's
// MegatronBaseModel.setup_optimization
// (nemo/collections/nlp/models/language_modeling/megatron_base_model.py) gives Apex's
// DistributedFusedAdam the optimizer dtype for its moments and, for its own copy of the
// parameters, store_params = True with fp8_params (a bf16 copy beside the FP8 weights) and
// store_params = False when the optimizer dtype is the model's (no copy at all). The rest are
// Megatron-LM's defaults (vocab-parallel cross entropy, no expandable segments).
MemoryOptions launcher_peft_memory_options(const ParallelConfig& p, const std::string& gpu) {
  MemoryOptions o;
  o.grad_bytes = 2;
  o.exp_avg_bytes = 2;
  o.exp_avg_sq_bytes = 2;
  o.fp8_param_gather = p.precision != PrecisionRecipe::kBf16;
  o.master_bytes = o.fp8_param_gather ? 2 : 0;
  o.non_tn_fp8_gemm = gpu_non_tn_fp8_gemm(gpu);
  return o;
}

}  // namespace

bool bridge_at_least(const std::string& stack, int major, int minor, int patch) {
  static const std::regex re(R"(^Megatron-Bridge (\d+)\.(\d+)\.(\d+))");
  std::smatch v;
  if (!std::regex_search(stack, v, re) || v[1].length() > 4 || v[2].length() > 4 ||
      v[3].length() > 4)
    return false;
  const int a = std::stoi(v[1].str()), b = std::stoi(v[2].str()), c = std::stoi(v[3].str());
  return a != major ? a > major : b != minor ? b > minor : c >= patch;
}

MemoryOptions recipe_memory_options(const ModelSpec& m, const ParallelConfig& p,
                                    const std::string& gpu, const std::string& stack) {
  if (stack.rfind("NeMo-Framework-Launcher", 0) == 0) return launcher_peft_memory_options(p, gpu);
  MemoryOptions o = megatron_bridge_perf_options();
  // bf16_with_fp8_*_mixed / bf16_with_mxfp8_mixed set fp8_param_gather in every Megatron-Bridge
  // release; the block-scaling (subchannel) recipe does not (training/mixed_precision.py).
  // bf16_with_nvfp4_mixed sets fp8_param_gather = False and, from v0.4.2 on, fp4_param_gather =
  // True (the NVFP4 weights kept once, as fp8_param_gather does for FP8; v0.4.2
  // mixed_precision.py L421-L422, Megatron-Bridge PR 3364): up to v0.4.1 (NeMo 26.04) the bf16
  // weights stay beside their NVFP4 copies. An empty stack is today's recipes.
  o.fp8_param_gather =
      p.precision != PrecisionRecipe::kBf16 && p.precision != PrecisionRecipe::kFp8Block &&
      (p.precision != PrecisionRecipe::kNvfp4 || stack.empty() || bridge_at_least(stack, 0, 4, 2));
  o.non_tn_fp8_gemm = gpu_non_tn_fp8_gemm(gpu);
  if (p.fsdp) {
    const bool bf16 = p.precision == PrecisionRecipe::kBf16;
    for (const OffloadRecipe& r : kFsdpOffload)
      if (m.name == r.model && gpu == r.gpu && bf16 == r.bf16) o.cpu_offload_layers = r.layers;
  }
  // Llama 3.1 405B: llama31_405b_pretrain_config sets account_for_embedding_in_pipeline_split
  // and account_for_loss_in_pipeline_split (recipes/llama/llama3.py, v0.2.0 and today), which
  // every performance recipe of the model starts from.
  if (m.name == "llama3.1-405b" && p.pp > 1)
    o.layers_per_vstage = embedding_loss_split(m.layers, p.pp, p.vp, true, true);
  if (m.name != "deepseek-v3" || m.layers != 61) return o;
  o.exp_avg_bytes = 2;
  o.exp_avg_sq_bytes = 2;
  const int v = p.pp * p.vp;
  if (v == 4 && p.vp == 1) o.layers_per_vstage = {16, 16, 16, 13};
  if (v == 8 && p.vp <= 2) o.layers_per_vstage = {8, 8, 8, 8, 8, 8, 8, 5};
  if (v == 16 && p.vp <= 4) {
    o.layers_per_vstage.assign(16, 4);
    o.layers_per_vstage.back() = 1;
  }
  return o;
}

}  // namespace fleetsim
