// Memory estimator (sim/workload/memory.cpp), framework options against hand calculations:
// gradient and optimizer precision, offloading, FP8 weights and activations, the loss
// implementation, MoE permutation and recompute, expandable segments, the fit suggestions,
// Megatron's embedding / loss accounting in the pipeline split, QK-norm and Llama 3.1 405B in
// the Llama 3 paper's layout. The layouts themselves (Korthikanti et al., recompute, pipeline,
// optimizer sharding) are in test_memory.cpp.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"
#include "workload/memory.h"
#include "workload/memory_advice.h"

#include <algorithm>
#include <vector>

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("framework options: gradients, precision-aware optimizer, offload") {
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p;
  p.seq_len = 8192;
  p.global_batch = 8;
  p.dp = 8;
  MemoryOptions o;
  const MemoryBreakdown base = estimate_memory(m, p, 1LL << 40, o);
  const int64_t n = 8'030'261'248LL;
  const int64_t shard = n / 8;
  CHECK(base.gradients == 4 * n);
  CHECK(base.master_weights == 4 * shard);
  CHECK(base.optimizer == 8 * shard);
  // grad_reduce_in_fp32 = False: bf16 main grads.
  o.grad_bytes = 2;
  CHECK(estimate_memory(m, p, 1LL << 40, o).gradients == 2 * n);
  // Precision-aware optimizer with bf16 moments (Megatron-Bridge's DeepSeek-V3 recipe): 2 + 2.
  o.exp_avg_bytes = 2;
  o.exp_avg_sq_bytes = 2;
  CHECK(estimate_memory(m, p, 1LL << 40, o).optimizer == 4 * shard);
  // Optimizer CPU offload of 3/4 of the state: a quarter of master weights and moments stay.
  o.optimizer_offload_fraction = 0.75;
  const MemoryBreakdown off = estimate_memory(m, p, 1LL << 40, o);
  CHECK(off.master_weights == shard);
  CHECK(off.optimizer == shard);
  // Without the distributed optimizer nothing is sharded.
  p.distributed_optimizer = false;
  o = MemoryOptions{};
  CHECK(estimate_memory(m, p, 1LL << 40, o).optimizer == 8 * n);
}

TEST_CASE("FP8 weights and FP8 saved activations") {
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p = one_gpu(8192);
  MemoryOptions o;
  // Linear weights: 32 layers · (q, k, v, o 4096 · (4096 + 1024 + 1024 + 4096) + SwiGLU
  // 3 · 4096 · 14336) = 32 · 218,103,808 = 6,979,321,856; the rest (embedding, head, norms)
  // 1,050,939,392.
  const int64_t linear = 6'979'321'856LL, rest = 1'050'939'392LL;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * (linear + rest));
  // FP8 (per-tensor current scaling): TE caches the row- and column-wise FP8 copies, 2 B.
  p.precision = PrecisionRecipe::kFp8Current;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * (linear + rest) + 2 * linear);
  // --fp8-param-gather: the FP8 copies are the weights.
  o.fp8_param_gather = true;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * rest + 2 * linear);
  // MXFP8: each copy 1 + 1/32 B.
  p.precision = PrecisionRecipe::kMxfp8;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * rest + linear * 66 / 32);
  // Saved activations per token and layer in FP8 (per-tensor): attn_in and mlp_in 1 B per
  // hidden (−2 · 4096), the attention output kept by flash attention in bf16 plus the output
  // projection's FP8 copy (+4096), the fc2 input in FP8 (−14336): 139,392 − 18,432 = 120,960.
  p.precision = PrecisionRecipe::kFp8Current;
  CHECK(layer_activation_bytes(m, 0, p, o, Recompute::kNone) == 120'960LL * 8192);
}

