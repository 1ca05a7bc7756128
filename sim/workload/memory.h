// Per-GPU HBM estimate of a training configuration: weights, gradients, optimizer state,
// activations and communication buffers of each pipeline stage, the peak allocated by PyTorch
// (torch.cuda.max_memory_allocated), what the caching allocator reserves on top of it
// (max_memory_reserved) and what the device needs besides (CUDA context, NCCL buffers).
//
// Sources: Megatron-LM's distributed optimizer (docs/source/api-guide/dist_optimizer.md: bf16
// weights, fp32 main grads, fp32 master weights and Adam m / v sharded over data-parallel ranks,
// "6 + 12/d bytes per parameter"); Korthikanti et al. 2022, "Reducing Activation Recomputation
// in Large Transformer Models" (activation bytes per layer, sequence parallelism, selective /
// full recompute, pipeline in-flight micro-batches); Megatron-Core's schedules.py (1F1B and
// interleaved warm-up counts); Transformer Engine's Linear / GroupedLinear (FP8 inputs saved for
// backward); the per-term accounting, generalised to GQA / MLA / gated MLPs / MoE, is written
// out in memory.cpp and memory_activations.cpp. All sizes are bytes per GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim {

// Megatron-Core's --offload-modules for fine-grained activation offloading (bit flags): the
// tensors a module saves for backward are copied to host memory after its forward and brought
// back before its backward.
enum OffloadModule : unsigned {
  kOffloadAttnNorm = 1u << 0,   // attention norm's input
  kOffloadCoreAttn = 1u << 1,   // q, k, v and the attention output
  kOffloadAttnProj = 1u << 2,   // input of the attention output projection
  kOffloadMlpNorm = 1u << 3,    // pre-MLP norm's input
  kOffloadExpertFc1 = 1u << 4,  // permuted tokens (input of the experts' fc1)
  kOffloadMoeAct = 1u << 5,     // the experts' fc1 output (input of the activation)
};
// Parses one module name ("attn_norm", "core_attn", "attn_proj", "mlp_norm", "expert_fc1",
// "moe_act").
bool parse_offload_module(const std::string& s, unsigned* bit);

// How the loss is computed from the logits (Megatron's --cross-entropy-fusion-impl).
//   kNative: Megatron's vocab-parallel cross entropy: the bf16 logits are upcast to fp32 and the
//            softmax kept for backward: 2 + 4 B per logit at the peak;
//   kTe:     Transformer Engine's parallel cross entropy, which writes the gradient into the
//            bf16 logits in place: 2 B per logit.
enum class CrossEntropyImpl { kNative, kTe };

struct MemoryOptions {
  // Attention through a fused (flash) kernel, as Transformer Engine / Megatron-Core run it: the
  // s×s softmax is never stored, only its log-sum-exp (4 B per head per token). false = the
  // unfused attention of Korthikanti et al. (softmax output, dropout mask and output stored).
  bool flash_attention = true;
  // Dropout masks stored (1 B per element): Korthikanti's GPT setting. Modern pre-training
  // recipes (Llama, NeMo configs) run with dropout 0 and store none.
  bool dropout = false;
  // Decoder layers of each virtual pipeline stage (pp·vp entries, Megatron's chunk order
  // v = c·pp + s), e.g. the step simulator's balanced split or a pipeline layout; empty =
  // stage_layers().
  std::vector<int> layers_per_vstage;

