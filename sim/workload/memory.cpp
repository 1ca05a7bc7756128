// Memory estimator (see memory.h for the contract; activations in memory_activations.cpp).
// Sizes in bytes per GPU.
//
// Parameters on a rank of stage s: its layers' non-expert parameters / tp, routed experts /
// (ep · etp), the input embedding / tp on stage 0, the LM head (+ final norm) / tp on the last
// stage (a tied model with pp > 1 keeps a copy of the embedding there, as Megatron does), MTP
// modules on the last stage.
//
// Bytes per parameter (Megatron-LM with --bf16 and the distributed optimizer,
// docs/source/api-guide/dist_optimizer.md; Megatron-Core optimizer/distrib_optimizer.py):
//   weights 2 (bf16). FP8 / MXFP8 / NVFP4 recipes also keep the quantized copies of the linear
//     layers' weights Transformer Engine casts once per step and caches for the other
//     micro-batches (TE Linear's is_first_microbatch weight workspace, used by Megatron-Core's
//     TE wrappers unless the transpose cache is disabled): row-wise and column-wise, g B each
//     (g = 1 per-tensor FP8, 1 + 1/32 MXFP8 / FP8 block, 0.5 + 1/16 NVFP4). With
//     --fp8-param-gather the primary weights are those FP8 copies and the bf16 one is gone;
//   gradients grad_bytes (4 = fp32 main grads, 2 with grad_reduce_in_fp32=False); the buffer is
//     not sharded by the distributed optimizer (ZeRO-1), it is with FSDP;
//   master weights master_bytes and Adam m, v exp_avg_bytes + exp_avg_sq_bytes (4 + 4 + 4, or
//     bf16 moments with the precision-aware optimizer), sharded with the distributed optimizer
//     over the data-parallel group including context parallelism (dp · cp) for dense
//     parameters and over expert-data-parallel (dp · tp · cp / (ep · etp)) for expert
//     parameters; optimizer_offload_fraction of them lives in host memory;
//   FSDP (ZeRO-3) shards weights and gradients the same way and adds one gathered layer (bf16).
//
// Activations: each model chunk's layers times the forward passes of that chunk the stage holds
// at its peak (in_flight_per_chunk, Megatron-Core's schedules). Full recompute keeps the layer
// input (2h, /tp with SP) of the first recompute_layers layers of each chunk (Megatron's block
// method; 0 = all) and rebuilds one layer's activations in backward.
// Layer-wise CPU offloading (Megatron-Core's --cpu-offloading, --cpu-offloading-num-layers N,
// activations only; megatron/core/cpu_offload.py): the first N layers of each model chunk keep
// their saved tensors in host memory between forward and backward; the layer whose tensors are
// brought back needs them on the GPU (counted with the working memory).
// Working memory at the peak (transient, on top of the held activations): the backward of one
// layer allocates the gradients of its MLP / MoE block's saved tensors before it frees them
// (the same bytes as those tensors), plus a full-recompute layer's rebuilt activations; on the
// last stage the loss: the logits of one micro-batch, 2 B each, plus the fp32 softmax (4 B)
// with Megatron's native cross entropy (MTP depths keep theirs until backward). Without
// --moe-permute-fusion and with the probabilities applied in the unpermute (moe_probs_in_unpermute,
// Megatron-Core <= 0.12), the unpermute's probability-weighted copy.
//
// Communication buffers (assumption): with TP + SP, the all-gathered input of the current GEMM
// (2·(s/cp)·b·h), double-buffered for overlap; with EP, all-to-all dispatch and combine buffers
// (2 × top_k·(s/cp)·b/tp·h·2 B); with PP, send and receive buffers for activations and
// gradients (4 × (s/cp)·b·h/tp·2 B). Data-parallel reduce-scatter / all-gather run in place on
// the contiguous gradient and parameter buffers (Megatron DDP buckets are views), so add none.
//
// Reserved memory: the caching allocator keeps the segments it carved; a block freed by one
// request size is reused by others only when it is large enough, so max_memory_reserved exceeds
// max_memory_allocated. fleetsim does not replay the allocator: it takes one global fraction of
// the allocated peak, kFragmentationPerMille = 5.2 %, the mean measured reserved / allocated − 1
// of the 17 SimuMax runs that report both over all ranks (2.8 %-9.3 %, larger with tp 1;
// validation/memory-measured.csv, docs/validation.md). With expandable_segments freed pages are
// remapped for any size: no fragmentation term.
#include "workload/memory.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace fleetsim {
namespace {

constexpr int64_t kWeightBytes = 2;
// Reserved above allocated, per-mille of the allocated peak (file comment).
constexpr int64_t kFragmentationPerMille = 52;

[[noreturn]] void bad(const std::string& msg) {
  throw InputError("", "", msg);
}

void check(const ModelSpec& m, const ParallelConfig& p, const MemoryOptions& o) {
  const auto need = [](bool ok, const std::string& msg) {
    if (!ok) bad(msg);
  };
  need(p.tp >= 1 && p.pp >= 1 && p.cp >= 1 && p.dp >= 1 && p.vp >= 1 && p.ep >= 1 && p.etp >= 1,
       "parallel sizes tp, pp, cp, dp, vp, ep, etp must be >= 1");
  need(p.micro_batch >= 1, "micro_batch must be >= 1, got " + std::to_string(p.micro_batch));
  need(p.seq_len >= 1, "seq_len must be >= 1, got " + std::to_string(p.seq_len));
  need(p.seq_len % p.cp == 0,
       "cp (" + std::to_string(p.cp) + ") must divide seq_len (" + std::to_string(p.seq_len) + ")");
  // The embedding and the loss may take virtual stages of their own (Megatron layouts).
  need(p.pp * p.vp <= m.layers + 2, "pp · vp (" + std::to_string(p.pp * p.vp) +
                                        ") exceeds the model's layers (" +
                                        std::to_string(m.layers) + ") + embedding + loss");
  need(o.grad_bytes >= 1 && o.master_bytes >= 0 && o.exp_avg_bytes >= 0 && o.exp_avg_sq_bytes >= 0,
       "memory byte sizes must be >= 0 (gradients >= 1)");
  need(o.optimizer_offload_fraction >= 0 && o.optimizer_offload_fraction <= 1,
       "optimizer_offload_fraction must be in [0, 1]");
  need(o.moe_token_factor >= 1, "moe_token_factor must be >= 1");
  need(o.cpu_offload_layers >= 0, "cpu_offload_layers must be >= 0");
  // Also for a dense model: the expert data-parallel size tp·cp·dp / (ep·etp) divides by it.
  need((int64_t{p.tp} * p.cp * p.dp) % (int64_t{p.ep} * p.etp) == 0,
       "ep · etp (" + std::to_string(p.ep * p.etp) + ") must divide tp · cp · dp (" +
           std::to_string(p.tp * p.cp * p.dp) + ")");
  if (is_moe(m)) {
    need(m.moe.experts % p.ep == 0, "ep (" + std::to_string(p.ep) + ") must divide experts (" +
                                        std::to_string(m.moe.experts) + ")");
  }
}

// The layers of each model chunk of `stage`: the explicit split of the options when given,
// else stage_layers().
std::vector<std::vector<int>> chunk_layers(const ModelSpec& m, const ParallelConfig& p, int stage,
                                           const MemoryOptions& o) {
  const int V = p.pp * p.vp;
  std::vector<int> count(V, 0);
  if (static_cast<int>(o.layers_per_vstage.size()) == V) {
    count = o.layers_per_vstage;
  } else {
    for (int v = 0; v < V; ++v)
      count[v] = m.layers / V + (v < m.layers % V ? 1 : 0);
  }
  std::vector<int> first(V + 1, 0);
  for (int v = 0; v < V; ++v)
    first[v + 1] = first[v] + count[v];
  std::vector<std::vector<int>> out(p.vp);
  for (int c = 0; c < p.vp; ++c) {
    const int v = c * p.pp + stage;
    for (int i = first[v]; i < first[v + 1]; ++i)
      out[c].push_back(i);
  }
  return out;
}

struct StageParams {
  int64_t dense = 0;   // on this rank (after tp)
  int64_t expert = 0;  // on this rank (after ep · etp)
  int64_t linear = 0;  // of which GEMM weights of decoder / MTP layers (FP8-castable)
  int64_t largest_layer = 0;
  int64_t adapter = 0;  // LoRA adapter parameters on this rank (after tp; workload/task.h)
};

StageParams stage_params(const ModelSpec& m, const ParallelConfig& p,
                         const std::vector<std::vector<int>>& chunks, int stage) {
  StageParams s;
  const int64_t eshard = int64_t{p.ep} * p.etp;
  auto add_layer = [&](const LayerParams& lp) {
    const int64_t dense =
        (lp.attention + lp.norms + lp.dense_mlp + lp.router + lp.shared_experts) / p.tp;
    const int64_t expert = lp.routed_experts / eshard;
    s.dense += dense;
    s.expert += expert;
    s.linear += (lp.attention + lp.dense_mlp + lp.shared_experts) / p.tp + expert;
    s.largest_layer = std::max(s.largest_layer, dense + expert);
  };
  for (const auto& chunk : chunks)
    for (int i : chunk) {
      add_layer(layer_params(m, i));
      s.adapter += lora_adapter_params(m, p.task, i) / p.tp;
    }
  if (stage == 0) s.dense += embedding_params(m) / p.tp;
  if (stage == p.pp - 1) {
    s.dense += output_params(m) / p.tp;
    if (m.tied_embeddings && p.pp > 1) s.dense += m.vocab * m.hidden / p.tp;
    for (int k = 0; k < m.mtp_layers; ++k) {
      add_layer(layer_params(m, m.layers));
      const int64_t h = m.hidden;
      s.dense += (2 * h * h + 3 * h * (m.norm == NormKind::kLayer ? 2 : 1)) / p.tp;
    }
  }
  return s;
}

// Quantized weight copy bytes per linear parameter, in 32nds (row-wise + column-wise; one
// per-tensor FP8 copy where the GPU runs non-TN FP8 GEMMs).
int64_t fp8_weight_32nds(PrecisionRecipe r, bool non_tn) {
  switch (r) {
    case PrecisionRecipe::kBf16:
      return 0;
    case PrecisionRecipe::kFp8Delayed:
    case PrecisionRecipe::kFp8Current:
      return (non_tn ? 1 : 2) * 32;
    case PrecisionRecipe::kFp8Block:
    case PrecisionRecipe::kMxfp8:
      return 2 * 33;
    case PrecisionRecipe::kNvfp4:
      return 2 * 18;
  }
  return 0;
}

void parameter_state(const ModelSpec& m, const ParallelConfig& p, const MemoryOptions& o,
                     const StageParams& sp, MemoryBreakdown* r) {
  const int64_t dense_shard = (p.distributed_optimizer || p.fsdp) ? int64_t{p.dp} * p.cp : 1;
  const int64_t edp = int64_t{p.dp} * p.tp * p.cp / (int64_t{p.ep} * p.etp);
  const int64_t expert_shard = (p.distributed_optimizer || p.fsdp) ? edp : 1;
  // LoRA (task.h): the base weights are frozen, so only the adapters have main gradients,
  // master weights and Adam state; the adapters' own weights are bf16.
  const bool lora = p.task.frozen_base();
  const int64_t sharded =
      lora ? sp.adapter / dense_shard : sp.dense / dense_shard + sp.expert / expert_shard;
  (void)m;
  r->params_on_rank = sp.dense + sp.expert;
  r->expert_params_on_rank = sp.expert;
  if (p.fsdp) {
    r->weights = kWeightBytes * (sharded + sp.largest_layer);
    r->gradients = o.grad_bytes * sharded;
  } else {
    const int64_t q32 = fp8_weight_32nds(p.precision, o.non_tn_fp8_gemm);
    const int64_t bf16_params =
        o.fp8_param_gather && q32 > 0 ? r->params_on_rank - sp.linear : r->params_on_rank;
    r->weights = kWeightBytes * bf16_params + q32 * sp.linear / 32;
    r->gradients = o.grad_bytes * r->params_on_rank;
  }
  if (lora) {
    r->weights += kWeightBytes * sp.adapter;
    r->gradients = o.grad_bytes * sp.adapter;
  }
  const double on_gpu = 1.0 - o.optimizer_offload_fraction;
  r->master_weights =
      static_cast<int64_t>(static_cast<double>(o.master_bytes * sharded) * on_gpu + 0.5);
  r->optimizer = static_cast<int64_t>(
      static_cast<double>((o.exp_avg_bytes + o.exp_avg_sq_bytes) * sharded) * on_gpu + 0.5);
}

// Gradient tensors of one layer's MLP / MoE block in backward (the bytes of its saved inner
// tensors, with the selective-recompute and offload choices ignored: the gradients exist
// whatever was stored).
int64_t backward_working(const ModelSpec& m, int layer, const ParallelConfig& p,
                         const MemoryOptions& o) {
  ParallelConfig q = p;
  q.recompute_modules = 0;
  MemoryOptions none = o;
  none.offload_modules = 0;
  const int64_t all = layer_activation_bytes(m, layer, q, none, Recompute::kNone);
  q.recompute_modules = kRecomputeMlp | kRecomputeMoeAct | kRecomputeSharedExperts;
  // The MLP part: what recomputing the MLP (dense and shared) and the expert activation drops,
  // plus for MoE layers the routed copies' remaining tensors.
  const int64_t without_mlp = layer_activation_bytes(m, layer, q, none, Recompute::kSelective);
  int64_t work = all - without_mlp;
  const bool moe = layer >= m.layers ? is_moe(m) : is_moe_layer(m, layer);
  // A checkpointed MoE layer (kRecomputeMoe) rebuilds its saved tensors before its backward:
  // they exist beside their gradients.
  if (moe && p.recompute == Recompute::kSelective && (p.recompute_modules & kRecomputeMoe)) {
    ParallelConfig kept = p;
    kept.recompute_modules &= ~kRecomputeMoe;
    work += layer_activation_bytes(m, layer, kept, o, Recompute::kSelective) -
            layer_activation_bytes(m, layer, p, o, Recompute::kSelective);
  }
  if (moe) {
    const int64_t tokens = int64_t{p.seq_len / p.cp} * p.micro_batch;
    const double copies = m.moe.top_k * o.moe_token_factor;
    const int64_t per_copy = 4 * m.hidden + 4 * m.moe.expert_ffn;  // in/out + fc1 output
    work += static_cast<int64_t>(copies * static_cast<double>(per_copy * tokens / p.tp));
  }
  return work;
}

}  // namespace

