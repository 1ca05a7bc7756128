// Per-GPU HBM estimate of a training configuration: weights, gradients, optimizer state,
// activations and communication buffers of the most-loaded rank (the pipeline stage with the
// largest total; usually the first, which holds the embedding and the most in-flight
// micro-batches).
//
// Sources: Megatron-LM's distributed optimizer (bf16 weights, fp32 main grads, fp32 master
// weights and Adam m / v sharded over data-parallel ranks); Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models" (activation bytes per layer, sequence
// parallelism, selective / full recompute, pipeline in-flight micro-batches). The per-term
// accounting, generalised to GQA / MLA / gated MLPs / MoE, is written out in memory.cpp.
// All sizes are bytes per GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/model.h"
#include "workload/parallel.h"

namespace fleetsim {

struct MemoryOptions {
  // Attention through a fused (flash) kernel, as Transformer Engine / Megatron-Core run it: the
  // s×s softmax is never stored, only its log-sum-exp (4 B per head per token). false = the
  // unfused attention of Korthikanti et al. (softmax output, dropout mask and output stored).
  bool flash_attention = true;
  // Dropout masks stored (1 B per element): Korthikanti's GPT setting. Modern pre-training
  // recipes (Llama, NeMo configs) run with dropout 0 and store none.
  bool dropout = false;
  // Decoder layers of each virtual pipeline stage (pp·vp entries, Megatron's chunk order
  // v = c·pp + s), e.g. the step simulator's balanced split; empty = stage_layers().
  std::vector<int> layers_per_vstage;
};

struct MemoryBreakdown {
  int64_t weights = 0;         // bf16 parameters on the rank (+ one gathered layer with FSDP)
  int64_t gradients = 0;       // fp32 main gradients
  int64_t optimizer = 0;       // Adam m and v, fp32
  int64_t master_weights = 0;  // fp32 copy of the parameters
  int64_t activations = 0;     // saved for backward, all in-flight micro-batches
  int64_t comm_buffers = 0;    // TP / EP / PP staging buffers (see memory.cpp)
  int64_t total = 0;
  int64_t capacity = 0;  // the HBM given
  bool fits = false;     // total <= capacity
  int stage = 0;         // pipeline stage reported (0-based)
  int layers_on_stage = 0;
  // Forward passes whose activations are held at the peak: micro-batches for 1F1B; for the
  // interleaved schedule (micro-batch, model chunk) pairs, each holding layers_on_stage / vp
  // layers.
  int in_flight_microbatches = 0;
  int64_t params_on_rank = 0;         // parameters held (unsharded view), dense + expert
  int64_t expert_params_on_rank = 0;  // of which routed-expert parameters
};

// Throws InputError when the configuration cannot be laid out (pp > layers, ep not dividing
// the experts, ep·etp not dividing tp·cp·dp, ...). O(layers · pp).
MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes);
MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes,
                                const MemoryOptions& options);

// Activation bytes one rank keeps for one micro-batch of one decoder layer without recompute
// (the Korthikanti sbh·(34 + 5as/h) generalisation), and with selective recompute.
int64_t layer_activation_bytes(const ModelSpec& m, int layer, const ParallelConfig& p,
                               const MemoryOptions& options, Recompute recompute);

// Decoder layers held by pipeline stage `stage` (0-based), model chunks in Megatron's order:
// chunk c of stage s holds the (c·pp + s)-th block of layers / (pp·vp) layers; a remainder goes
// one layer each to the first blocks.
std::vector<int> stage_layers(const ModelSpec& m, const ParallelConfig& p, int stage);

}  // namespace fleetsim