TEST_CASE("activation offloading and the loss implementation") {
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p = one_gpu(8192);
  MemoryOptions o;
  const int64_t base = layer_activation_bytes(m, 0, p, o, Recompute::kNone);
  // attn_norm: the attention norm's input, 2 · 4096 B per token.
  o.offload_modules = kOffloadAttnNorm;
  CHECK(base - layer_activation_bytes(m, 0, p, o, Recompute::kNone) == 2 * 4096 * 8192LL);
  // core_attn: q, k (2 · (4096 + 1024)), v (2 · 1024) and the log-sum-exp (4 · 32); the
  // attention output stays (it is also the output projection's input).
  o.offload_modules = kOffloadCoreAttn;
  CHECK(base - layer_activation_bytes(m, 0, p, o, Recompute::kNone) ==
        (10'240LL + 2'048 + 128) * 8192);
  o.offload_modules = kOffloadCoreAttn | kOffloadAttnProj;
  CHECK(base - layer_activation_bytes(m, 0, p, o, Recompute::kNone) ==
        (10'240LL + 2'048 + 128 + 8'192) * 8192);
  // Transformer Engine's cross entropy: 2 B per logit instead of 6.
  o.offload_modules = 0;
  o.cross_entropy = CrossEntropyImpl::kTe;
  const MemoryBreakdown r = estimate_memory(m, p, 1LL << 40, o);
  CHECK(r.working == std::max<int64_t>(2LL * 8192 * 128256, 6LL * 14336 * 8192));
  unsigned bit = 0;
  CHECK(parse_offload_module("expert_fc1", &bit));
  CHECK(bit == kOffloadExpertFc1);
  CHECK_FALSE(parse_offload_module("mlp", &bit));
}

TEST_CASE("MoE: token factor, permute fusion, expert activations") {
  // Mixtral 8x7B, one MoE layer, tp 1: per routed copy 2h (input) + 4·ffn (fc1 output,
  // gated) + 2·ffn (activation output) + 4 (the fp32 routing probability the weighted
  // activation keeps: Megatron-Core >= 0.13 applies the probabilities between fc1 and fc2) =
  // 2 · 4096 + 6 · 14336 + 4 = 94,212 B; top-2.
  const ModelSpec m = zoo("mixtral-8x7b");
  ParallelConfig p = data_expert_parallel(8, 8, 4096, 8);
  MemoryOptions o;
  const int64_t one = layer_activation_bytes(m, 0, p, o, Recompute::kNone);
  // The busiest EP rank receiving 1.5× the balanced copies (capacity factor 1.5, padded):
  // 0.5 · 2 = 1 more copy per token.
  o.moe_token_factor = 1.5;
  CHECK(layer_activation_bytes(m, 0, p, o, Recompute::kNone) - one == 94'212LL * 4096);
  // Megatron-Core <= 0.12 (probabilities applied in the unpermute): the unpermute keeps the
  // 2h expert output instead of the 4 B probability: 2 copies · (2 · 4096 − 4) more per token.
  o.moe_token_factor = 1.0;
  o.moe_probs_in_unpermute = true;
  CHECK(layer_activation_bytes(m, 0, p, o, Recompute::kNone) - one == 2LL * (8192 - 4) * 4096);
  o.moe_probs_in_unpermute = false;
  // moe_act recompute drops the activation output of each copy: 2 copies · 2 B · 14336 per
  // token (core attention, not in the list, stays stored).
  p.recompute = Recompute::kSelective;
  p.recompute_modules = kRecomputeMoeAct;
  CHECK(one - layer_activation_bytes(m, 0, p, o, Recompute::kSelective) == 2LL * 2 * 14336 * 4096);
  // Without moe_permute_fusion and with the probabilities applied in the unpermute, its
  // weighted copy (top_k · 2h per token) adds to the working memory; with them applied in the
  // activation, both unpermutes only scatter.
  p.recompute = Recompute::kNone;
  const MemoryBreakdown fused = estimate_memory(m, p, 1LL << 40, o);
  o.moe_permute_fusion = false;
  CHECK(estimate_memory(m, p, 1LL << 40, o).working == fused.working);
  o.moe_probs_in_unpermute = true;
  const MemoryBreakdown unfused = estimate_memory(m, p, 1LL << 40, o);
  o.moe_permute_fusion = true;
  const MemoryBreakdown fused_old = estimate_memory(m, p, 1LL << 40, o);
  if (!fused_old.peak_in_loss && !unfused.peak_in_loss) {
    CHECK(unfused.working - fused_old.working == 2LL * 2 * 4096 * 4096);
  }
  // Expert-dp sharding of the optimizer over dp · tp · cp / (ep · etp) = 1: whole.
  CHECK(fused.optimizer == 8 * ((fused.params_on_rank - fused.expert_params_on_rank) / 8 +
                                fused.expert_params_on_rank));
}

TEST_CASE("expandable segments: reserved equals allocated") {
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p;
  p.seq_len = 4096;
  p.global_batch = 8;
  p.dp = 8;
  MemoryOptions o = megatron_bridge_perf_options();
  const MemoryBreakdown r = estimate_memory(m, p, 1LL << 40, o);
  CHECK(r.fragmentation == 0);
  CHECK(r.reserved == r.total);
  CHECK(r.gradients == 2 * r.params_on_rank);
}

TEST_CASE("fit suggestions: the cheapest single changes, each with its peak") {
  // Llama 3 8B on 8 GPUs (dp 8, distributed optimizer), 8192 tokens, micro-batch 2, fp32
  // grads, 120 GB of HBM. By hand (n = 8,030,261,248 parameters):
  //   persistent 2n + 4n + 12n/8 = 60,226,959,360; activations 139,392 B · 16,384 tokens ·
  //   32 layers = 73,081,552,896; loss 6 · 16,384 · 128,256 = 12,608,077,824 →
  //   145,916,590,080 allocated, ×1.052 + 1 GiB: 154.6 GB — does not fit.
  //   Micro-batch 1: 60,226,959,360 + 36,540,776,448 + 6,304,038,912 = 103,071,774,720,
  //   reserved + 1 GiB = 109.5 GB: fits.
  //   Selective recompute (core_attn) saves 128 B per token and layer (67 MB): no; with the
  //   MLP too, 128 + 6 · 14336 B: 145,916,590,080 − 86,144 · 16,384 · 32 = 100,752,324,608: fits.
  //   pp 2 (dp 4): stage 0 holds 16 layers + embedding = 4,015,128,576 parameters at
  //   6 + 12/4 B = 36,136,157,184, 2 micro-batches of 16 layers = 73,081,552,896, one MLP's
  //   gradients 6 · 14336 · 16384 = 1,409,286,144, PP buffers 4 · 8192 · 2 · 4096 · 2 =
  //   536,870,912 → 111,163,867,136 allocated, 118.0 GB with reserve and device: fits.
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p;
  p.dp = 8;
  p.seq_len = 8192;
  p.micro_batch = 2;
  p.global_batch = 16;
  const int64_t hbm = 120'000'000'000LL;
  const MemoryOptions o;
  const MemoryBreakdown now = estimate_memory(m, p, hbm, o);
  CHECK(now.total == 145'916'590'080LL);
  CHECK_FALSE(now.fits);
  const std::vector<MemoryFix> fixes = memory_fixes(m, p, hbm, o);
  REQUIRE(fixes.size() >= 3);
  CHECK(fixes[0].change == "micro-batch 2 -> 1");
  CHECK(fixes[0].result.total == 103'071'774'720LL);
  CHECK(fixes[1].change == "selective recompute (core_attn, mlp)");
  CHECK(fixes[1].result.total == 100'752'324'608LL);
  CHECK(fixes[2].change == "pp 1 -> 2 (dp 8 -> 4)");
  CHECK(fixes[2].result.stage == 0);
  CHECK(fixes[2].result.total == 111'163'867'136LL);
  for (const MemoryFix& f : fixes) {
    CHECK(f.result.fits);
    CHECK(estimate_memory(m, f.par, hbm, f.options).total == f.result.total);
  }
  CHECK(format_memory_fixes(fixes).find("  micro-batch 2 -> 1: ") == 0);
  // A configuration that fits needs no change.
  CHECK(memory_fixes(m, p, 1LL << 40, o).empty());
}

TEST_CASE("layer-wise CPU activation offloading") {
  // Llama 3 8B, one GPU, 8192 tokens: offloading 20 of the 32 layers keeps 12 layers'
  // activations; the layer being brought back (139,392 B per token) joins the working memory,
  // whose largest part was the loss (6 · 8192 · 128256).
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p = one_gpu(8192);
  MemoryOptions o;
  o.cpu_offload_layers = 20;
  const MemoryBreakdown r = estimate_memory(m, p, 1LL << 40, o);
  const int64_t layer = 139'392LL * 8192;
  CHECK(r.activations == 12 * layer);
  CHECK(r.working == std::max<int64_t>(6LL * 8192 * 128256, layer + 6LL * 14336 * 8192));
}

TEST_CASE("embedding and loss counted in the pipeline split (Megatron's account_for_*)") {
  // Llama 3.1 405B, 126 layers + embedding + loss = 128 over pp · vp virtual stages.
  const std::vector<int> v4 = embedding_loss_split(126, 16, 4, true, true);
  REQUIRE(v4.size() == 64);
  CHECK(v4.front() == 1);  // 2 per virtual stage, one of them the embedding
  CHECK(v4.back() == 1);   // and the loss
  CHECK(std::count(v4.begin(), v4.end(), 2) == 62);
  const std::vector<int> v8 = embedding_loss_split(126, 16, 8, true, true);
  REQUIRE(v8.size() == 128);
  CHECK(v8.front() == 0);
  CHECK(v8.back() == 0);
  CHECK(std::count(v8.begin(), v8.end(), 1) == 126);
  CHECK(embedding_loss_split(126, 8, 8, true, false).empty());  // 127 over 64: Megatron asserts
  CHECK(embedding_loss_split(80, 4, 5, true, true).empty());    // 82 over 20
  CHECK(embedding_loss_split(80, 4, 1, false, false) == std::vector<int>(4, 20));

  // Stage 0 of TP 4 / PP 16 / VP 4 at 384 micro-batches: the interleaved warm-up holds
  // (16 − 1)·2 + 3·16 + 1 = 79 forward passes, 31 of chunk 0 (passes 0-15 and 64-78) and 16 of
  // each other chunk; with the embedding counted, chunk 0 holds 1 layer and the others 2:
  // 31 + 3 · 16 · 2 = 127 layer passes (158 with 2 layers in every chunk). Stage 1 holds
  // 14·2 + 48 + 1 = 77 passes of 2-layer chunks: 154.
  const ModelSpec m = zoo("llama3.1-405b");
  ParallelConfig p;
  p.tp = 4;
  p.pp = 16;
  p.vp = 4;
  p.dp = 4;
  p.seq_len = 8192;
  p.global_batch = 1536;
  MemoryOptions o;
  o.layers_per_vstage = v4;
  CHECK(in_flight_per_chunk(p, 0) == std::vector<int>({31, 16, 16, 16}));
  const int64_t layer = layer_activation_bytes(m, 0, p, o, Recompute::kNone);
  CHECK(estimate_memory_stage(m, p, 1LL << 40, o, 0).activations == 127 * layer);
  CHECK(estimate_memory_stage(m, p, 1LL << 40, o, 1).activations == 154 * layer);
  CHECK(estimate_memory_stage(m, p, 1LL << 40, o, 0).layers_on_stage == 7);
}

TEST_CASE("non-TN FP8 GEMMs (Blackwell): per-tensor FP8 weights kept once") {
  // Llama 3 8B on one GPU (the linear / other parameter split of "FP8 weights and FP8 saved
  // activations"): with --fp8-param-gather, Hopper keeps each per-tensor FP8 weight and its
  // transpose (2 B), Blackwell one copy (1 B); MXFP8 keeps both scalings everywhere.
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p = one_gpu(8192);
  p.precision = PrecisionRecipe::kFp8Current;
  MemoryOptions o;
  o.fp8_param_gather = true;
  const int64_t linear = 6'979'321'856LL, rest = 1'050'939'392LL;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * rest + 2 * linear);
  o.non_tn_fp8_gemm = true;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * rest + linear);
  p.precision = PrecisionRecipe::kFp8Delayed;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * rest + linear);
  p.precision = PrecisionRecipe::kMxfp8;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * rest + linear * 66 / 32);
  // Without the parameter gather the bf16 weights stay and the one FP8 copy is added.
  p.precision = PrecisionRecipe::kFp8Current;
  o.fp8_param_gather = false;
  CHECK(estimate_memory(m, p, 1LL << 40, o).weights == 2 * (linear + rest) + linear);
  CHECK(gpu_non_tn_fp8_gemm("B200"));
  CHECK(gpu_non_tn_fp8_gemm("GB200"));
  CHECK(gpu_non_tn_fp8_gemm("B300"));
  CHECK(gpu_non_tn_fp8_gemm("GB300"));
  CHECK_FALSE(gpu_non_tn_fp8_gemm("H100"));
  CHECK_FALSE(gpu_non_tn_fp8_gemm("H200"));
}

TEST_CASE("QK-norm keeps the normed inputs of q and k") {
  // Qwen3-30B-A3B: 32 heads, 4 KV heads, head_dim 128. The per-head RMSNorms keep q and k
  // before the norm, 2 · (32 + 4) · 128 = 9216 B per token, and an fp32 1/rms per head,
  // 4 · 36 = 144 B; bf16, tp 1, 4096 tokens.
  ModelSpec m = zoo("qwen3-30b-a3b");
  REQUIRE(m.attention.qk_norm);
  ParallelConfig p = data_expert_parallel(8, 8, 4096, 8);
  const MemoryOptions o;
  const int64_t with = layer_activation_bytes(m, 0, p, o, Recompute::kNone);
  m.attention.qk_norm = false;
  CHECK(with - layer_activation_bytes(m, 0, p, o, Recompute::kNone) == (9216LL + 144) * 4096);
}

TEST_CASE("recompute of the whole MoE layer (recompute_modules moe)") {
  // Qwen3-30B-A3B, MoE layer 0, tp 1, one 4096-token micro-batch, bf16. Megatron-Core's
  // moe_layer.py checkpoints router, dispatch, experts and combine, so per token the layer
  // drops: 8 routed copies × (2h input + 4·f fc1 output (gated) + 2·f activation output + 4 B
  // probability) = 8 × (4096 + 3072 + 1536 + 4) = 69,664 B, and the fp32 router logits
  // 4 · 128 = 512 B: 70,176 B. The input it keeps (bf16, 2h) is mlp_in, already counted.
  const ModelSpec m = zoo("qwen3-30b-a3b");
  REQUIRE(m.hidden == 2048);
  REQUIRE(m.moe.expert_ffn == 768);
  REQUIRE(m.moe.top_k == 8);
  REQUIRE(m.moe.shared_experts == 0);
  ParallelConfig p = data_expert_parallel(8, 8, 4096, 8);
  const MemoryOptions o;
  p.recompute = Recompute::kSelective;
  p.recompute_modules = kRecomputeLayernorm;  // a module the MoE part does not depend on
  const int64_t kept = layer_activation_bytes(m, 0, p, o, Recompute::kSelective);
  p.recompute_modules = kRecomputeLayernorm | kRecomputeMoe;
  const int64_t moe = layer_activation_bytes(m, 0, p, o, Recompute::kSelective);
  CHECK(kept - moe == 70'176LL * 4096);
  // FP8 (current scaling): the copies' GEMM inputs are 1 B, so 8 × (2048 + 3072 + 768 + 4) +
  // 512 = 47,648 B are dropped, and the checkpoint keeps the bf16 norm output (2h) instead of
  // its 1 B quantized copy: 2048 B more.
  p.precision = PrecisionRecipe::kFp8Current;
  p.recompute_modules = kRecomputeLayernorm;
  const int64_t kept8 = layer_activation_bytes(m, 0, p, o, Recompute::kSelective);
  p.recompute_modules = kRecomputeLayernorm | kRecomputeMoe;
  CHECK(kept8 - layer_activation_bytes(m, 0, p, o, Recompute::kSelective) ==
        (47'648LL - 2048) * 4096);
  // In backward the rebuilt tensors sit beside their gradients: the working memory grows by
  // exactly the bytes recompute dropped (bf16; every layer is the same MoE layer). Stage 0 of
  // pp 2 (no loss there): 24 layers, one micro-batch (8 sequences over dp 8) in flight.
  p.precision = PrecisionRecipe::kBf16;
  p.pp = 2;
  p.recompute_modules = kRecomputeLayernorm;
  const MemoryBreakdown a = estimate_memory_stage(m, p, 1LL << 40, o, 0);
  p.recompute_modules = kRecomputeLayernorm | kRecomputeMoe;
  const MemoryBreakdown b = estimate_memory_stage(m, p, 1LL << 40, o, 0);
  REQUIRE(a.in_flight_microbatches == 1);
  CHECK(b.working - a.working == 70'176LL * 4096);
  CHECK(a.activations - b.activations == 24 * 70'176LL * 4096);
  // The module name parses as Megatron's.
  unsigned bit = 0;
  REQUIRE(parse_recompute_module("moe", &bit));
  CHECK(bit == kRecomputeMoe);
}

TEST_CASE("Llama 3.1 405B in the Llama 3 paper's 16K-GPU layout on H100") {
  // Dubey et al. 2024, Table 4: TP 8, PP 16, DP 128, 16 sequences of 8192 tokens per
  // data-parallel rank: m = 16 micro-batches. Megatron-Core's interleaved warm-up on stage 0,
  // (16 − 1)·2 + (8 − 1)·16 = 142, exceeds m·vp = 128, so every forward runs before the first
  // backward: 16 passes of each of the 8 one-layer chunks. With m = 512 (the plan's 512-GPU,
  // DP 4 candidates) the warm-up holds 142 + 1 passes, in groups of 16 per chunk: chunks 0-7
  // get 16 each and chunk 0 of the next round the remaining 15.
  const ModelSpec m = zoo("llama3.1-405b");
  ParallelConfig p;
  p.tp = 8;
  p.pp = 16;
  p.vp = 8;
  p.dp = 128;
  p.seq_len = 8192;
  p.micro_batch = 1;
  p.global_batch = 2048;
  p.sequence_parallel = true;
  p.distributed_optimizer = true;
  const std::vector<int> meta = in_flight_per_chunk(p, 0);
  CHECK(meta == std::vector<int>(8, 16));
  ParallelConfig plan = p;
  plan.dp = 4;
  const std::vector<int> warm = in_flight_per_chunk(plan, 0);
  CHECK(warm == std::vector<int>{31, 16, 16, 16, 16, 16, 16, 16});
  // It fits the 79.11 GiB an H100 80GB reports with the recipes' memory options (bf16
  // gradients, TE cross entropy, expandable segments), not with Megatron-LM's defaults.
  const int64_t h100 = static_cast<int64_t>(79.11 * (1 << 30));
  MemoryOptions o = megatron_bridge_perf_options();
  const MemoryBreakdown r = estimate_memory(m, p, h100, o);
  CHECK(r.in_flight_microbatches == 128);
  CHECK(r.fits);
  CHECK_FALSE(estimate_memory(m, p, h100, MemoryOptions{}).fits);
  CHECK_FALSE(estimate_memory(m, plan, h100, o).fits);
}