bool gpu_non_tn_fp8_gemm(const std::string& gpu_model) {
  return gpu_model.find("B200") != std::string::npos || gpu_model.find("B300") != std::string::npos;
}

MemoryOptions megatron_bridge_perf_options() {
  MemoryOptions o;
  o.grad_bytes = 2;
  o.cross_entropy = CrossEntropyImpl::kTe;
  o.expandable_segments = true;
  return o;
}

// size-exception: the per-stage accounting reads best in one place, term by term
MemoryBreakdown estimate_memory_stage(const ModelSpec& m, const ParallelConfig& p,
                                      int64_t hbm_bytes, const MemoryOptions& o, int stage) {
  check(m, p, o);
  if (stage < 0 || stage >= p.pp) bad("stage " + std::to_string(stage) + " outside [0, pp)");
  const int64_t h = m.hidden;
  const int64_t s = p.seq_len / p.cp;
  const int64_t b = p.micro_batch;
  const bool sp = p.sequence_parallel || p.tp == 1;
  const bool last = stage == p.pp - 1;

  MemoryBreakdown r;
  r.stage = stage;
  r.capacity = hbm_bytes;
  const std::vector<std::vector<int>> chunks = chunk_layers(m, p, stage, o);
  parameter_state(m, p, o, stage_params(m, p, chunks, stage), &r);

  // Activations held: each chunk's layers times its in-flight forward passes.
  const std::vector<int> passes = in_flight_per_chunk(p, stage);
  const Recompute stored_mode =
      p.recompute == Recompute::kSelective ? Recompute::kSelective : Recompute::kNone;
  const int64_t layer_input = (sp ? 2 * h / p.tp : 2 * h) * s * b;
  int64_t working = 0;
  for (int c = 0; c < p.vp; ++c) {
    r.layers_on_stage += static_cast<int>(chunks[c].size());
    r.in_flight_microbatches += passes[c];
    const int full_layers =
        p.recompute != Recompute::kFull
            ? 0
            : (p.recompute_layers > 0
                   ? std::min<int>(p.recompute_layers, static_cast<int>(chunks[c].size()))
                   : static_cast<int>(chunks[c].size()));
    int64_t chunk_bytes = 0;
    for (size_t k = 0; k < chunks[c].size(); ++k) {
      const int layer = chunks[c][k];
      const int64_t stored = layer_activation_bytes(m, layer, p, o, stored_mode);
      int64_t work = backward_working(m, layer, p, o);
      if (static_cast<int>(k) < full_layers) {
        chunk_bytes += layer_input;
        work += stored;
      } else if (static_cast<int>(k) < o.cpu_offload_layers) {
        work += stored;  // in host memory; the layer being copied back needs its bytes
      } else {
        chunk_bytes += stored;
      }
      working = std::max(working, work);
    }
    r.activations += chunk_bytes * passes[c];
  }
  // The last stage: MTP depths (in the last chunk) and the loss.
  int64_t loss = 0;
  if (last) {
    const int64_t logits = s * b * m.vocab / p.tp;
    const int64_t held = (o.cross_entropy == CrossEntropyImpl::kTe ? 2 : 4) * logits;
    for (int k = 0; k < m.mtp_layers; ++k) {
      r.activations +=
          (layer_activation_bytes(m, m.layers, p, o, stored_mode) + held) * passes[p.vp - 1];
    }
    loss = (o.cross_entropy == CrossEntropyImpl::kTe ? 2 : 6) * logits;
  }
  if (!o.moe_permute_fusion && o.moe_probs_in_unpermute && is_moe(m)) {
    working += static_cast<int64_t>(m.moe.top_k * o.moe_token_factor *
                                    static_cast<double>(2 * h * s * b / p.tp));
  }
  r.peak_in_loss = loss > working;
  r.working = std::max(working, loss);

  // Communication buffers (assumption in the file comment).
  if (p.tp > 1 && sp) r.comm_buffers += 2 * (2 * s * b * h);
  if (p.ep > 1 && is_moe(m)) r.comm_buffers += 2 * (int64_t{m.moe.top_k} * s * b / p.tp * h * 2);
  if (p.pp > 1) r.comm_buffers += 4 * (s * b * h / p.tp * 2);

  // The moment: the last warm-up forward, then the first backward (last chunk, micro-batch 0).
  int k = r.in_flight_microbatches - 1;
  r.peak_forward_chunk = p.vp > 1 ? (k / p.pp) % p.vp : 0;
  r.peak_forward_microbatch = p.vp > 1 ? (k / (p.pp * p.vp)) * p.pp + k % p.pp : k;
  r.peak_backward_microbatch = 0;
  r.peak_backward_chunk = p.vp - 1;

  r.total = r.persistent() + r.activations + r.working + r.comm_buffers;
  r.fragmentation = o.expandable_segments ? 0 : r.total * kFragmentationPerMille / 1000;
  r.reserved = r.total + r.fragmentation;
  r.device_overhead = kDeviceOverheadBytes;
  r.fits = r.reserved + r.device_overhead <= r.capacity;
  return r;
}

MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes) {
  return estimate_memory(m, p, hbm_bytes, MemoryOptions{});
}

MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes,
                                const MemoryOptions& o) {
  MemoryBreakdown best;
  for (int stage = 0; stage < p.pp; ++stage) {
    const MemoryBreakdown r = estimate_memory_stage(m, p, hbm_bytes, o, stage);
    if (stage == 0 || r.reserved > best.reserved) best = r;
  }
  return best;
}

int64_t memory_floor(const ModelSpec& m, const ParallelConfig& p, const MemoryOptions& o) {
  check(m, p, o);
  const int64_t dense_shard = int64_t{p.dp} * p.cp;
  const int64_t expert_shard = int64_t{p.dp} * p.tp * p.cp / (int64_t{p.ep} * p.etp);
  // With parameter gather, a linear weight's row-wise quantized copy alone, in 32nds of a byte:
  // one copy of fp8_weight_32nds (per-tensor FP8 on a non-TN GPU keeps only that one).
  const int64_t q32_min = o.fp8_param_gather
                              ? fp8_weight_32nds(p.precision, true) /
                                    (p.precision == PrecisionRecipe::kFp8Delayed ||
                                             p.precision == PrecisionRecipe::kFp8Current
                                         ? 1
                                         : 2)
                              : 0;
  int64_t floor = 0;
  for (int stage = 0; stage < p.pp; ++stage) {
    const StageParams sp = stage_params(m, p, chunk_layers(m, p, stage, o), stage);
    const int64_t params = sp.dense + sp.expert;
    const int64_t sharded = sp.dense / dense_shard + sp.expert / expert_shard;
    int64_t bytes = 0;
    if (p.fsdp) {
      bytes = kWeightBytes * sharded + o.grad_bytes * sharded;
    } else {
      const int64_t bf16 = q32_min > 0 ? params - sp.linear : params;
      bytes = kWeightBytes * bf16 + q32_min * sp.linear / 32 + o.grad_bytes * params;
    }
    if (p.task.frozen_base()) bytes -= o.grad_bytes * (p.fsdp ? sharded : params);  // no grads
    floor = std::max(floor, bytes);
  }
  return floor + kDeviceOverheadBytes;
}

}  // namespace fleetsim