  // --- Parameter state (bytes per parameter) ---
  // Main-gradient buffer: 4 = fp32 (Megatron-LM: --accumulate-allreduce-grads-in-fp32, forced
  // with --bf16), 2 = bf16 (grad_reduce_in_fp32=False, Megatron-Bridge's performance recipes).
  int grad_bytes = 4;
  // Distributed-optimizer state: main (master) params and Adam's exp_avg / exp_avg_sq. With
  // Transformer Engine's precision-aware optimizer (--use-precision-aware-optimizer,
  // --exp-avg-dtype / --exp-avg-sq-dtype bf16 or fp8) the moments are 2 or 1 B.
  int master_bytes = 4;
  int exp_avg_bytes = 4;
  int exp_avg_sq_bytes = 4;
  // FP8 / MXFP8 primary weights (--fp8-param-gather): Transformer Engine keeps the linear
  // layers' weights once in FP8 (1 B + its scales) instead of bf16; the all-gather moves FP8.
  bool fp8_param_gather = false;
  // The GPU runs FP8 GEMMs in every operand layout (Blackwell, compute capability >= 10:
  // Transformer Engine's nvte_is_non_tn_fp8_gemm_supported()). Then TE's per-tensor FP8
  // quantizers (delayed and current scaling, csrc/quantizer.cpp Float8Quantizer /
  // Float8CurrentScalingQuantizer::create_tensor) keep one FP8 copy of a weight for both the
  // forward and the backward GEMMs; on Hopper they keep it and its transpose. MXFP8 / NVFP4
  // scale along rows and columns separately and keep both copies everywhere.
  bool non_tn_fp8_gemm = false;
  // Fraction of the optimizer state (master params and moments) kept in host memory
  // (--optimizer-cpu-offload with --optimizer-offload-fraction).
  double optimizer_offload_fraction = 0;

  // --- Activations ---
  // Fine-grained activation offloading (OffloadModule bits; 0 = off).
  unsigned offload_modules = 0;
  // Layer-wise activation offloading (--cpu-offloading --cpu-offloading-num-layers N, weights
  // not offloaded): the first N decoder layers of each model chunk keep their activations in
  // host memory (Megatron-Bridge's Llama 3 70B FSDP recipes: N = 20-40 of 80).
  int cpu_offload_layers = 0;
  CrossEntropyImpl cross_entropy = CrossEntropyImpl::kNative;
  // MoE: token copies the busiest EP rank receives / the balanced count. 1 = balanced routing
  // or a capacity factor of 1 with padding (buffers padded to capacity); a capacity factor c
  // with --moe-pad-expert-input-to-capacity = c; dropless routing's worst case = its max load.
  double moe_token_factor = 1.0;
  // Where the routing probabilities multiply the expert outputs. false (Megatron-Core >= 0.13,
  // megatron/core/transformer/moe/experts.py TEGroupedMLP.forward: bias_act_func /
  // weighted_bias_swiglu_impl / weighted_squared_relu_impl): inside the experts' activation,
  // between fc1 and fc2; the activation saves the fp32 probability of each routed copy (4 B)
  // and the unpermute (token_dispatcher.py combine_postprocess: unpermute(...) without probs)
  // saves only its index map, so the expert (fc2) output is not kept. true (Megatron-Core <=
  // 0.12): the unpermute multiplies by the probabilities and keeps the expert output (2h per
  // routed copy) for their gradient.
  bool moe_probs_in_unpermute = false;
  // --moe-permute-fusion: Transformer Engine's fused permute / unpermute. With the
  // probabilities applied in the unpermute (moe_probs_in_unpermute), the unfused path first
  // materialises the probability-weighted expert outputs (one more 2h copy per routed token,
  // transient); without them both paths only scatter.
  bool moe_permute_fusion = true;

  // --- Allocator and device ---
  // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: segments grow in place, so freed blocks
  // are reused for any size and reserved ≈ allocated (no fragmentation term).
  bool expandable_segments = false;
};

// The options of Megatron-Bridge's performance recipes (scripts/performance, _benchmark_common
// and _perf_precision in src/megatron/bridge/perf_recipes/_common.py): grads reduced in bf16,
// Transformer Engine's cross entropy, expandable segments. The rows of NVIDIA's performance
// summary were measured with them.
MemoryOptions megatron_bridge_perf_options();

