// Parallelism, precision and schedule of a training job: how one model is split over GPUs.
// Megatron-LM's vocabulary: world = tp · cp · pp · dp; experts use ep · etp inside the
// (tp · cp · dp) ranks of a pipeline stage (Megatron's "expert-data-parallel" is the rest).
#pragma once

#include <cstdint>
#include <string>

#include "workload/task.h"

namespace fleetsim {

enum class Recompute { kNone, kSelective, kFull };
// Megatron-LM's --recompute-modules for selective recompute (bit flags).
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,  // core attention (Megatron's default selective recompute)
  // Dense MLPs only: Megatron-Core's TransformerLayer sets recompute_mlp only where the MLP is
  // not a MoELayer (transformer_layer.py), so MoE layers and their shared experts are untouched.
  kRecomputeMlp = 1u << 1,
  kRecomputeMlaUpProj = 1u << 2,  // MLA q / kv up-projections
  kRecomputeMoeAct = 1u << 3,     // expert activation function
  kRecomputeLayernorm = 1u << 4,  // input / pre-MLP norms
  // The whole MoE layer (router, dispatch, shared and routed experts, combine) checkpointed:
  // only its input is kept and its forward runs again before its backward (Megatron-Core
  // moe_layer.py: moe_layer_recompute wraps custom_forward in tensor_parallel.checkpoint).
  kRecomputeMoe = 1u << 5,
  // The shared experts of MoE layers (Megatron-Core moe_layer.py shared_experts_recompute).
  kRecomputeSharedExperts = 1u << 6,
};
// Parses one module name ("core_attn", "mlp", "mla_up_proj", "moe_act", "layernorm").
bool parse_recompute_module(const std::string& s, unsigned* bit);
// Training precision recipe (Transformer Engine / NeMo names):
//   bf16      every GEMM in BF16;
//   fp8_ds    FP8 E4M3/E5M2 with delayed scaling (amax history);
//   fp8_cs    FP8 with current (per-tensor, just-in-time) scaling;
//   fp8_blk   FP8 with 1×128 / 128×128 block scaling (DeepSeek-V3 recipe);
//   mxfp8     MXFP8 (E4M3, one E8M0 scale per 32 elements), Blackwell;
//   nvfp4     NVFP4 GEMMs (FP4 E2M1 + FP8 scale per 16), Blackwell.
enum class PrecisionRecipe { kBf16, kFp8Delayed, kFp8Current, kFp8Block, kMxfp8, kNvfp4 };
enum class PipelineSchedule { k1F1B, kInterleaved };

const char* to_string(Recompute r);
const char* to_string(PrecisionRecipe p);
const char* to_string(PipelineSchedule s);
bool parse_recompute(const std::string& s, Recompute* out);
bool parse_precision(const std::string& s, PrecisionRecipe* out);

struct ParallelConfig {
  int tp = 1;   // tensor parallel
  int pp = 1;   // pipeline parallel
  int cp = 1;   // context parallel (ring attention)
  int dp = 1;   // data parallel (derived: world / (tp · cp · pp))
  int vp = 1;   // virtual pipeline chunks per stage (interleaved schedule when > 1)
  int ep = 1;   // expert parallel
  int etp = 1;  // expert tensor parallel
  bool sequence_parallel = true;      // SP with TP > 1 (Megatron default with TP)
  bool distributed_optimizer = true;  // ZeRO-1: optimizer state sharded over DP
  bool fsdp = false;                  // ZeRO-3: weights, grads and optimizer sharded over DP
  int micro_batch = 1;                // sequences per micro-batch
  int global_batch = 0;               // sequences per step
  int seq_len = 0;                    // tokens per sequence
  Recompute recompute = Recompute::kNone;
  int recompute_layers = 0;  // full recompute: layers per stage recomputed (0 = all)
  unsigned recompute_modules = kRecomputeCoreAttn;  // selective recompute: what is recomputed
  PrecisionRecipe precision = PrecisionRecipe::kBf16;
  TaskSpec task;  // pre-training, SFT on packed sequences or LoRA (task.h)
  // Number of micro-batches each pipeline processes per step.
  int micro_batches() const { return global_batch / (micro_batch * dp); }
  int world() const { return tp * cp * pp * dp; }
  PipelineSchedule schedule() const {
    return vp > 1 ? PipelineSchedule::kInterleaved : PipelineSchedule::k1F1B;
  }
};

}  // namespace fleetsim
