// Memory estimator (sim/workload/memory.cpp) against hand calculations: Korthikanti et al. 2022
// (GPT-3 175B, TP 8, PP 8, sequence parallelism), Llama 3 8B on one GPU, optimizer sharding,
// pipeline in-flight micro-batches, the recompute ordering and the stage split. Framework
// options (precision, offloading, FP8, MoE, fit suggestions) are in test_memory_options.cpp.
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

namespace {
// Korthikanti et al.'s setting: GPT-3 175B, s = 2048, b = 1, t = 8, p = 8, SP on, 64 GPUs,
// unfused attention with dropout.
ParallelConfig gpt3_tp8_pp8() {
  ParallelConfig p;
  p.tp = 8;
  p.pp = 8;
  p.dp = 1;
  p.seq_len = 2048;
  p.micro_batch = 1;
  p.global_batch = 64;  // 64 micro-batches ≥ pp: stage 0 holds pp of them
  p.distributed_optimizer = true;
  return p;
}
MemoryOptions korthikanti() {
  MemoryOptions o;
  o.flash_attention = false;
  o.dropout = true;
  return o;
}
}  // namespace

TEST_CASE("GPT-3 175B TP8 PP8: Korthikanti activation memory of the first stage") {
  const ModelSpec m = zoo("gpt3-175b");
  ParallelConfig p = gpt3_tp8_pp8();
  // Korthikanti Sec. 4.2.3: stage 0 holds p micro-batches of L/p layers = L layers' activations:
  // s·b·h·L·(34/t + 5as/(ht)). sbh = 2048·12288 = 25,165,824; 34/8 = 4.25;
  // 5·96·2048/(12288·8) = 10 → 25,165,824 · 14.25 · 96 = 34,426,847,232 B.
  MemoryBreakdown r = estimate_memory(m, p, 80'000'000'000LL, korthikanti());
  CHECK(r.stage == 0);
  CHECK(r.layers_on_stage == 12);
  CHECK(r.in_flight_microbatches == 8);
  CHECK(r.activations == 34'426'847'232LL);
  // Selective recompute drops the 5as/h term: 25,165,824 · 4.25 · 96 = 10,267,656,192 B.
  p.recompute = Recompute::kSelective;
  r = estimate_memory(m, p, 80'000'000'000LL, korthikanti());
  CHECK(r.activations == 10'267'656'192LL);
  // Full recompute keeps 2sbh/t per layer: 2 · 25,165,824 · 96 / 8 = 603,979,776 B. Working
  // space in backward: one layer recomputed, 25,165,824 · 14.25 = 358,612,992 B, plus the
  // gradients of its MLP's two saved tensors (fc1 output and GeLU output, 2 · 2 · 4h per
  // token / t): 16 · 12288 / 8 · 2048 = 50,331,648 B.
  p.recompute = Recompute::kFull;
  r = estimate_memory(m, p, 80'000'000'000LL, korthikanti());
  CHECK(r.activations == 603'979'776LL);
  CHECK(r.working == 358'612'992LL + 50'331'648LL);
}

TEST_CASE("GPT-3 175B TP8 PP8: parameter state of the first stage") {
  const ModelSpec m = zoo("gpt3-175b");
  const ParallelConfig p = gpt3_tp8_pp8();
  const MemoryBreakdown r = estimate_memory(m, p, 80'000'000'000LL, korthikanti());
  // One layer: attention 4h² + qkv bias 3h + o bias h = 604,028,928; MLP 8h² + 4h + h =
  // 1,208,020,992; two LayerNorms 2·2h = 49,152 → 1,812,099,072, /8 = 226,512,384.
  // Embedding (50257 + 2048 learned positions)·12288 = 642,723,840, /8 = 80,340,480.
  // 12 · 226,512,384 + 80,340,480 = 2,798,489,088 parameters on the rank.
  CHECK(r.params_on_rank == 2'798'489'088LL);
  CHECK(r.weights == 2 * 2'798'489'088LL);
  CHECK(r.gradients == 4 * 2'798'489'088LL);
  // dp = 1: nothing to shard over.
  CHECK(r.master_weights == 4 * 2'798'489'088LL);
  CHECK(r.optimizer == 8 * 2'798'489'088LL);
  // Buffers: TP all-gather 2 · 2sbh = 100,663,296; PP 4 · sbh/8 · 2 = 25,165,824.
  CHECK(r.comm_buffers == 100'663'296LL + 25'165'824LL);
  CHECK(r.total == r.weights + r.gradients + r.master_weights + r.optimizer + r.activations +
                       r.working + r.comm_buffers);
}

TEST_CASE("Llama 3 8B on one GPU at 8192 tokens") {
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p = one_gpu(8192);
  const MemoryBreakdown r = estimate_memory(m, p, 80'000'000'000LL);
  // 8,030,261,248 parameters: 2 + 4 + 4 + 8 = 18 B each = 144,544,702,464 B of state.
  CHECK(r.params_on_rank == 8'030'261'248LL);
  CHECK(r.weights + r.gradients + r.master_weights + r.optimizer == 18 * 8'030'261'248LL);
  // Activations per token and layer (flash attention, no dropout): norms 4h = 16,384; attn_in
  // and mlp_in 2h each = 16,384; q,k 2·(4096 + 1024) = 10,240; v 2·1024 = 2,048; o_in 8,192;
  // log-sum-exp 4·32 = 128; SwiGLU 6·14336 = 86,016 → 139,392 B. × 8192 tokens × 32 layers
  // = 36,540,776,448 B.
  CHECK(r.activations == 36'540'776'448LL);
  // The peak's transient is the loss (Megatron's native cross entropy: bf16 logits + fp32
  // softmax, 6 B per logit): 6 · 8192 · 128256 = 6,304,038,912 B, more than one layer's MLP
  // gradients (6 · 14336 · 8192 = 704,643,072 B).
  CHECK(r.working == 6'304'038'912LL);
  CHECK(r.peak_in_loss);
  CHECK(r.comm_buffers == 0);
  CHECK(r.total == 144'544'702'464LL + 36'540'776'448LL + 6'304'038'912LL);
  // Reserved: + 5.2 % fragmentation; the device needs 1 GiB more (context, NCCL).
  CHECK(r.fragmentation == r.total * 52 / 1000);
  CHECK(r.reserved == r.total + r.fragmentation);
  CHECK(r.device_overhead == int64_t{1} << 30);
  CHECK_FALSE(r.fits);  // 197 GB on an 80 GB GPU
  CHECK_FALSE(estimate_memory(m, p, r.reserved + (int64_t{1} << 30) - 1).fits);
  CHECK(estimate_memory(m, p, r.reserved + (int64_t{1} << 30)).fits);
}

TEST_CASE("recompute modes order the activation memory") {
  const ModelSpec m = zoo("llama3-70b");
  ParallelConfig p;
  p.tp = 8;
  p.pp = 4;
  p.dp = 2;
  p.seq_len = 8192;
  p.global_batch = 64;
  int64_t act[3];
  for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    p.recompute = rc;
    act[static_cast<int>(rc)] = estimate_memory(m, p, 1LL << 40, korthikanti()).activations;
  }
  CHECK(act[0] > act[1]);
  CHECK(act[1] > act[2]);
  // With flash attention selective recompute saves only the log-sum-exp (4·64 B per token per
  // layer on 8 TP ranks): 32 B · 8192 tokens · 20 layers · 4 in flight = 20,971,520 B.
  p.recompute = Recompute::kNone;
  const int64_t none = estimate_memory(m, p, 1LL << 40).activations;
  p.recompute = Recompute::kSelective;
  CHECK(none - estimate_memory(m, p, 1LL << 40).activations == 20'971'520LL);
}

TEST_CASE("pipeline in-flight micro-batches: 1F1B and interleaved") {
  const ModelSpec m = zoo("llama3-70b");
  ParallelConfig p;
  p.tp = 8;
  p.pp = 4;
  p.dp = 1;
  p.seq_len = 4096;
  p.global_batch = 16;                                                  // 16 micro-batches
  CHECK(estimate_memory(m, p, 1LL << 40).in_flight_microbatches == 4);  // min(pp, m)
  p.global_batch = 2;
  CHECK(estimate_memory(m, p, 1LL << 40).in_flight_microbatches == 2);
  // Interleaved, vp = 2: Megatron's warm-up (pp − 1)·2 + (vp − 1)·pp plus one = pp·vp + pp − 1
  // = 11 chunk forward passes of 80/(4·2) = 10 layers each on stage 0.
  p.global_batch = 16;
  p.vp = 2;
  const MemoryBreakdown r = estimate_memory(m, p, 1LL << 40);
  CHECK(r.in_flight_microbatches == 11);
  CHECK(r.layers_on_stage == 20);
  p.vp = 1;
  const MemoryBreakdown flat = estimate_memory(m, p, 1LL << 40);
  // Same layers, activations × 11/(2·4) = 1.375 (Korthikanti: 1 + (p − 1)/(p·v)).
  CHECK(static_cast<double>(r.activations) / static_cast<double>(flat.activations) ==
        Approx(1.375).epsilon(1e-6));
}

TEST_CASE("distributed optimizer shards dense state over dp·cp, experts over expert-dp") {
  const ModelSpec m = zoo("mixtral-8x7b");
  ParallelConfig p = data_expert_parallel(8, 8, 4096, 64);  // tp = pp = 1
  const MemoryBreakdown r = estimate_memory(m, p, 1LL << 40);
  // Experts: 32 layers · 8 experts / ep 8 = one expert per layer: 32 · 176,160,768 =
  // 5,637,144,576 parameters; expert-dp = 8·1·1/8 = 1, so their 12 B stay whole.
  CHECK(r.expert_params_on_rank == 5'637'144'576LL);
  const int64_t dense = r.params_on_rank - r.expert_params_on_rank;
  CHECK(r.master_weights + r.optimizer == 12 * (dense / 8) + 12 * 5'637'144'576LL);
  p.distributed_optimizer = false;
  const MemoryBreakdown plain = estimate_memory(m, p, 1LL << 40);
  CHECK(plain.master_weights + plain.optimizer == 12 * plain.params_on_rank);
  // FSDP: bf16 weights sharded too, plus one gathered layer.
  p.fsdp = true;
  const MemoryBreakdown fsdp = estimate_memory(m, p, 1LL << 40);
  CHECK(fsdp.weights < r.weights);
  CHECK(fsdp.gradients == 4 * (dense / 8 + 5'637'144'576LL));
}

TEST_CASE("stage layers split a remainder over the first blocks") {
  const ModelSpec m = zoo("deepseek-v3");
  ParallelConfig p;
  p.pp = 4;
  // 61 = 16 + 15 + 15 + 15.
  CHECK(stage_layers(m, p, 0).size() == 16);
  CHECK(stage_layers(m, p, 1).front() == 16);
  CHECK(stage_layers(m, p, 3).back() == 60);
}

TEST_CASE("impossible layouts are input errors") {
  const ModelSpec m = zoo("mixtral-8x7b");
  ParallelConfig p;
  p.seq_len = 4096;
  p.ep = 3;
  p.dp = 3;
  CHECK_THROWS_WITH(estimate_memory(m, p, 1LL << 40), Catch::Contains("must divide experts (8)"));
  p.ep = 1;
  p.pp = 64;
  CHECK_THROWS_WITH(estimate_memory(m, p, 1LL << 40),
                    Catch::Contains("exceeds the model's layers"));
}

TEST_CASE("selective recompute modules drop what they recompute") {
  // Llama 3 8B, one GPU, 8192 tokens: recomputing the MLP drops its inner activations, 6 bytes
  // per FFN width per token for a gated MLP (up and gate outputs and the SwiGLU output, BF16):
  // 6 · 14336 · 8192 bytes per layer. Recomputing the norms drops 2 norms · 2 B · 4096 per token.
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p = one_gpu(8192);
  p.recompute = Recompute::kSelective;
  const MemoryOptions o;
  p.recompute_modules = kRecomputeCoreAttn;
  const int64_t base = layer_activation_bytes(m, 0, p, o, Recompute::kSelective);
  p.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
  CHECK(base - layer_activation_bytes(m, 0, p, o, Recompute::kSelective) ==
        int64_t{6} * 14336 * 8192);
  p.recompute_modules = kRecomputeCoreAttn | kRecomputeLayernorm;
  CHECK(base - layer_activation_bytes(m, 0, p, o, Recompute::kSelective) ==
        int64_t{2} * 2 * 4096 * 8192);
  // DeepSeek-V3 MoE layer: moe_act drops the activation output of each of the top-8 copies,
  // 2 B · 2048 per copy; mla_up_proj drops q, k (128 heads · 192) and v (128 · 128), BF16.
  const ModelSpec d = zoo("deepseek-v3");
  p.seq_len = 4096;
  p.recompute_modules = kRecomputeCoreAttn;
  const int64_t moe_base = layer_activation_bytes(d, 10, p, o, Recompute::kSelective);
  p.recompute_modules = kRecomputeCoreAttn | kRecomputeMoeAct;
  CHECK(moe_base - layer_activation_bytes(d, 10, p, o, Recompute::kSelective) ==
        int64_t{8} * 2 * 2048 * 4096);
  p.recompute_modules = kRecomputeCoreAttn | kRecomputeMlaUpProj;
  CHECK(moe_base - layer_activation_bytes(d, 10, p, o, Recompute::kSelective) ==
        (int64_t{2} * 128 * 192 * 2 + int64_t{2} * 128 * 128) * 4096);
  // `mlp` leaves MoE layers alone (Megatron-Core transformer_layer.py sets recompute_mlp only
  // where the MLP is not a MoELayer); `shared_experts` drops the shared expert's fc1 output
  // (gated, 4 B per width) and activation output (2 B): 6 · 2048 B per token.
  p.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
  CHECK(layer_activation_bytes(d, 10, p, o, Recompute::kSelective) == moe_base);
  p.recompute_modules = kRecomputeCoreAttn | kRecomputeSharedExperts;
  CHECK(moe_base - layer_activation_bytes(d, 10, p, o, Recompute::kSelective) ==
        int64_t{6} * 2048 * 4096);
  unsigned bit = 0;
  REQUIRE(parse_recompute_module("shared_experts", &bit));
  CHECK(bit == kRecomputeSharedExperts);
}

TEST_CASE("interleaved schedule: passes per chunk and the peak's moment") {
  ParallelConfig p;
  p.pp = 4;
  p.vp = 2;
  p.seq_len = 4096;
  p.global_batch = 16;  // 16 micro-batches
  // Stage 0: (4 − 1)·2 + (2 − 1)·4 + 1 = 11 forwards in groups of pp = 4 per chunk:
  // k = 0..3 chunk 0, 4..7 chunk 1, 8..10 chunk 0.
  CHECK(in_flight_per_chunk(p, 0) == std::vector<int>{7, 4});
  // Last stage: 0·2 + 4 + 1 = 5: four of chunk 0, one of chunk 1.
  CHECK(in_flight_per_chunk(p, 3) == std::vector<int>{4, 1});
  // Fewer micro-batches than the warm-up: at most m · vp passes (m = 1: 2 passes, chunk 0).
  p.global_batch = 1;
  CHECK(in_flight_per_chunk(p, 0) == std::vector<int>{2, 0});
  p.vp = 1;
  p.global_batch = 16;
  CHECK(in_flight_per_chunk(p, 1) == std::vector<int>{3});  // 1F1B: pp − s

  // Uneven chunks (a layout putting 2 layers in chunk 0 and 8 in chunk 1 of stage 0): the
  // activations follow each chunk's own passes: 7 · 2 + 4 · 8 = 46 layer-passes, not
  // 11 · 10 / 2 = 55.
  const ModelSpec m = zoo("llama3-8b");
  p.vp = 2;
  p.tp = 1;
  MemoryOptions o;
  o.layers_per_vstage = {2, 4, 4, 4, 8, 4, 3, 3};  // v = c·pp + s, 32 layers
  const MemoryBreakdown r = estimate_memory_stage(m, p, 1LL << 40, o, 0);
  CHECK(r.layers_on_stage == 10);
  CHECK(r.in_flight_microbatches == 11);
  CHECK(r.activations == 46 * layer_activation_bytes(m, 0, p, o, Recompute::kNone));
  // The moment: forward k = 10 is micro-batch (10 / 8)·4 + 10 % 4 = 6 of chunk 0; then the
  // first backward, micro-batch 0 of the last chunk.
  CHECK(r.peak_forward_microbatch == 6);
  CHECK(r.peak_forward_chunk == 0);
  CHECK(r.peak_backward_microbatch == 0);
  CHECK(r.peak_backward_chunk == 1);
}

TEST_CASE("embedding and output layer: the stage imbalance") {
  // Llama 3 8B, pp 2, no vp: stage 0 holds the embedding (128256 · 4096 = 525,336,576
  // parameters) and 2 micro-batches in flight; stage 1 the LM head (525,336,576 + final norm
  // 4096) and the loss. Moving one layer from stage 0 to stage 1 (Megatron's
  // account_for_embedding_in_pipeline_split) moves one layer's parameters and its activations
  // of 2 micro-batches.
  const ModelSpec m = zoo("llama3-8b");
  ParallelConfig p;
  p.pp = 2;
  p.dp = 1;
  p.seq_len = 8192;
  p.global_batch = 8;
  MemoryOptions o;
  const MemoryBreakdown s0 = estimate_memory_stage(m, p, 1LL << 40, o, 0);
  const MemoryBreakdown s1 = estimate_memory_stage(m, p, 1LL << 40, o, 1);
  CHECK(s1.params_on_rank - s0.params_on_rank == 4096);
  const int64_t layer = layer_activation_bytes(m, 0, p, o, Recompute::kNone);
  CHECK(s0.activations == 2 * 16 * layer);
  CHECK(s1.activations == 1 * 16 * layer);
  o.layers_per_vstage = {15, 17};
  const MemoryBreakdown t0 = estimate_memory_stage(m, p, 1LL << 40, o, 0);
  CHECK(t0.activations == 2 * 15 * layer);
  CHECK(s0.params_on_rank - t0.params_on_rank == layer_params(m, 0).total());
}

TEST_CASE("a dense model with etp that does not divide tp·cp·dp is refused, not divided by zero") {
  // Found by fuzz_validate (fuzz/regressions/validate/dense-etp-15.csv): a Llama 3 70B row with
  // TP 4, PP 8 on 64 GPUs (dp 2) and etp 15 made the expert data-parallel size 8 / 15 = 0.
  ParallelConfig p = gpt3_tp8_pp8();
  p.tp = 4;
  p.dp = 2;
  p.etp = 15;
  const ModelSpec m = zoo("gpt3-175b");
  try {
    (void)estimate_memory(m, p, 1LL << 40, korthikanti());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.message() == "ep · etp (15) must divide tp · cp · dp (8)");
  }
  p.etp = 2;  // 8 / 2 = 4 expert data-parallel ranks: accepted
  CHECK(estimate_memory(m, p, 1LL << 40, korthikanti()).total > 0);
}