// The memory options of the Megatron-Bridge performance recipes that measured NVIDIA's
// performance summary, for a row on `gpu` (the system's GPU model: "GB200", "H100", ...):
// workload/memory.h megatron_bridge_perf_options(); FP8 parameter gather with every FP8 /
// MXFP8 recipe but block scaling, and with NVFP4 from Megatron-Bridge 0.4.2 on (`stack`, the
// release's "stack" in calibration/releases.json, "Megatron-Bridge 0.3.1"; empty = today's
// recipes); the Megatron-FSDP recipes' layer-wise activation
// offloading (Llama 3 70B, Llama 3.1 405B); Llama 3.1 405B's embedding and loss counted in the
// pipeline split (workload/memory.h embedding_loss_split); the DeepSeek-V3 recipe's
// precision-aware optimizer (bf16 moments) and pipeline layout for (pp, vp) = (4, 1), (8, 1),
// (4, 2), (16, 1), (8, 2), (4, 4) (_get_deepseek_v3_pipeline_layout in
// src/megatron/bridge/recipes/deepseek/h100/deepseek_v3.py: the embedding in the first virtual
// stage, MTP and the loss in the last). The citations are in memory_recipe.cpp.
// A "NeMo-Framework-Launcher" stack (release_stack's fine-tuning stack of NeMo 24.07) gets the
// launcher's fine-tuning options instead: Apex's distributed Adam with bf16 moments and bf16
// gradients, FP8 weights (fp8_params) with a bf16 optimizer copy, no copy without FP8.
MemoryOptions recipe_memory_options(const ModelSpec& m, const ParallelConfig& p,
                                    const std::string& gpu, const std::string& stack = "");

// Whether `stack` ("Megatron-Bridge 0.4.2", a release's stack) is Megatron-Bridge at version
// major.minor.patch or later (false for other stacks).
bool bridge_at_least(const std::string& stack, int major, int minor, int patch);

// Whether a GPU model ("H100", "B200", "GB300", ...) runs FP8 GEMMs in every layout
// (MemoryOptions::non_tn_fp8_gemm): the Blackwell GPUs.
bool gpu_non_tn_fp8_gemm(const std::string& gpu_model);

struct MemoryBreakdown {
  int64_t weights = 0;          // parameters on the rank (bf16, FP8 with fp8_param_gather)
  int64_t gradients = 0;        // main gradients (fp32 or bf16)
  int64_t optimizer = 0;        // Adam m and v
  int64_t master_weights = 0;   // fp32 copy of the parameters
  int64_t activations = 0;      // saved for backward, all in-flight micro-batches
  int64_t working = 0;          // transient at the peak: one layer's backward, logits / loss
  int64_t comm_buffers = 0;     // TP / EP / PP staging buffers (see memory.cpp)
  int64_t total = 0;            // peak allocated (torch.cuda.max_memory_allocated)
  int64_t fragmentation = 0;    // caching-allocator reserve above the allocated peak
  int64_t reserved = 0;         // total + fragmentation (torch.cuda.max_memory_reserved)
  int64_t device_overhead = 0;  // CUDA context + NCCL buffers (outside the allocator)
  int64_t capacity = 0;         // the HBM given
  bool fits = false;            // reserved + device_overhead <= capacity
  int stage = 0;                // pipeline stage reported (0-based)
  int layers_on_stage = 0;
  // Forward passes whose activations are held at the peak: micro-batches for 1F1B; for the
  // interleaved schedule (micro-batch, model chunk) pairs, each holding its chunk's layers.
  int in_flight_microbatches = 0;
  // The moment of the peak: the last forward before the stage's first backward (Megatron's
  // warm-up), and the backward that starts there: micro-batch and model chunk (0-based).
  int peak_forward_microbatch = 0;
  int peak_forward_chunk = 0;
  int peak_backward_microbatch = 0;
  int peak_backward_chunk = 0;
  bool peak_in_loss = false;          // the loss / logits transient sets the peak (last stage)
  int64_t params_on_rank = 0;         // parameters held (unsharded view), dense + expert
  int64_t expert_params_on_rank = 0;  // of which routed-expert parameters
  int64_t persistent() const {        // what stays allocated between steps
    return weights + gradients + optimizer + master_weights;
  }
};

