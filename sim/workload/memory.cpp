// Memory estimator (see memory.h for the contract). Sizes in bytes per GPU.
//
// Parameters on a rank of stage s: its layers' non-expert parameters / tp, routed experts /
// (ep · etp), the input embedding / tp on stage 0, the LM head (+ final norm) / tp on the last
// stage (a tied model with pp > 1 keeps a copy of the embedding there, as Megatron does), MTP
// modules on the last stage.
//
// Bytes per parameter (Megatron-LM defaults with --bf16 and the distributed optimizer):
//   weights 2 (bf16). FP8 / MXFP8 / NVFP4 recipes keep bf16 weights; Transformer Engine casts
//     them to the low-precision format per GEMM and the casts are transient (freed after use;
//     no --fp8-param-gather), so they are not counted;
//   gradients 4: Megatron accumulates and reduces bf16 models' gradients in fp32
//     (accumulate_allreduce_grads_in_fp32 is forced on with --bf16); the buffer is not sharded
//     by the distributed optimizer (ZeRO-1), it is with FSDP;
//   master weights 4 and Adam m, v 4 + 4, sharded with the distributed optimizer over the
//     data-parallel group including context parallelism (dp · cp) for dense parameters and over
//     expert-data-parallel (dp · tp · cp / (ep · etp)) for expert parameters;
//   FSDP (ZeRO-3) shards weights and gradients the same way and adds one gathered layer (bf16).
//
// Activations per layer per micro-batch (Korthikanti et al. 2022, Sec. 4), bytes per token of
// the rank's s/cp tokens, bf16 tensors (2 B), 1-byte dropout masks:
//   norms      2h per norm input (norms_per_layer of them; 2 → 4h)
//   attn_in    2h   input of the q/k/v projections (norm output)
//   q, k       2·(heads·dqk) + 2·(kv_heads·dqk)  (MLA: + 2·(q_lora + kv_lora + rope) latents)
//   v          2·(kv_heads·dv)                   (MLA: 2·(heads·dv), V is up-projected)
//   core       unfused: softmax output 2·a·s, + dropout mask a·s and dropout output 2·a·s with
//              dropout (5as); flash: log-sum-exp 4·a
//   o_in       2·(heads·dv)  input of the output projection
//   mlp_in     2h   input of the MLP / router / shared experts (norm output)
//   mlp        plain: 2·ffn activation input + 2·ffn activation output; gated: 2·2ffn (gate and
//              up outputs) + 2·ffn (their product)
//   moe        top_k · (2h permuted input + inner + 2h expert output kept for the weighted
//              combine) + shared experts' inner + 4·E router logits (fp32)
//   masks      h after attention and h after the MLP, with dropout
// GPT (heads·dh = h, kv_heads = heads, ffn = 4h, plain, dropout, unfused):
//   4h + 2h + 4h + 2h + 5as + 2h + 2h + 16h + 2h = 34h + 5as, Korthikanti's sbh(34 + 5as/h).
// Tensor parallelism divides everything by tp with sequence parallelism; without it the norm
// inputs, attn_in, mlp_in and the masks (10h for GPT) stay whole: sbh(10 + 24/t + 5as/(ht)).
// Expert activations follow the tokens (/tp under SP). Context parallelism makes s → s/cp.
// Selective recompute drops `core`. Full recompute keeps the layer input (2h, /tp with SP) and
// needs one layer's activations of one micro-batch as working space during backward.
// recompute_layers > 0 limits full recompute to that many layers of the stage.
//
// In-flight micro-batches on stage s (Megatron's schedules): 1F1B min(pp − s, m); interleaved
// min((pp − s − 1)·2 + (vp − 1)·pp + 1, m·vp) (micro-batch, chunk) pairs — pp·vp + pp − 1 on
// stage 0 — each holding a chunk of layers_on_stage / vp layers (averaged over the chunks).
// The last stage also holds the fp32 logits of one micro-batch: 4·(s/cp)·b·vocab/tp.
//
// Communication buffers (assumption): with TP + SP, the all-gathered input of the current GEMM
// (2·(s/cp)·b·h), double-buffered for overlap; with EP, all-to-all dispatch and combine buffers
// (2 × top_k·(s/cp)·b/tp·h·2 B); with PP, send and receive buffers for activations and
// gradients (4 × (s/cp)·b·h/tp·2 B). Data-parallel reduce-scatter / all-gather run in place on
// the contiguous gradient and parameter buffers (Megatron DDP buckets are views), so add none.
// Not counted: CUDA context, allocator fragmentation, NCCL internal channels.
#include "workload/memory.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace fleetsim {
namespace {

constexpr int64_t kWeightBytes = 2;
constexpr int64_t kGradBytes = 4;
constexpr int64_t kMasterBytes = 4;
constexpr int64_t kAdamBytes = 8;

[[noreturn]] void bad(const std::string& msg) {
  throw InputError("", "", msg);
}

void check(const ModelSpec& m, const ParallelConfig& p) {
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
  if (is_moe(m)) {
    need(m.moe.experts % p.ep == 0, "ep (" + std::to_string(p.ep) + ") must divide experts (" +
                                        std::to_string(m.moe.experts) + ")");
    need((int64_t{p.tp} * p.cp * p.dp) % (int64_t{p.ep} * p.etp) == 0,
         "ep · etp (" + std::to_string(p.ep * p.etp) + ") must divide tp · cp · dp (" +
             std::to_string(p.tp * p.cp * p.dp) + ")");
  }
}

// The layers of `stage`: the explicit split of the options when given, else stage_layers().
std::vector<int> layers_of(const ModelSpec& m, const ParallelConfig& p, int stage,
                           const MemoryOptions& o) {
  const int V = p.pp * p.vp;
  if (static_cast<int>(o.layers_per_vstage.size()) != V) return stage_layers(m, p, stage);
  std::vector<int> first(V + 1, 0);
  for (int v = 0; v < V; ++v)
    first[v + 1] = first[v] + o.layers_per_vstage[v];
  std::vector<int> out;
  for (int c = 0; c < p.vp; ++c) {
    const int v = c * p.pp + stage;
    for (int i = first[v]; i < first[v + 1]; ++i)
      out.push_back(i);
  }
  return out;
}

struct StageParams {
  int64_t dense = 0;   // on this rank (after tp)
  int64_t expert = 0;  // on this rank (after ep · etp)
  int64_t largest_layer = 0;
};

StageParams stage_params(const ModelSpec& m, const ParallelConfig& p, int stage,
                         const MemoryOptions& o) {
  StageParams s;
  const int64_t eshard = int64_t{p.ep} * p.etp;
  auto add_layer = [&](const LayerParams& lp) {
    const int64_t dense =
        (lp.attention + lp.norms + lp.dense_mlp + lp.router + lp.shared_experts) / p.tp;
    const int64_t expert = lp.routed_experts / eshard;
    s.dense += dense;
    s.expert += expert;
    s.largest_layer = std::max(s.largest_layer, dense + expert);
  };
  for (int i : layers_of(m, p, stage, o))
    add_layer(layer_params(m, i));
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

int in_flight(const ParallelConfig& p, int stage) {
  const int64_t mb = p.global_batch > 0 ? std::max(1, p.micro_batches()) : int64_t{1} << 30;
  if (p.vp <= 1) return static_cast<int>(std::min<int64_t>(p.pp - stage, mb));
  const int64_t warmup = int64_t{p.pp - stage - 1} * 2 + int64_t{p.vp - 1} * p.pp;
  return static_cast<int>(std::min<int64_t>(warmup + 1, mb * p.vp));
}

}  // namespace

std::vector<int> stage_layers(const ModelSpec& m, const ParallelConfig& p, int stage) {
  const int blocks = p.pp * p.vp;
  const int base = m.layers / blocks;
  const int extra = m.layers % blocks;
  std::vector<int> out;
  for (int c = 0; c < p.vp; ++c) {
    const int block = c * p.pp + stage;
    const int start = block * base + std::min(block, extra);
    const int n = base + (block < extra ? 1 : 0);
    for (int i = start; i < start + n; ++i)
      out.push_back(i);
  }
  return out;
}

int64_t layer_activation_bytes(const ModelSpec& m, int layer, const ParallelConfig& p,
                               const MemoryOptions& o, Recompute recompute) {
  const AttentionSpec& a = m.attention;
  const int64_t h = m.hidden;
  const int64_t s = p.seq_len / p.cp;
  const int64_t tokens = s * p.micro_batch;
  const int64_t mask = o.dropout ? 1 : 0;
  const bool sp = p.sequence_parallel || p.tp == 1;

  // Per-token bytes kept whole on every TP rank without SP, and split over TP.
  const bool moe = layer >= m.layers ? is_moe(m) : is_moe_layer(m, layer);
  // Selective recompute of a module (Megatron's --recompute-modules): what it recomputes in
  // backward is not stored, only its input (which another term already counts).
  const bool selective = recompute == Recompute::kSelective;
  auto recomputed = [&](unsigned module) { return selective && (p.recompute_modules & module); };
  int64_t replicated = (recomputed(kRecomputeLayernorm) ? 0 : 2 * h * m.norms_per_layer) +
                       2 * h /*attn_in*/ + 2 * h /*mlp_in*/ + 2 * mask * h /*masks*/;
  int64_t split = 0;
  if (a.kind == AttentionKind::kMla) {
    const int64_t qk = int64_t{a.heads} * (a.qk_nope_head_dim + a.qk_rope_head_dim);
    // Latents, q, k, v (inputs of the fused attention) and its output. With mla_up_proj
    // recomputed, q, k and v are rebuilt from the latents.
    split +=
        2 * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim) +
        (recomputed(kRecomputeMlaUpProj) ? 0
                                         : 2 * qk + 2 * qk + 2 * int64_t{a.heads} * a.v_head_dim) +
        2 * int64_t{a.heads} * a.v_head_dim;
  } else {
    const int64_t qw = int64_t{a.heads} * a.head_dim;
    const int64_t kvw = int64_t{a.kv_heads} * a.head_dim;
    split += 2 * (qw + kvw) + 2 * kvw + 2 * qw;
  }
  if (recompute == Recompute::kNone || (selective && !recomputed(kRecomputeCoreAttn))) {
    split += o.flash_attention ? 4 * int64_t{a.heads} : (2 + 3 * mask) * int64_t{a.heads} * s;
  }
  const int64_t inner_per_width = m.mlp == MlpKind::kGated ? 6 : 4;
  // The activation function's output (2 B per width) is recomputed with moe_act.
  const int64_t expert_inner = inner_per_width - (recomputed(kRecomputeMoeAct) ? 2 : 0);
  const bool mlp_recomputed = recomputed(kRecomputeMlp);
  if (moe) {
    split += int64_t{m.moe.top_k} * (2 * h + expert_inner * m.moe.expert_ffn + 2 * h) +
             (mlp_recomputed
                  ? 0
                  : int64_t{m.moe.shared_experts} * inner_per_width * m.moe.shared_expert_ffn) +
             4 * int64_t{m.moe.experts};
  } else {
    split += mlp_recomputed ? 0 : inner_per_width * m.ffn;
  }
  const int64_t per_token = sp ? (replicated + split) / p.tp : replicated + split / p.tp;
  return per_token * tokens;
}

MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes) {
  return estimate_memory(m, p, hbm_bytes, MemoryOptions{});
}

MemoryBreakdown estimate_memory(const ModelSpec& m, const ParallelConfig& p, int64_t hbm_bytes,
                                const MemoryOptions& o) {
  check(m, p);
  const int64_t h = m.hidden;
  const int64_t s = p.seq_len / p.cp;
  const int64_t b = p.micro_batch;
  const bool sp = p.sequence_parallel || p.tp == 1;
  const int64_t dense_shard = (p.distributed_optimizer || p.fsdp) ? int64_t{p.dp} * p.cp : 1;
  const int64_t edp = int64_t{p.dp} * p.tp * p.cp / (int64_t{p.ep} * p.etp);
  const int64_t expert_shard = (p.distributed_optimizer || p.fsdp) ? edp : 1;

  MemoryBreakdown best;
  for (int stage = 0; stage < p.pp; ++stage) {
    MemoryBreakdown r;
    r.stage = stage;
    r.capacity = hbm_bytes;
    const StageParams sp_params = stage_params(m, p, stage, o);
    const int64_t sharded = sp_params.dense / dense_shard + sp_params.expert / expert_shard;
    r.params_on_rank = sp_params.dense + sp_params.expert;
    r.expert_params_on_rank = sp_params.expert;
    if (p.fsdp) {
      r.weights = kWeightBytes * (sharded + sp_params.largest_layer);
      r.gradients = kGradBytes * sharded;
    } else {
      r.weights = kWeightBytes * r.params_on_rank;
      r.gradients = kGradBytes * r.params_on_rank;
    }
    r.master_weights = kMasterBytes * sharded;
    r.optimizer = kAdamBytes * sharded;

    // Activations.
    const std::vector<int> layers = layers_of(m, p, stage, o);
    r.layers_on_stage = static_cast<int>(layers.size());
    r.in_flight_microbatches = in_flight(p, stage);
    const int full_layers =
        p.recompute != Recompute::kFull
            ? 0
            : (p.recompute_layers > 0 ? std::min<int>(p.recompute_layers, r.layers_on_stage)
                                      : r.layers_on_stage);
    const Recompute stored_mode =
        p.recompute == Recompute::kSelective ? Recompute::kSelective : Recompute::kNone;
    const int64_t layer_input = (sp ? 2 * h / p.tp : 2 * h) * s * b;
    int64_t per_microbatch = 0;  // one micro-batch through every layer of the stage
    int64_t working = 0;
    for (size_t k = 0; k < layers.size(); ++k) {
      const int64_t full = layer_activation_bytes(m, layers[k], p, o, stored_mode);
      if (static_cast<int>(k) < full_layers) {
        per_microbatch += layer_input;
        working = std::max(working, full);
      } else {
        per_microbatch += full;
      }
    }
    const int64_t chunks_held = r.in_flight_microbatches;
    r.activations = p.vp > 1 ? per_microbatch * chunks_held / p.vp : per_microbatch * chunks_held;
    r.activations += working;
    if (stage == p.pp - 1) {
      r.activations += 4 * s * b * m.vocab / p.tp;  // fp32 logits of one micro-batch
      for (int k = 0; k < m.mtp_layers; ++k) {
        r.activations +=
            layer_activation_bytes(m, m.layers, p, o, stored_mode) + 4 * s * b * m.vocab / p.tp;
      }
    }

    // Communication buffers (assumption in the file comment).
    if (p.tp > 1 && sp) r.comm_buffers += 2 * (2 * s * b * h);
    if (p.ep > 1 && is_moe(m)) r.comm_buffers += 2 * (int64_t{m.moe.top_k} * s * b / p.tp * h * 2);
    if (p.pp > 1) r.comm_buffers += 4 * (s * b * h / p.tp * 2);

    r.total =
        r.weights + r.gradients + r.optimizer + r.master_weights + r.activations + r.comm_buffers;
    r.fits = r.total <= r.capacity;
    if (stage == 0 || r.total > best.total) best = r;
  }
  return best;
}

}  // namespace fleetsim