// CUDA context and NCCL buffers per GPU, outside the caching allocator: 1 GiB, the upper end of
// nvidia-smi minus max_memory_reserved measured in the runs of memory-measured.md (caveat 1,
// "roughly 0.5-1 GiB of context plus NCCL buffers").
constexpr int64_t kDeviceOverheadBytes = int64_t{1} << 30;

// Throws InputError when the configuration cannot be laid out (pp > layers, ep not dividing
// the experts, ep·etp not dividing tp·cp·dp, ...). Reports the stage with the largest reserved
// memory. O(layers · pp).
MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes);
MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes,
                                const MemoryOptions& options);
// One pipeline stage (0-based, < pp).
MemoryBreakdown estimate_memory_stage(const ModelSpec& m, const ParallelConfig& p,
                                      int64_t hbm_bytes, const MemoryOptions& options, int stage);

// Activation bytes one rank keeps for one micro-batch of one decoder layer (the Korthikanti
// sbh·(34 + 5as/h) generalisation), with selective recompute when `recompute` says so.
int64_t layer_activation_bytes(const ModelSpec& m, int layer, const ParallelConfig& p,
                               const MemoryOptions& options, Recompute recompute);

// Decoder layers held by pipeline stage `stage` (0-based), model chunks in Megatron's order:
// chunk c of stage s holds the (c·pp + s)-th block of layers / (pp·vp) layers; a remainder goes
// one layer each to the first blocks.
std::vector<int> stage_layers(const ModelSpec& m, const ParallelConfig& p, int stage);

// Megatron-Core's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split
// (megatron/core/transformer/transformer_block.py, get_num_layers_to_build): the embedding and
// the loss count as one layer each, the (layers + embedding + loss) are split evenly over the
// pp · vp virtual stages, and the first virtual stage builds one decoder layer fewer (embedding),
// the last one fewer (loss). Returns the decoder layers of each virtual stage (pp·vp entries,
// v = c·pp + s), or an empty vector where Megatron refuses the split (the total not divisible
// by pp · vp, or a first / last stage left with fewer than 0 layers).
std::vector<int> embedding_loss_split(int layers, int pp, int vp, bool embedding, bool loss);

// Forward passes of each model chunk whose activations stage `stage` holds at its peak (just
// before its first backward), in Megatron-Core's order (schedules.py): 1F1B runs
// min(pp − s, m) forwards first; the interleaved schedule runs (pp − s − 1)·2 + (vp − 1)·pp
// warm-up forwards plus one, in groups of pp micro-batches per chunk (chunk of forward k =
// (k / pp) mod vp), capped at m·vp. Entry c = passes of chunk c (vp entries).
std::vector<int> in_flight_per_chunk(const ParallelConfig& p, int stage);

// The memory a layout needs on its most loaded stage whatever its activation and optimizer
// options (recompute, activation or optimizer offload, smaller moments): the weights in the
// smallest form the precision recipe keeps them (bf16; with fp8_param_gather the linear
// weights' row-wise quantized copy alone, 1 B, 1 + 1/32 B for MXFP8 / FP8 block scaling,
// 0.5 + 1/16 B for NVFP4), the main-gradient buffer (grad_bytes per parameter, of the adapters
// only for LoRA; sharded over the data-parallel group only with FSDP) and the CUDA context
// (kDeviceOverheadBytes). A layout whose floor exceeds the HBM cannot run with any memory
// option of the framework.
int64_t memory_floor(const ModelSpec& m, const ParallelConfig& p, const MemoryOptions& options);

}  // namespace fleetsim
